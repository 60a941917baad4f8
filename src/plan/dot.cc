// The plan as a Graphviz graph, top to bottom, under a title that names the
// model and the configuration: one node per stage, one edge per boundary,
// labelled with the collectives that cross it and the state of the
// boundary; an all-to-all MoE's dispatch and combine are a pair of edges to
// and from its experts; the LM head is a node after the final norm, its
// gather on the edge into it; a pipeline's handoffs are edges between ranks.
// Every collective is drawn once, on one edge, so the bytes on the edges add
// up to the plan's bytes per token. A run of repeated layers (a real model's
// 26 identical MoE layers) is drawn once, in a box that names the layers it
// stands for; a byte count that crosses more than one boundary says how many
// ("x26"), so the graph stays readable.
#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "seam/plan_io.h"
#include "seam/printable.h"

namespace seam {
namespace {

// The name the picture gives a group: attn_tp, dp and ep are parts of the TP
// group, and one that is the whole TP group under this configuration (attn_tp
// without attention DP, dp with one rank per DP group, ep spanning TP) is
// called tp, so each set of ranks has one name throughout the graph.
std::string_view GroupText(const ParallelConfig& cfg, Group g) {
  const bool part_of_tp = g == Group::kAttnTp || g == Group::kDp || g == Group::kEp;
  return part_of_tp && GroupSize(cfg, g) == cfg.tp ? Name(Group::kTp) : Name(g);
}

std::string BoundaryLabel(const Boundary& b, const ParallelConfig& cfg) {
  std::string value = "written";
  if (b.value) {
    value = std::string(Name(b.value->rows));
    if (b.value->owed != Owed::kNothing) value += fmt::format(" owes {}", GroupText(cfg, GroupOf(b.value->owed)));
  }
  return fmt::format("value: {}\\nresidual: {}", value, b.residual ? Name(*b.residual) : "none");
}

// "rs(attn_tp) 64 B/token" for each collective of `steps`, one per line,
// with " x6" when the edge stands for `times` > 1 crossings.
std::string CollectiveLines(std::span<const Step> steps, const PlanHeader& h, int times) {
  std::string out;
  for (const Step& s : steps) {
    if (!IsCollective(s.kind)) continue;
    const std::string group = s.group ? fmt::format("({})", GroupText(h.config, *s.group)) : "";
    out += fmt::format("{}{} {} B/token{}\\n", Name(s.kind), group, BytesText(BytesPerToken(s, h)),
                       times > 1 ? fmt::format(" x{}", times) : "");
  }
  return out;
}

// Lines without the last one's end, for an edge that states no boundary.
std::string Lines(std::string text) {
  if (text.ends_with("\\n")) text.resize(text.size() - 2);
  return text;
}

// What crosses a boundary: the collectives of the exit that leaves it and of
// the entry that arrives, then the state the entry was bound for.
std::string EdgeLabel(const std::vector<Step>& leaving, const std::vector<Step>& entering, const Boundary& arrives,
                      const PlanHeader& h, int times) {
  return CollectiveLines(leaving, h, times) + CollectiveLines(entering, h, times) + BoundaryLabel(arrives, h.config);
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
      : h_(h), v_(Name(line.variant)), prev_(NodeId(h.pp_rank, v_, "start")), leaving_(line.start) {}

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
    Edge(end, line.end.steps, line.end.arrives, 1);
    if (!line.end.head.empty()) Head(line.end.head);
    return std::move(out_);
  }

 private:
  static std::string SingleLabel(const StagePlan& s) {
    return fmt::format("{} {} (layer {})\\n{}", s.index, Name(s.decl.kind), s.layer, StageFacts(s));
  }

  static std::string RepeatedLabel(const StagePlan& s) {
    return fmt::format("{}\\n{}", Name(s.decl.kind), StageFacts(s));
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
    for (const StagePlan& s : run.stages) {
      out_ += fmt::format("      {} [label=\"{}\"];\n", Node(s), RepeatedLabel(s));
      SideNode(s, "      ");
    }
    out_ += "    }\n";
    // Into the run once; between its stages and within them once a layer.
    for (size_t i = 0; i < run.stages.size(); ++i) Enter(run.stages[i], i == 0 ? 1 : run.layers, run.layers);
    const int between = run.layers - 1;
    const std::string back = CollectiveLines(leaving_, h_, between) + CollectiveLines(Entering(first), h_, between);
    out_ += fmt::format("    {} -> {} [label=\"{}next layer\", style=dashed, constraint=false];\n", prev_, Node(first),
                        back);
  }

  void Single(const StagePlan& s) {
    out_ += fmt::format("    {} [label=\"{}\"];\n", Node(s), SingleLabel(s));
    SideNode(s, "    ");
    Enter(s, 1, 1);
  }

  // The steps of a stage's compute before its compute step and after it.
  static std::pair<std::span<const Step>, std::span<const Step>> AroundCompute(const StagePlan& s) {
    const std::span<const Step> all(s.compute);
    size_t split = 0;
    while (split < all.size() && all[split].kind != StepKind::kCompute) ++split;
    return {all.first(split), all.subspan(split)};
  }

  // An all-to-all MoE's dispatch and combine go out to its experts, a node
  // beside it, and back.
  static bool HasSide(const StagePlan& s) {
    return std::any_of(s.compute.begin(), s.compute.end(), [](const Step& x) { return x.kind == StepKind::kDispatch; });
  }

  // What arrives at the stage: its entry and, but for an all-to-all MoE, the
  // collectives its compute runs before the compute step (an input-scattered
  // attention's gather of its input); what leaves: those after it, then its
  // exit.
  static std::vector<Step> Entering(const StagePlan& s) {
    std::vector<Step> out = s.entry;
    if (HasSide(s)) return out;
    const std::span<const Step> before = AroundCompute(s).first;
    out.insert(out.end(), before.begin(), before.end());
    return out;
  }
  static std::vector<Step> Leaving(const StagePlan& s) {
    std::vector<Step> out;
    if (!HasSide(s)) out.assign(AroundCompute(s).second.begin(), AroundCompute(s).second.end());
    out.insert(out.end(), s.exit.begin(), s.exit.end());
    return out;
  }

  std::string Side(const StagePlan& s) const { return NodeId(h_.pp_rank, v_, fmt::format("{}_experts", s.index)); }

  void SideNode(const StagePlan& s, std::string_view indent) {
    if (!HasSide(s)) return;
    std::string label = "experts";
    for (const Step& x : s.compute) {
      if (x.kind == StepKind::kDispatch && x.group) {
        label =
            fmt::format("experts\\nover {} ({} ranks)", GroupText(h_.config, *x.group), GroupSize(h_.config, *x.group));
        break;
      }
    }
    out_ += fmt::format("{}{} [label=\"{}\", shape=box3d];\n{}{{ rank=same; {}; {}; }}\n", indent, Side(s), label,
                        indent, Node(s), Side(s));
  }

  // The edge into the stage (`times` crossings), and those to and from its
  // experts (`runs` of its compute).
  void Enter(const StagePlan& s, int times, int runs) {
    Edge(Node(s), Entering(s), s.arrives, times);
    leaving_ = Leaving(s);
    if (!HasSide(s)) return;
    const auto [out, back] = AroundCompute(s);
    out_ += fmt::format("    {} -> {} [label=\"{}\"];\n", Node(s), Side(s), Lines(CollectiveLines(out, h_, runs)));
    out_ += fmt::format("    {} -> {} [label=\"{}\"];\n", Side(s), Node(s), Lines(CollectiveLines(back, h_, runs)));
  }

  void Edge(const std::string& to, const std::vector<Step>& entering, const Boundary& arrives, int times) {
    out_ += fmt::format("    {} -> {} [label=\"{}\"];\n", prev_, to, EdgeLabel(leaving_, entering, arrives, h_, times));
    prev_ = to;
  }

  // The LM head after the final norm: its collectives (the vocabulary's
  // gather) on the edge into it.
  void Head(const std::vector<Step>& head) {
    const std::string node = NodeId(h_.pp_rank, v_, "lm_head");
    out_ += fmt::format("    {} [label=\"lm head\\nlogits over {} columns\", shape=box];\n", node, h_.vocab);
    out_ += fmt::format("    {} -> {} [label=\"{}\"];\n", prev_, node, Lines(CollectiveLines(head, h_, 1)));
  }

  std::string Node(const StagePlan& s) const { return NodeId(h_.pp_rank, v_, std::to_string(s.index)); }

  const PlanHeader& h_;
  std::string v_;
  std::string prev_;
  std::vector<Step> leaving_;
  std::string out_;
};

// One cluster per rank and batch variant, its label the bytes the rank moves
// per token; returns the graph text.
std::string Cluster(const Plan& plan, const LinePlan& line) {
  const PlanHeader& h = plan.header();
  const std::string_view v = Name(line.variant);
  return fmt::format(
      "  subgraph \"cluster_r{}_{}\" {{\n    label=\"rank {} (layers {}..{}), {} batches: {} B/token in all\";\n{}  "
      "}}\n",
      h.pp_rank, v, h.pp_rank, h.first_layer, h.last_layer - 1, v, BytesText(BytesPerToken(line, h)),
      LineDrawer(h, line).Draw(line));
}

// The title: the model, the configuration (as the table's header says it)
// and the dtypes the bytes are counted in.
std::string Title(const PlanHeader& h) {
  std::string wire = fmt::format("wire: {} activations", Name(h.wire.act));
  if (h.wire.dispatch != h.wire.act) wire += fmt::format(", {} all-to-all dispatch", Name(h.wire.dispatch));
  return fmt::format("{}\\n{}\\n{}; bytes per token per rank, each on one edge", DotText(h.model), Describe(h.config),
                     wire);
}

}  // namespace

std::string ToDot(const Pipeline& ranks) {
  std::string out = fmt::format("digraph \"{}\" {{\n  rankdir=TB;\n  node [shape=box];\n",
                                ranks.empty() ? "" : DotText(ranks.front().header().model));
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
  // Last, so that no cluster takes the title's label or size for its own.
  if (!ranks.empty())
    out += fmt::format("  labelloc=t;\n  fontsize=18;\n  label=\"{}\";\n", Title(ranks.front().header()));
  return out + "}\n";
}

std::string ToDot(const Plan& plan) { return ToDot(Pipeline{plan}); }

}  // namespace seam
