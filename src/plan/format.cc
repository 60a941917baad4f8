// The forms a plan prints in, by name.
#include "core/enum_text.h"
#include "seam/plan_io.h"

namespace seam {

constexpr auto kFormats = EnumNames<PlanFormat>("format", {{PlanFormat::kTable, "table"},
                                                            {PlanFormat::kJson, "json"},
                                                            {PlanFormat::kText, "text"},
                                                            {PlanFormat::kDot, "dot"}});

std::string_view Name(PlanFormat f) { return kFormats.Name(f); }
Expected<PlanFormat> ParsePlanFormat(std::string_view text) { return kFormats.Parse(text); }

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
