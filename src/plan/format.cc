// The forms a plan prints in, by name.
#include "core/enum_text.h"
#include "seam/plan_io.h"

namespace seam {

std::string_view Name(PlanFormat f) {
  switch (f) {
    case PlanFormat::kTable: return "table";
    case PlanFormat::kJson: return "json";
    case PlanFormat::kText: return "text";
    case PlanFormat::kDot: return "dot";
  }
  return "?";
}

Expected<PlanFormat> ParsePlanFormat(std::string_view text) {
  return ParseEnum(text, std::array{PlanFormat::kTable, PlanFormat::kJson, PlanFormat::kText, PlanFormat::kDot},
                   "format");
}

std::string Format(const Pipeline& ranks, PlanFormat f) {
  switch (f) {
    case PlanFormat::kTable: return ToTable(ranks);
    case PlanFormat::kJson: return ToJson(ranks);
    case PlanFormat::kText: return ToText(ranks);
    case PlanFormat::kDot: return ToDot(ranks);
  }
  return "";
}

}  // namespace seam
