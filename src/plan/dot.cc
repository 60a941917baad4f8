// The plan as a Graphviz graph: one node per stage, one edge per boundary,
// labelled with what crosses it; a pipeline's handoffs are edges between ranks.
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
                     BytesText(BytesPerToken(s, h)));
}

std::string NodeId(int rank, std::string_view variant, std::string_view what) {
  return fmt::format("\"r{}_{}_{}\"", rank, variant, what);
}

// One cluster per rank and batch variant; returns the graph text.
std::string Cluster(const Plan& plan, const LinePlan& line) {
  const PlanHeader& h = plan.header();
  const std::string v(Name(line.variant));
  const int r = h.pp_rank;
  std::string out = fmt::format("  subgraph \"cluster_r{}_{}\" {{\n    label=\"rank {}, {} batches\";\n", r, v, r, v);
  std::string prev = NodeId(r, v, "start");
  out += fmt::format("    {} [label=\"{}\", shape=ellipse];\n", prev, r == 0 ? "stack entry" : "from_pp");
  for (const StagePlan& s : line.stages) {
    const std::string node = NodeId(r, v, std::to_string(s.index));
    out += fmt::format("    {} [label=\"{}\"];\n", node, StageLabel(s, h));
    out += fmt::format("    {} -> {} [label=\"{}\"];\n", prev, node, EdgeLabel(s.arrives));
    prev = node;
  }
  const bool last = line.end.kind == EndKind::kFinalNorm;
  out += fmt::format("    {} [label=\"{}\", shape=ellipse];\n", NodeId(r, v, "end"), last ? "final norm" : "to_pp");
  out += fmt::format("    {} -> {} [label=\"{}\"];\n  }}\n", prev, NodeId(r, v, "end"), EdgeLabel(line.end.arrives));
  return out;
}

}  // namespace

std::string ToDot(const Pipeline& ranks) {
  std::string out = fmt::format("digraph \"{}\" {{\n  rankdir=LR;\n  node [shape=box];\n",
                                ranks.empty() ? "" : ranks.front().header().model);
  for (const Plan& p : ranks) {
    for (const LinePlan& line : p.lines()) out += Cluster(p, line);
  }
  for (size_t r = 0; r + 1 < ranks.size(); ++r) {
    for (const LinePlan& line : ranks[r].lines()) {
      const std::string_view v = Name(line.variant);
      out += fmt::format("  {} -> {} [label=\"slices\", style=dashed];\n", NodeId(static_cast<int>(r), v, "end"),
                         NodeId(static_cast<int>(r) + 1, v, "start"));
    }
  }
  return out + "}\n";
}

std::string ToDot(const Plan& plan) { return ToDot(Pipeline{plan}); }

}  // namespace seam
