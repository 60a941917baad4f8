// seam/stage.h — what a stage declares about itself, independent of any
// parallel configuration (the binder decides the rest).
//
//   StageDecl a = AttentionStage();                    // always leaves its sum
//   StageDecl m = MixerStage();                        // exit-scoped
//   StageDecl e = SparseFfnStage({.top_k = 6});
#pragma once

#include <string>
#include <string_view>

#include "seam/error.h"

namespace seam {

enum class StageKind {
  kAttention,
  kMixer,
  kDenseFfn,
  kSparseFfn,
  kNoOp,    // passes the pending add on (Nemotron-NAS no_op blocks)
  kLinear,  // one replicated hidden x hidden linear layer (NAS replace_with_linear)
};

// How an attention's row-parallel output projection completes its sum.
enum class AttentionSum {
  kAlwaysPartial,  // never reduces; its sum travels to whoever reads next
  kReducesItself,  // all-reduces over attention TP inside its own compute
};

// How a stage writes its output into the residual.
enum class UpdateKind {
  kPlainAdd,         // residual += output; allows fused all-reduce+add+norm
  kHyperConnection,  // non-additive: mixes [T, hc, d] streams; applied by the
                     // producer at its exit, once its sum is complete
};

// How a stage derives its input from the residual.
enum class ReadKind {
  kPlainNorm,  // RMSNorm of each row on its own
  kAllRows,    // needs every row of its attention group (e.g. per-layer embeddings)
};

struct StageDecl {
  StageKind kind = StageKind::kNoOp;
  AttentionSum attention_sum = AttentionSum::kAlwaysPartial;  // attention only
  // Attention only: on input-scattered batches it takes its slice and
  // all-gathers its projected QKV input itself. Mixers never do.
  bool gathers_input = false;
  UpdateKind update = UpdateKind::kPlainAdd;
  ReadKind read = ReadKind::kPlainNorm;
  int gather_width = 0;  // elements per token the attention gathers itself
  int top_k = 0;         // sparse FFN: experts each token is dispatched to
  bool a2a = true;       // sparse FFN: has an all-to-all dispatch path
  // Per-stage sizes where a family varies them by layer (0: the model's).
  int window = 0;     // attention: sliding window in tokens (0: full causal)
  int kv_heads = 0;   // attention: key/value heads of this layer
  int ffn_width = 0;  // dense FFN: this layer's width
  bool operator==(const StageDecl&) const = default;
};

struct StageOptions {
  UpdateKind update = UpdateKind::kPlainAdd;
  ReadKind read = ReadKind::kPlainNorm;
};

struct AttentionOptions {
  AttentionSum sum = AttentionSum::kAlwaysPartial;
  bool gathers_input = true;
  int gather_width = 0;  // 0: the model's hidden size (a hook-less gather)
  UpdateKind update = UpdateKind::kPlainAdd;
  ReadKind read = ReadKind::kPlainNorm;
  int window = 0;
  int kv_heads = 0;
};

struct SparseOptions {
  int top_k = 1;
  UpdateKind update = UpdateKind::kPlainAdd;
  ReadKind read = ReadKind::kPlainNorm;
  bool a2a = true;
};

struct DenseOptions {
  UpdateKind update = UpdateKind::kPlainAdd;
  ReadKind read = ReadKind::kPlainNorm;
  int width = 0;
};

StageDecl AttentionStage(const AttentionOptions& o = {});
StageDecl MixerStage(const StageOptions& o = {});
StageDecl DenseFfnStage(const DenseOptions& o = {});
StageDecl SparseFfnStage(const SparseOptions& o = {});
StageDecl NoOpStage();
StageDecl LinearStage(const StageOptions& o = {});

// The first fact in which two declarations differ, as "top_k=4 vs top_k=3";
// empty when they are equal.
std::string FirstDifference(const StageDecl& a, const StageDecl& b);

bool IsFfn(const StageDecl& d);
bool IsAttentionLike(const StageDecl& d);  // attention or mixer
bool IsAlwaysPartialAttention(const StageDecl& d);

std::string_view Name(StageKind k);
std::string_view Name(AttentionSum s);
std::string_view Name(UpdateKind u);
std::string_view Name(ReadKind r);
Expected<StageKind> ParseStageKind(std::string_view text);
Expected<AttentionSum> ParseAttentionSum(std::string_view text);
Expected<UpdateKind> ParseUpdateKind(std::string_view text);
Expected<ReadKind> ParseReadKind(std::string_view text);

}  // namespace seam
