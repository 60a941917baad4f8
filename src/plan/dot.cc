// The plan as a Graphviz graph: one node per stage, one edge per boundary,
// labelled with what crosses it.
#include <fmt/format.h>

#include "seam/plan_io.h"

namespace seam {
namespace {

std::string EdgeLabel(const Boundary& b) {
  std::string value = "written";
  if (b.value) {
    value = std::string(Name(b.value->rows));
    if (b.value->owed != Owed::kNothing) value += fmt::format(" owes {}", Name(b.value->owed));
  }
  return fmt::format("value: {}\\nresidual: {}", value, b.residual ? Name(*b.residual) : "none");
}

std::string StageLabel(const StagePlan& s, const PlanHeader& h) {
  return fmt::format("{} {} (layer {})\\ninput {}, residual {}\\n{} B/token", s.index, Name(s.decl.kind), s.layer,
                     s.input ? Name(*s.input) : "-", s.residual ? Name(*s.residual) : "-",
                     fmt::format("{:.6g}", BytesPerToken(s, h)));
}

}  // namespace

std::string ToDot(const Plan& plan) {
  const PlanHeader& h = plan.header();
  std::string out = fmt::format("digraph \"{}\" {{\n  rankdir=LR;\n  node [shape=box];\n", h.model);
  for (const LinePlan& line : plan.lines()) {
    const std::string v(Name(line.variant));
    out += fmt::format("  subgraph \"cluster_{}\" {{\n    label=\"{} batches\";\n", v, v);
    std::string prev = fmt::format("\"{}_entry\"", v);
    out += fmt::format("    {} [label=\"stack entry\", shape=ellipse];\n", prev);
    for (const StagePlan& s : line.stages) {
      const std::string node = fmt::format("\"{}_{}\"", v, s.index);
      out += fmt::format("    {} [label=\"{}\"];\n", node, StageLabel(s, h));
      out += fmt::format("    {} -> {} [label=\"{}\"];\n", prev, node, EdgeLabel(s.arrives));
      prev = node;
    }
    out += fmt::format("    \"{}_final\" [label=\"final norm\", shape=ellipse];\n", v);
    out += fmt::format("    {} -> \"{}_final\" [label=\"{}\"];\n  }}\n", prev, v, EdgeLabel(line.final.arrives));
  }
  return out + "}\n";
}

}  // namespace seam
