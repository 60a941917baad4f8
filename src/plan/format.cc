// The forms a plan prints in, by name.
#include "core/enum_text.h"
#include "seam/plan_io.h"
#include "seam/subprocess.h"

namespace seam {

constexpr auto kFormats = EnumNames<PlanFormat>("format", {{PlanFormat::kTable, "table"},
                                                            {PlanFormat::kJson, "json"},
                                                            {PlanFormat::kText, "text"},
                                                            {PlanFormat::kDot, "dot"},
                                                            {PlanFormat::kSvg, "svg"}});

std::string_view Name(PlanFormat f) { return kFormats.Name(f); }
Expected<PlanFormat> ParsePlanFormat(std::string_view text) { return kFormats.Parse(text); }

// seam draws no pictures itself: Graphviz lays the graph out, when it is there.
Expected<std::string> ToSvg(const Pipeline& ranks) {
  const std::optional<std::string> dot = FindOnPath("dot");
  if (!dot) {
    return InvalidArgument(
        "--format svg needs Graphviz's `dot` on PATH (apt-get install graphviz); --format dot writes the graph text");
  }
  return RunFilter(*dot, {"-Tsvg"}, ToDot(ranks));
}

Expected<std::string> Format(const Pipeline& ranks, PlanFormat f) {
  switch (f) {
    case PlanFormat::kTable: return ToTable(ranks);
    case PlanFormat::kJson: return ToJson(ranks);
    case PlanFormat::kText: return ToText(ranks);
    case PlanFormat::kDot: return ToDot(ranks);
    case PlanFormat::kSvg: return ToSvg(ranks);
  }
  return Internal("unknown plan format");
}

}  // namespace seam
