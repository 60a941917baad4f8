// The compact one-line form of steps and boundaries.
#include <fmt/format.h>

#include "seam/plan.h"

namespace seam {
namespace {

std::string RowsText(const Step& s) {
  if (s.rows_in == s.rows_out) return std::string(Name(s.rows_in));
  return fmt::format("{}->{}", Name(s.rows_in), Name(s.rows_out));
}

std::string GroupText(const Step& s) { return s.group ? fmt::format("({})", Name(*s.group)) : std::string(); }

}  // namespace

std::string ShortString(const Step& s) {
  switch (s.kind) {
    case StepKind::kStartResidual:
    case StepKind::kAdd:
    case StepKind::kNorm: return fmt::format("{} {}", Name(s.kind), RowsText(s));
    case StepKind::kAllReduceAddNorm: return fmt::format("{}{} {}", Name(s.kind), GroupText(s), RowsText(s));
    case StepKind::kCompute:
    case StepKind::kEmbed: {  // both make a value, which may owe a sum
      const std::string owes =
          s.owed_after == Owed::kNothing ? std::string() : fmt::format(" owes {}", Name(s.owed_after));
      return fmt::format("{} {}{}", Name(s.kind), RowsText(s), owes);
    }
    default: return fmt::format("{}{} {} {}", Name(s.kind), GroupText(s), Name(s.operand), RowsText(s));
  }
}

std::string ShortString(const std::vector<Step>& steps) {
  std::vector<std::string> parts;
  for (const Step& s : steps) parts.push_back(ShortString(s));
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string ShortString(const Boundary& b) {
  std::string value = "written";
  if (b.value) {
    value = fmt::format("value {}", Name(b.value->rows));
    if (b.value->owed != Owed::kNothing) value += fmt::format(" owes {}", Name(b.value->owed));
  }
  const std::string residual = b.residual ? std::string(Name(*b.residual)) : "none";
  return fmt::format("{}, residual {}", value, residual);
}

}  // namespace seam
