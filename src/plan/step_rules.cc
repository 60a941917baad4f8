// What each step kind does to its operand's rows and owed sum.
#include "seam/step_rules.h"

#include <fmt/format.h>

namespace seam {
namespace {

std::string OperandsText(const Operands& ops) {
  std::vector<std::string_view> names;
  for (Operand o : {Operand::kValue, Operand::kResidual, Operand::kInput, Operand::kLogits, Operand::kKeys,
                    Operand::kQueries, Operand::kPartials}) {
    if (ops.Has(o)) names.push_back(Name(o));
  }
  return fmt::format("{}", fmt::join(names, " or "));
}

}  // namespace

std::string StepRuleError(const Step& s, const ParallelConfig& cfg) {
  const bool completes = s.owed_before != Owed::kNothing && s.owed_after == Owed::kNothing;
  const bool untouched = s.owed_before == Owed::kNothing && s.owed_after == Owed::kNothing;
  const bool same_rows = s.rows_in == s.rows_out;
  const Rows axes = s.group ? AxesOf(cfg, *s.group) : Rows::Full();
  const StepSpec& spec = Spec(s.kind);
  if (!spec.operands.Has(s.operand)) {
    return fmt::format("{} does not act on the {}; it acts on the {}", spec.name, Name(s.operand),
                       OperandsText(spec.operands));
  }
  switch (s.kind) {
    case StepKind::kAllReduce:
    case StepKind::kAllReduceAddNorm:
      if (!same_rows) return "an all-reduce keeps its rows; a reduce-scatter would change them";
      return completes ? "" : "an all-reduce completes an owed sum";
    case StepKind::kReduceScatter:
      if (!s.group || s.rows_out != s.rows_in.With(axes) || same_rows) {
        return "a reduce-scatter lands on its rows sharded over its group's axes";
      }
      return completes ? "" : "a reduce-scatter completes an owed sum";
    case StepKind::kReduceScatterV:
      if (s.group != Group::kTp) return "a reduce-scatterv sums the value over tp";
      if (s.rows_in != Rows::Full() || s.rows_out != Rows::Attention(cfg)) {
        return "a reduce-scatterv returns the full rows to the attention rows";
      }
      return s.owed_before == Owed::kTp && completes ? "" : "a reduce-scatterv completes a tp sum";
    case StepKind::kAllGather:
      if (!s.group || same_rows || s.rows_out != s.rows_in.Without(axes)) {
        return "an all-gather takes its rows back over its group's axes";
      }
      return untouched ? "" : "an all-gather moves complete values only";
    case StepKind::kSlice:
      if (same_rows || !s.rows_in.Covers(s.rows_out)) return "a slice takes finer rows";
      return s.owed_before == s.owed_after ? "" : "a slice keeps the owed sum as it is";
    case StepKind::kLeave:
      if (!same_rows) return "a leave hands the value on as it is";
      if (s.owed_before == Owed::kNothing || s.owed_after != s.owed_before) return "a leave hands an owed sum on";
      return s.group == GroupOf(s.owed_before) ? "" : "a leave names the group the sum is owed over";
    case StepKind::kStartResidual:
    case StepKind::kAdd:
    case StepKind::kNorm:
      if (!same_rows) return "it keeps its rows";
      return untouched ? "" : "it runs on complete values only";
    case StepKind::kSend:
    case StepKind::kRecv:
      if (!same_rows) return "the transport keeps its rows";
      return untouched ? "" : "the transport carries complete values only";
    case StepKind::kDispatch:
    case StepKind::kCombine:
      if (s.rows_in != Rows::Slice(cfg) || !same_rows) return "the all-to-all runs on this rank's slice";
      if (s.group != A2aGroup(cfg))
        return fmt::format("the all-to-all runs over the expert group ({})", Name(A2aGroup(cfg)));
      return untouched ? "" : "the all-to-all moves complete values";
    case StepKind::kCompute: return "";
    case StepKind::kLmHead:
      if (!same_rows) return "the LM head computes on its input's rows";
      return untouched ? "" : "the LM head's logits are complete: it splits the vocabulary, not a sum";
    case StepKind::kGatherVocab:
      if (!s.group || !same_rows) return "the vocabulary gather keeps its rows and names the group that split it";
      return untouched ? "" : "the vocabulary gather moves complete logits";
    case StepKind::kGatherKeys:
      if (s.group != Group::kCp || !same_rows || s.rows_in != Rows::Attention(cfg)) {
        return "the key/value gather runs over cp beside the attention rows, which it keeps";
      }
      return untouched ? "" : "the key/value gather moves complete keys and values";
    case StepKind::kGatherQueries:
    case StepKind::kExchangePartials:
      if (s.group != Group::kDcp || !same_rows || s.rows_in != Rows::Attention(cfg)) {
        return "the DCP exchanges run over dcp beside the attention rows, which they keep";
      }
      return untouched ? "" : "the DCP exchanges move complete queries and partial outputs";
    case StepKind::kEmbed:
      if (!same_rows || s.owed_before != Owed::kNothing) return "the embedding starts a value on its rows";
      return s.owed_after == Owed::kNothing || s.owed_after == Owed::kTp ? "" : "the embedding's table splits over tp";
  }
  return "";
}

}  // namespace seam
