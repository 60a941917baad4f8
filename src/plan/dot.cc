// The plan as a Graphviz graph, top to bottom: one node per stage, one edge
// per boundary, labelled with the collectives that cross it and the state of
// the boundary; a pipeline's handoffs are edges between ranks. A run of
// repeated layers (a real model's 26 identical MoE layers) is drawn once, in
// a box that names the layers it stands for, so the graph stays readable.
#include <fmt/format.h>

#include <span>

#include "seam/plan_io.h"

namespace seam {
namespace {

// A graph name is free text from a plan file; a quote in it must not end
// the string early.
std::string Escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string BoundaryLabel(const Boundary& b) {
  std::string value = "written";
  if (b.value) {
    value = std::string(Name(b.value->rows));
    if (b.value->owed != Owed::kNothing) value += fmt::format(" owes {}", Name(b.value->owed));
  }
  return fmt::format("value: {}\\nresidual: {}", value, b.residual ? Name(*b.residual) : "none");
}

// "rs(attn_tp) 64 B/token" for each collective of `steps`, one per line.
std::string CollectiveLines(const std::vector<Step>& steps, const PlanHeader& h) {
  std::string out;
  for (const Step& s : steps) {
    if (!IsCollective(s.kind)) continue;
    const std::string group = s.group ? fmt::format("({})", Name(*s.group)) : "";
    out += fmt::format("{}{} {} B/token\\n", Name(s.kind), group, BytesText(BytesPerToken(s, h)));
  }
  return out;
}

// What crosses a boundary: the collectives of the exit that leaves it and of
// the entry that arrives, then the state the entry was bound for.
std::string EdgeLabel(const std::vector<Step>& leaving, const std::vector<Step>& entering, const Boundary& arrives,
                      const PlanHeader& h) {
  return CollectiveLines(leaving, h) + CollectiveLines(entering, h) + BoundaryLabel(arrives);
}

std::string StageFacts(const StagePlan& s) {
  return fmt::format("input {}, residual {}", s.input ? Name(*s.input) : "-", s.residual ? Name(*s.residual) : "-");
}

std::string NodeId(int rank, std::string_view variant, std::string_view what) {
  return fmt::format("\"r{}_{}_{}\"", rank, variant, what);
}

// The same stage plan but for its place in the stack.
bool SameButPlace(const StagePlan& a, const StagePlan& b) {
  StagePlan moved = a;
  moved.index = b.index;
  moved.layer = b.layer;
  return moved == b;
}

bool SameLayer(std::span<const StagePlan> a, std::span<const StagePlan> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameButPlace(a[i], b[i])) return false;
  }
  return true;
}

// A layer's stages, and how many layers in a row repeat them.
struct LayerRun {
  std::span<const StagePlan> stages;  // the first layer's
  int layers = 1;
};

// The stages split into layers (consecutive stages of one layer number),
// consecutive equal layers merged into one run.
std::vector<LayerRun> LayerRuns(const std::vector<StagePlan>& stages) {
  std::vector<LayerRun> runs;
  for (size_t i = 0; i < stages.size();) {
    size_t end = i + 1;
    while (end < stages.size() && stages[end].layer == stages[i].layer) ++end;
    const std::span<const StagePlan> layer(stages.data() + i, end - i);
    if (!runs.empty() && SameLayer(runs.back().stages, layer)) {
      ++runs.back().layers;
    } else {
      runs.push_back({layer, 1});
    }
    i = end;
  }
  return runs;
}

// Draws one rank's line top to bottom, keeping the last node drawn and the
// steps that leave it, so each edge names what crosses it.
class LineDrawer {
 public:
  LineDrawer(const PlanHeader& h, const LinePlan& line)
      : h_(h), v_(Name(line.variant)), prev_(NodeId(h.pp_rank, v_, "start")), leaving_(&line.start) {}

  std::string Draw(const LinePlan& line) {
    out_ += fmt::format("    {} [label=\"{}\", shape=ellipse];\n", prev_, h_.pp_rank == 0 ? "stack entry" : "from_pp");
    for (const LayerRun& run : LayerRuns(line.stages)) {
      if (run.layers == 1) {
        for (const StagePlan& s : run.stages) Single(s);
      } else {
        Repeated(run);
      }
    }
    const bool last = line.end.kind == EndKind::kFinalNorm;
    const std::string end = NodeId(h_.pp_rank, v_, "end");
    out_ += fmt::format("    {} [label=\"{}\", shape=ellipse];\n", end, last ? "final norm" : "to_pp");
    Edge(end, line.end.steps, line.end.arrives);
    return std::move(out_);
  }

 private:
  std::string SingleLabel(const StagePlan& s) const {
    return fmt::format("{} {} (layer {})\\n{}\\n{} B/token", s.index, Name(s.decl.kind), s.layer, StageFacts(s),
                       BytesText(BytesPerToken(s, h_)));
  }

  std::string RepeatedLabel(const StagePlan& s) const {
    return fmt::format("{}\\n{}\\n{} B/token per layer", Name(s.decl.kind), StageFacts(s),
                       BytesText(BytesPerToken(s, h_)));
  }

  // The run's first layer stands for all of it, in a box named by the
  // layers; a dashed edge back to its top is the step from one layer to the
  // next, labelled with what crosses between them. Edges are written outside
  // the box: Graphviz puts a node in every subgraph that mentions it.
  void Repeated(const LayerRun& run) {
    const StagePlan& first = run.stages.front();
    const int last_layer = first.layer + run.layers - 1;
    out_ += fmt::format("    subgraph \"cluster_r{}_{}_layers_{}\" {{\n      label=\"layers {}..{} (x{})\";\n",
                        h_.pp_rank, v_, first.layer, first.layer, last_layer, run.layers);
    for (const StagePlan& s : run.stages) out_ += fmt::format("      {} [label=\"{}\"];\n", Node(s), RepeatedLabel(s));
    out_ += "    }\n";
    for (const StagePlan& s : run.stages) Enter(s);
    const std::string back = CollectiveLines(run.stages.back().exit, h_) + CollectiveLines(first.entry, h_);
    out_ += fmt::format("    {} -> {} [label=\"{}next layer\", style=dashed, constraint=false];\n", prev_, Node(first),
                        back);
  }

  void Single(const StagePlan& s) {
    out_ += fmt::format("    {} [label=\"{}\"];\n", Node(s), SingleLabel(s));
    Enter(s);
  }

  // The edge into the stage; its exit leaves by the next edge.
  void Enter(const StagePlan& s) {
    Edge(Node(s), s.entry, s.arrives);
    leaving_ = &s.exit;
  }

  void Edge(const std::string& to, const std::vector<Step>& entering, const Boundary& arrives) {
    out_ += fmt::format("    {} -> {} [label=\"{}\"];\n", prev_, to, EdgeLabel(*leaving_, entering, arrives, h_));
    prev_ = to;
  }

  std::string Node(const StagePlan& s) const { return NodeId(h_.pp_rank, v_, std::to_string(s.index)); }

  const PlanHeader& h_;
  std::string v_;
  std::string prev_;
  const std::vector<Step>* leaving_;
  std::string out_;
};

// One cluster per rank and batch variant; returns the graph text.
std::string Cluster(const Plan& plan, const LinePlan& line) {
  const int r = plan.header().pp_rank;
  const std::string_view v = Name(line.variant);
  return fmt::format("  subgraph \"cluster_r{}_{}\" {{\n    label=\"rank {}, {} batches\";\n{}  }}\n", r, v, r, v,
                     LineDrawer(plan.header(), line).Draw(line));
}

}  // namespace

std::string ToDot(const Pipeline& ranks) {
  std::string out = fmt::format("digraph \"{}\" {{\n  rankdir=TB;\n  node [shape=box];\n",
                                ranks.empty() ? "" : Escaped(ranks.front().header().model));
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
