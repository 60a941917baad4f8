#include "seam/plan.h"

#include "seam/plan_walk.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "core/enum_text.h"

namespace seam {

Plan::Plan(PlanHeader header, std::vector<LinePlan> lines)
    : header_(std::move(header)), lines_(std::make_shared<const std::vector<LinePlan>>(std::move(lines))) {}

Plan Plan::WithHeader(PlanHeader header) const {
  Plan p = *this;
  p.header_ = std::move(header);
  return p;
}

const LinePlan* Plan::line(Variant v) const {
  for (const LinePlan& l : *lines_) {
    if (l.variant == v) return &l;
  }
  return nullptr;
}

namespace {

// Bytes of one token's buffer on the wire. A dispatch sends one hidden-wide
// row per expert it goes to (its width is top_k x hidden), each with its own
// scales when it goes in fp8.
double WireBytes(const Step& s, const PlanHeader& h) {
  if (s.kind != StepKind::kDispatch) return RowBytes(h.wire.act, s.width);
  if (h.hidden > 0 && s.width % h.hidden == 0) return (s.width / h.hidden) * RowBytes(h.wire.dispatch, h.hidden);
  return RowBytes(h.wire.dispatch, s.width);
}

}  // namespace

double BytesPerToken(const Step& s, const PlanHeader& h) {
  const Traffic traffic = Spec(s.kind).traffic;
  if (traffic == Traffic::kNone || !s.group) return 0.0;  // a group-less collective is the verifier's to report
  const int n = GroupSize(h.config, *s.group);
  const double share = static_cast<double>(n - 1) / n;
  // The logical buffer: the ungathered side for a sum, the gathered side for a gather.
  const Rows rows = s.kind == StepKind::kAllGather ? s.rows_out : s.rows_in;
  const double buffer = WireBytes(s, h) * RowFraction(h.config, rows);
  switch (traffic) {
    case Traffic::kNone:
    case Traffic::kAtTheSender: return 0.0;
    case Traffic::kAlongside: return share * n * buffer;  // the members' rows, each as many as this rank's
    case Traffic::kWhole: return buffer;
    case Traffic::kShare: return share * buffer;
    case Traffic::kAllReduce: return 2.0 * share * buffer;
  }
  return 0.0;
}

double BytesPerToken(const StagePlan& s, const PlanHeader& h) {
  double total = 0;
  for (const auto* steps : {&s.entry, &s.compute, &s.exit}) {
    for (const Step& step : *steps) total += BytesPerToken(step, h);
  }
  return total;
}

size_t StepCount(const LinePlan& line) {
  size_t steps = 0;
  WalkLine(line, [&steps](const LinePlace&, const std::vector<Step>& part) { steps += part.size(); });
  return steps;
}

std::string BytesText(double bytes) {
  const double whole = std::round(bytes);
  if (whole == bytes && std::abs(bytes) < 9.0e15) return fmt::format("{}", static_cast<int64_t>(whole));
  return fmt::format("{:.2f}", bytes);
}

double BytesPerToken(const LinePlan& line, const PlanHeader& h) {
  double total = 0;
  ForEachStep(line, [&](const Step& step) { total += BytesPerToken(step, h); });
  return total;
}

namespace {

constexpr auto kVariants = EnumNames<Variant>(
    "batch variant", {{Variant::kOrdinary, "ordinary"}, {Variant::kInputScattered, "input-scattered"}});
constexpr auto kEnds = EnumNames<EndKind>("rank end", {{EndKind::kFinalNorm, "final"}, {EndKind::kSend, "send"}});
constexpr auto kOperands = EnumNames<Operand>("operand", {{Operand::kValue, "value"},
                                                          {Operand::kResidual, "residual"},
                                                          {Operand::kInput, "input"},
                                                          {Operand::kLogits, "logits"},
                                                          {Operand::kKeys, "keys"},
                                                          {Operand::kQueries, "queries"},
                                                          {Operand::kPartials, "partials"}});

}  // namespace

std::string_view Name(Variant v) { return kVariants.Name(v); }
std::string_view Name(EndKind k) { return kEnds.Name(k); }
std::string_view Name(Operand o) { return kOperands.Name(o); }
Expected<Variant> ParseVariant(std::string_view text) { return kVariants.Parse(text); }
Expected<EndKind> ParseEndKind(std::string_view text) { return kEnds.Parse(text); }
Expected<Operand> ParseOperand(std::string_view text) { return kOperands.Parse(text); }

Expected<StepKind> ParseStepKind(std::string_view text) { return ParseEnum(text, kStepKinds, "step"); }

}  // namespace seam
