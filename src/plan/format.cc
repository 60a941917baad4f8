// The forms a plan prints in, by name.
#include <fmt/format.h>

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
  // A refusal is an error (RunFilter: Graphviz exits other than 0), and so is
  // an exit 0 that wrote no whole picture: seam never prints half an SVG.
  Expected<std::string> svg = RunFilter(*dot, {"-Tsvg"}, ToDot(ranks));
  if (svg && svg->find("</svg>") == std::string::npos) {
    return InvalidArgument(
        fmt::format("{} -Tsvg exited 0 but wrote no SVG ({} bytes); --format dot writes the graph "
                    "text",
                    *dot, svg->size()));
  }
  return svg;
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
