#include "verify/symbolic.h"

#include <fmt/format.h>

#include "seam/stage_shape.h"

namespace seam::verify {
namespace {

std::string AxesText(const ParallelConfig& cfg, Group g) { return std::string(Name(AxesOf(cfg, g))); }

// Checks that the operand exists and sits on the rows the step starts from.
bool CheckOperand(const Step& s, const State& st, const Report& report) {
  std::optional<Rows> rows = s.operand == Operand::kResidual ? st.residual : st.input;
  if (s.operand == Operand::kValue) rows = st.value ? std::optional(st.value->rows) : std::nullopt;
  if (s.operand == Operand::kLogits) rows = st.logits;
  Invariant inv = s.operand == Operand::kResidual ? Invariant::kResidualRowsAgree : Invariant::kStageRows;
  if (!rows) {
    // A missing value was added already (or never produced): its sum would be used twice or lost.
    if (s.operand == Operand::kValue) inv = Invariant::kSumOnce;
    report(inv, fmt::format("{} has no {} to act on", Name(s.kind), Name(s.operand)));
    return false;
  }
  if (*rows != s.rows_in) {
    report(inv, fmt::format("{} expects the {} on {} rows but it is on {}", Name(s.kind), Name(s.operand),
                            Name(s.rows_in), Name(*rows)));
  }
  return true;
}

// A collective must name a group; a local step must not.
void CheckGroupPresence(const Step& s, const Report& report) {
  const bool names_group = IsCollective(s.kind) || s.kind == StepKind::kLeave;
  if (names_group != s.group.has_value()) {
    report(Invariant::kGroupFitsRows,
           fmt::format("{} {} a group", Name(s.kind), s.group ? "is local but names" : "is a collective without"));
  }
}

// Checks a completion of the value's owed sum over the step's group.
void CheckCompletes(const ParallelConfig& cfg, const Step& s, const State& st, const Report& report) {
  const Owed owed = st.value ? st.value->owed : Owed::kNothing;
  if (owed == Owed::kNothing) {
    report(Invariant::kSumOnce,
           fmt::format("{}({}) sums a value that owes nothing: the sum is taken twice", Name(s.kind), Name(*s.group)));
    return;
  }
  if (!(AxesOf(cfg, GroupOf(owed)) == AxesOf(cfg, *s.group))) {
    report(Invariant::kSumOnce, fmt::format("the value owes a sum over {} but {} completes it over {}", Name(owed),
                                            Name(s.kind), Name(*s.group)));
  }
  if (s.rows_in.Shares(AxesOf(cfg, *s.group))) {
    report(Invariant::kGroupFitsRows, fmt::format("{}({}) on {} rows: the ranks of {} hold different rows",
                                                  Name(s.kind), Name(*s.group), Name(s.rows_in), Name(*s.group)));
  }
}

void CheckScatterRows(const ParallelConfig& cfg, const Step& s, const Report& report) {
  const Rows expected = s.rows_in.With(AxesOf(cfg, *s.group));
  if (s.rows_out != expected) {
    report(Invariant::kGroupFitsRows, fmt::format("{}({}) from {} rows lands on {}, not {}", Name(s.kind),
                                                  Name(*s.group), Name(s.rows_in), Name(expected), Name(s.rows_out)));
  }
  if (s.kind == StepKind::kReduceScatterV && cfg.attn_tp() > 1) {
    report(Invariant::kGroupFitsRows, "reduce-scatterv returns whole DP groups only with attn_tp=1");
  }
}

void CheckGather(const ParallelConfig& cfg, const Step& s, const State& st, const Report& report) {
  const Rows axes = AxesOf(cfg, *s.group);
  if (axes == Rows::Full() || s.rows_in.With(axes) != s.rows_in || s.rows_out != s.rows_in.Without(axes)) {
    report(Invariant::kGroupFitsRows,
           fmt::format("ag({}) cannot take {} rows to {} (it gathers the {} axes)", Name(*s.group), Name(s.rows_in),
                       Name(s.rows_out), AxesText(cfg, *s.group)));
  }
  if (s.operand == Operand::kValue && st.value && st.value->owed != Owed::kNothing) {
    report(Invariant::kSumOnce, fmt::format("gathers a value that still owes a sum over {}", Name(st.value->owed)));
  }
}

void CheckAdd(const State& st, const Report& report) {
  if (!st.value) return report(Invariant::kSumOnce, "add with no value pending");
  if (!st.residual) return report(Invariant::kResidualRowsAgree, "add with no residual");
  if (st.value->owed != Owed::kNothing) {
    report(Invariant::kSumOnce, fmt::format("adds a value that still owes a sum over {}", Name(st.value->owed)));
  }
  if (st.value->rows != *st.residual) {
    report(Invariant::kResidualRowsAgree,
           fmt::format("adds a value on {} rows into a residual on {}", Name(st.value->rows), Name(*st.residual)));
  }
}

void CheckNorm(const ParallelConfig& cfg, const StageDecl* decl, const Step& s, const State& st, const Report& report) {
  if (!st.residual) return report(Invariant::kResidualRowsAgree, "reads with no residual");
  if (st.value) report(Invariant::kSumOnce, "reads the residual while a value is still pending");
  if (decl && decl->read == ReadKind::kAllRows && s.rows_out.attn_tp() && cfg.attn_tp() > 1) {
    report(Invariant::kStageRows, "a read of every row runs on the slice");
  }
}

void CheckCompute(const ParallelConfig& cfg, const StageDecl* decl, const Step& s, const Report& report) {
  if (decl == nullptr) return report(Invariant::kStageRows, "compute outside a stage");
  const Rows need = NeedOf(*decl, cfg);
  if (s.rows_in != need) {
    report(Invariant::kStageRows,
           fmt::format("the {} receives {} rows but declares {}", Name(decl->kind), Name(s.rows_in), Name(need)));
  }
  if (s.rows_out != need || s.owed_after != OwesOf(*decl, cfg)) {
    report(Invariant::kSumOnce,
           fmt::format("the {} produces {} owing {}, not {} owing {}", Name(decl->kind), Name(s.rows_out),
                       Name(s.owed_after), Name(need), Name(OwesOf(*decl, cfg))));
  }
}

// The transport carries complete slices of the attention rows, one per
// attention-TP rank, between the ranks at the same TP position.
void CheckTransport(const ParallelConfig& cfg, const Step& s, const State& st, const Report& report) {
  if (s.group != Group::kPp)
    report(Invariant::kHandoff, fmt::format("{} runs between pipeline neighbours", Name(s.kind)));
  if (s.rows_in != Rows::Slice(cfg)) {
    report(Invariant::kHandoff, fmt::format("{} moves {} rows; the transport moves this rank's slice of the attention "
                                            "rows",
                                            Name(s.kind), Name(s.rows_in)));
  }
  if (s.kind == StepKind::kSend && s.operand == Operand::kValue && st.value && st.value->owed != Owed::kNothing) {
    report(Invariant::kHandoff, fmt::format("sends a value that still owes a sum over {}", Name(st.value->owed)));
  }
  if (s.kind == StepKind::kRecv && s.owed_after != Owed::kNothing) {
    report(Invariant::kHandoff,
           fmt::format("the receiver declares a sum over {} on what it receives", Name(s.owed_after)));
  }
  if (s.kind == StepKind::kRecv && s.operand == Operand::kInput) report(Invariant::kHandoff, "receives a normed input");
}

void CheckA2a(const ParallelConfig& cfg, const Step& s, const Report& report) {
  if (s.group != A2aGroup(cfg) || s.rows_in != Rows::Slice(cfg)) {
    report(Invariant::kGroupFitsRows,
           fmt::format("{} runs over the expert group ({}) on slices", Name(s.kind), Name(A2aGroup(cfg))));
  }
}

// The embedding starts the line, on the rows and with the sum its table's
// split gives (seam/stage_shape.h).
void CheckEmbed(const ParallelConfig& cfg, const Step& s, const State& st, const Report& report) {
  if (st.value || st.residual || st.input) report(Invariant::kHandoff, "the embedding runs after the line started");
  const StageShape e = EmbeddingShape(cfg);
  const Owed owed = Owe(cfg, e.sum);
  if (s.rows_out != e.rows || s.owed_after != owed) {
    report(Invariant::kStageRows, fmt::format("the embedding lands on {} owing {}; its table's split gives {} owing {}",
                                              Name(s.rows_out), Name(s.owed_after), Name(e.rows), Name(owed)));
  }
}

// The LM head splits the vocabulary over the group and rows its shape names
// (seam/stage_shape.h); its gather runs over that same group.
void CheckLmHead(const ParallelConfig& cfg, const Step& s, const Report& report) {
  const StageShape head = LmHeadShape(cfg);
  if (s.kind == StepKind::kLmHead && s.rows_in != head.rows) {
    report(Invariant::kStageRows,
           fmt::format("the LM head runs on {} rows; its vocabulary split needs {}", Name(s.rows_in), Name(head.rows)));
  }
  if (s.kind == StepKind::kGatherVocab && s.group != head.shard) {
    report(Invariant::kGroupFitsRows, fmt::format("the vocabulary gather runs over {}, not the {} that split it",
                                                  s.group ? Name(*s.group) : "no group", Name(*head.shard)));
  }
}

// Under context parallelism an attention reads every token of its requests:
// its own rows' keys and values and, gathered over the CP group, those of
// the other shards of the same requests (seam/topology.h). No other stage
// or group holds them.
void CheckGatherKeys(const ParallelConfig& cfg, const StageDecl* decl, const Step& s, const Report& report) {
  if (decl == nullptr || decl->kind != StageKind::kAttention) {
    report(Invariant::kStageRows, "only an attention gathers keys and values");
  }
  if (cfg.cp == 1) report(Invariant::kFewestBytes, "gathers keys and values without context parallelism");
  if (s.group != Group::kCp) {
    report(Invariant::kGroupFitsRows, fmt::format("gathers keys and values over {}: the other shards of its "
                                                  "requests are its CP group's",
                                                  s.group ? Name(*s.group) : "no group"));
  }
}

// Under decode context parallelism an attention's cache is split by
// position over its DCP group: the group's queries are gathered and each
// rank's partial outputs go to the heads' ranks, over that group alone.
void CheckSplitCache(const ParallelConfig& cfg, const StageDecl* decl, const Step& s, const Report& report) {
  if (decl == nullptr || decl->kind != StageKind::kAttention) {
    report(Invariant::kStageRows, fmt::format("only an attention exchanges {}", Name(s.operand)));
  }
  if (cfg.dcp == 1) {
    report(Invariant::kFewestBytes, fmt::format("exchanges {} without decode context parallelism", Name(s.operand)));
  }
  if (s.group != Group::kDcp) {
    report(Invariant::kGroupFitsRows, fmt::format("exchanges {} over {}: the ranks splitting its cache are its DCP "
                                                  "group",
                                                  Name(s.operand), s.group ? Name(*s.group) : "no group"));
  }
}

// Moves the state on to what the step claims.
void Advance(const Step& s, State& st) {
  switch (s.kind) {
    case StepKind::kAllReduce:
    case StepKind::kReduceScatter:
    case StepKind::kReduceScatterV:
      if (!st.value) st.value = ValueFacts{};
      st.value->rows = s.rows_out;
      st.value->owed = Owed::kNothing;
      return;
    case StepKind::kAllGather:
    case StepKind::kSlice:
      if (s.operand == Operand::kLogits) st.logits = s.rows_out;
      if (s.operand == Operand::kValue && st.value) st.value->rows = s.rows_out;
      if (s.operand == Operand::kResidual) st.residual = s.rows_out;
      if (s.operand == Operand::kInput) st.input = s.rows_out;
      return;
    case StepKind::kStartResidual:
      st.residual = s.rows_out;
      st.value.reset();
      return;
    case StepKind::kAdd: st.value.reset(); return;
    case StepKind::kNorm: st.input = st.residual; return;
    case StepKind::kAllReduceAddNorm:
      st.value.reset();
      st.input = st.residual;
      return;
    case StepKind::kCompute:
    case StepKind::kEmbed:
      st.input.reset();
      st.value = ValueFacts{s.rows_out, s.owed_after, UpdateKind::kPlainAdd};
      return;
    case StepKind::kSend:
      if (s.operand == Operand::kValue) st.value.reset();
      if (s.operand == Operand::kResidual) st.residual.reset();
      return;
    case StepKind::kRecv:
      if (s.operand == Operand::kValue) st.value = ValueFacts{s.rows_out, s.owed_after, UpdateKind::kPlainAdd};
      if (s.operand == Operand::kResidual) st.residual = s.rows_out;
      return;
    case StepKind::kLmHead: st.logits = s.rows_out; return;
    case StepKind::kDispatch:
    case StepKind::kCombine:
    case StepKind::kGatherVocab:
    case StepKind::kGatherKeys:
    case StepKind::kGatherQueries:
    case StepKind::kExchangePartials:
    case StepKind::kLeave: return;
  }
}

}  // namespace

Rows NeedOf(const StageDecl& d, const ParallelConfig& cfg) { return ShapeOf(d, cfg).rows; }

Owed OwesOf(const StageDecl& d, const ParallelConfig& cfg) { return Owe(cfg, ShapeOf(d, cfg).sum); }

void Apply(const ParallelConfig& cfg, const StageDecl* decl, const Step& s, State& st, const Report& report) {
  CheckGroupPresence(s, report);
  const bool creates = s.kind == StepKind::kCompute || s.kind == StepKind::kRecv || s.kind == StepKind::kEmbed;
  const bool has_operand = creates || CheckOperand(s, st, report);
  const bool ok_group = s.group.has_value();
  if (has_operand && s.operand == Operand::kValue && st.value && st.value->owed != s.owed_before) {
    report(Invariant::kSumOnce, fmt::format("{} expects the value to owe {} but it owes {}", Name(s.kind),
                                            Name(s.owed_before), Name(st.value->owed)));
  }
  switch (s.kind) {
    case StepKind::kAllReduce:
      if (ok_group) CheckCompletes(cfg, s, st, report);
      break;
    case StepKind::kReduceScatter:
    case StepKind::kReduceScatterV:
      if (ok_group) {
        CheckCompletes(cfg, s, st, report);
        CheckScatterRows(cfg, s, report);
      }
      break;
    case StepKind::kAllGather:
      if (ok_group) CheckGather(cfg, s, st, report);
      break;
    case StepKind::kSlice:
      if (!s.rows_in.Covers(s.rows_out)) {
        report(Invariant::kStageRows,
               fmt::format("a local slice cannot take {} rows to {}", Name(s.rows_in), Name(s.rows_out)));
      }
      break;
    case StepKind::kStartResidual:
      if (st.residual) report(Invariant::kResidualRowsAgree, "starts a residual that already exists");
      if (!st.value || st.value->owed != Owed::kNothing) {
        report(Invariant::kSumOnce, "starts the residual from an input that is missing or owes a sum");
      }
      break;
    case StepKind::kAdd: CheckAdd(st, report); break;
    case StepKind::kNorm: CheckNorm(cfg, decl, s, st, report); break;
    case StepKind::kAllReduceAddNorm:
      if (ok_group) CheckCompletes(cfg, s, st, report);
      if (st.value) st.value->owed = Owed::kNothing;
      CheckAdd(st, report);
      if (st.value) st.value.reset();
      CheckNorm(cfg, decl, s, st, report);
      break;
    case StepKind::kCompute: CheckCompute(cfg, decl, s, report); break;
    case StepKind::kEmbed: CheckEmbed(cfg, s, st, report); break;
    case StepKind::kLmHead:
    case StepKind::kGatherVocab: CheckLmHead(cfg, s, report); break;
    case StepKind::kDispatch:
    case StepKind::kCombine: CheckA2a(cfg, s, report); break;
    case StepKind::kSend:
    case StepKind::kRecv: CheckTransport(cfg, s, st, report); break;
    case StepKind::kGatherKeys: CheckGatherKeys(cfg, decl, s, report); break;
    case StepKind::kGatherQueries:
    case StepKind::kExchangePartials: CheckSplitCache(cfg, decl, s, report); break;
    case StepKind::kLeave:
      if (!st.value || st.value->owed == Owed::kNothing) {
        report(Invariant::kSumOnce, "leaves a sum to the next reader, but the value owes nothing");
      }
      break;
  }
  Advance(s, st);
}

}  // namespace seam::verify
