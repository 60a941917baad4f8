// seam/step_kind.h — the kinds of step a plan is made of, in one table.
//
// Each row states a kind's name (as plans print and parse it), whether it
// moves data between ranks, how its bytes are counted, whether it completes
// an owed sum and which buffers it may act on. The enum, Name, the parser
// and every predicate below are generated from the rows, so a new kind is a
// new row here (and what the binder, verifier and interpreter do with it).
//
//   if (Spec(step.kind).completes) ...
#pragma once

#include <array>
#include <string_view>

namespace seam {

// The buffer a step acts on.
enum class Operand {
  kValue,     // the output a stage hands on, until it is added
  kResidual,  // the residual stream
  kInput,     // the normed input a stage computes on
  kLogits,    // the LM head's output, [rows, vocabulary]
  kKeys,      // what an attention caches of its rows' tokens: their keys and values
  kQueries,   // an attention's query heads of its rows, rotary applied
  kPartials,  // an attention's partial outputs: per head a maximum, a sum, the weighted values
};

// How a step's bytes per token are counted from its logical buffer (the
// ungathered side for a sum, the gathered side for a gather).
enum class Traffic {
  kNone,         // local work: nothing moves
  kAllReduce,    // 2 (n-1)/n of the buffer
  kShare,        // (n-1)/n of the buffer: reduce-scatter, all-gather, all-to-all
  kWhole,        // point to point: the whole buffer
  kAtTheSender,  // a receive: counted where it was sent
  kAlongside,    // (n-1)/n of every member's rows: gathered beside this rank's own rows, which stay
};

// Which operands a kind may act on, as a set.
struct Operands {
  bool value = false;
  bool residual = false;
  bool input = false;
  bool logits = false;
  bool keys = false;
  bool queries = false;
  bool partials = false;
  constexpr bool Has(Operand o) const {
    switch (o) {
      case Operand::kValue: return value;
      case Operand::kResidual: return residual;
      case Operand::kInput: return input;
      case Operand::kLogits: return logits;
      case Operand::kKeys: return keys;
      case Operand::kQueries: return queries;
      case Operand::kPartials: return partials;
    }
    return false;
  }
};
inline constexpr Operands kValueOnly{.value = true};
inline constexpr Operands kResidualOnly{.residual = true};
inline constexpr Operands kValueOrResidual{.value = true, .residual = true};
inline constexpr Operands kAnyOperand{.value = true, .residual = true, .input = true};
inline constexpr Operands kInputOnly{.input = true};
inline constexpr Operands kLogitsOnly{.logits = true};
inline constexpr Operands kAnyBuffer{.value = true, .residual = true, .input = true, .logits = true};
inline constexpr Operands kKeysOnly{.keys = true};
inline constexpr Operands kQueriesOnly{.queries = true};
inline constexpr Operands kPartialsOnly{.partials = true};

// X(enumerator, name, traffic, completes an owed sum, operands)
#define SEAM_STEP_KINDS(X)                                                                                          \
  X(kAllReduce, "ar", Traffic::kAllReduce, true, kValueOnly)                 /* complete a sum in place */          \
  X(kReduceScatter, "rs", Traffic::kShare, true, kValueOnly)                 /* complete it onto finer rows */      \
  X(kReduceScatterV, "rsv", Traffic::kShare, true, kValueOnly)               /* the same, rows per DP group */      \
  X(kAllGather, "ag", Traffic::kShare, false, kAnyOperand)                   /* gather rows back over a group */    \
  X(kDispatch, "a2a-dispatch", Traffic::kShare, false, kAnyOperand)          /* a2a MoE: rows to their experts */   \
  X(kCombine, "a2a-combine", Traffic::kShare, false, kAnyOperand)            /* a2a MoE: expert outputs back */     \
  X(kSlice, "slice", Traffic::kNone, false, kAnyBuffer)                      /* take this rank's rows locally */    \
  X(kStartResidual, "start-residual", Traffic::kNone, false, kValueOnly)     /* the input becomes residual */       \
  X(kAdd, "add", Traffic::kNone, false, kResidualOnly)                       /* residual += value (consumed) */     \
  X(kNorm, "norm", Traffic::kNone, false, kResidualOnly)                     /* input = norm(residual) */           \
  X(kAllReduceAddNorm, "ar+add+norm", Traffic::kAllReduce, true, kValueOnly) /* fused, same bits */                 \
  X(kCompute, "compute", Traffic::kNone, false, kAnyOperand)                 /* the stage itself: input -> value */ \
  X(kEmbed, "embed", Traffic::kNone, false, kValueOnly)               /* the tokens' rows of this rank's table */   \
  X(kLmHead, "lm-head", Traffic::kNone, false, kInputOnly)            /* input -> this rank's vocabulary columns */ \
  X(kGatherVocab, "ag-vocab", Traffic::kShare, false, kLogitsOnly)    /* gather the columns of the vocabulary */    \
  X(kLeave, "leave", Traffic::kNone, false, kValueOnly)               /* the owed sum goes to the reader */         \
  X(kSend, "send", Traffic::kWhole, false, kValueOrResidual)          /* this rank's slice to the next */           \
  X(kRecv, "recv", Traffic::kAtTheSender, false, kValueOrResidual)    /* the slice from the previous */             \
  X(kGatherKeys, "ag-kv", Traffic::kAlongside, false, kKeysOnly)      /* CP: the other shards' keys, values */      \
  X(kGatherQueries, "ag-q", Traffic::kAlongside, false, kQueriesOnly) /* DCP: the group's query heads */            \
  X(kExchangePartials, "a2a-lse", Traffic::kAlongside, false, kPartialsOnly) /* DCP: partials to their heads */

enum class StepKind {
#define SEAM_ENUMERATOR(kind, name, traffic, completes, operands) kind,
  SEAM_STEP_KINDS(SEAM_ENUMERATOR)
#undef SEAM_ENUMERATOR
};

struct StepSpec {
  StepKind kind;
  std::string_view name;
  Traffic traffic;
  bool completes;     // it completes the owed sum of the value it acts on
  Operands operands;  // the buffers it may act on
  // It moves data between ranks (and so names a group).
  constexpr bool collective() const { return traffic != Traffic::kNone; }
};

inline constexpr std::array kStepSpecs{
#define SEAM_SPEC(kind, name, traffic, completes, operands) \
  StepSpec{StepKind::kind, name, traffic, completes, operands},
    SEAM_STEP_KINDS(SEAM_SPEC)
#undef SEAM_SPEC
};

constexpr const StepSpec& Spec(StepKind k) { return kStepSpecs[static_cast<size_t>(k)]; }

// Every kind, in the table's order (for parsers and exhaustive tests).
inline constexpr std::array kStepKinds = [] {
  std::array<StepKind, kStepSpecs.size()> out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = kStepSpecs[i].kind;
  return out;
}();

constexpr std::string_view Name(StepKind k) { return Spec(k).name; }
constexpr bool IsCollective(StepKind k) { return Spec(k).collective(); }

}  // namespace seam
