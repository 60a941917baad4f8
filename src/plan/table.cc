// The plan as a table for people: one row per step.
#include <fmt/format.h>

#include <map>

#include "seam/plan_io.h"
#include "seam/plan_walk.h"
#include "seam/printable.h"

namespace seam {
namespace {

using Row = std::vector<std::string>;

const Row kHeader = {"stage",   "layer", "kind", "residual", "side",       "step",
                     "operand", "group", "rows", "owes",     "bytes/token"};

std::string Arrow(std::string_view a, std::string_view b) {
  return a == b ? std::string(a) : fmt::format("{} -> {}", a, b);
}

std::string Bytes(double b) { return BytesText(b); }

Row StepRow(const Step& s, std::string_view side, const PlanHeader& h) {
  return {"",
          "",
          "",
          "",
          std::string(side),
          std::string(Name(s.kind)),
          std::string(Name(s.operand)),
          s.group ? std::string(Name(*s.group)) : "-",
          Arrow(Name(s.rows_in), Name(s.rows_out)),
          Arrow(Name(s.owed_before), Name(s.owed_after)),
          Bytes(BytesPerToken(s, h))};
}

// A stage's rows from `first` on (its entry, compute and exit) are labelled
// on the first; a stage without steps passes the pending add on.
void LabelStage(std::vector<Row>& rows, size_t first, const StagePlan& s) {
  if (rows.size() == first) rows.push_back({"", "", "", "", "-", "(passes the pending add on)", "", "", "", "", "0"});
  rows[first][0] = std::to_string(s.index);
  rows[first][1] = std::to_string(s.layer);
  rows[first][2] = std::string(Name(s.decl.kind));
  rows[first][3] = s.residual ? std::string(Name(*s.residual)) : "-";
}

std::string Render(const std::vector<Row>& rows) {
  std::vector<size_t> width(kHeader.size(), 0);
  for (const Row& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const Row& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      const bool numeric = c == 0 || c == 1 || c + 1 == r.size();
      line += numeric ? fmt::format("{:>{}}", r[c], width[c]) : fmt::format("{:<{}}", r[c], width[c]);
      if (c + 1 < r.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

double Sum(const std::vector<Step>& steps, const PlanHeader& h) {
  double total = 0;
  for (const Step& s : steps) total += BytesPerToken(s, h);
  return total;
}

std::string_view EndLabel(EndKind k) { return k == EndKind::kFinalNorm ? "final norm" : "send"; }

std::string Totals(const LinePlan& line, const PlanHeader& h) {
  std::map<int, double> per_layer;
  for (const StagePlan& s : line.stages) per_layer[s.layer] += BytesPerToken(s, h);
  std::vector<std::string> parts;
  // The embedding moves nothing itself: its sum completes in the first entry.
  if (h.pp_rank > 0) parts.push_back(fmt::format("receive: {}", Bytes(Sum(line.start, h))));
  // Runs of consecutive layers that move the same bytes print as one part.
  for (auto it = per_layer.begin(); it != per_layer.end();) {
    auto end = std::next(it);
    while (end != per_layer.end() && end->second == it->second && end->first == std::prev(end)->first + 1) ++end;
    const int last = std::prev(end)->first;
    parts.push_back(last == it->first ? fmt::format("layer {}: {}", it->first, Bytes(it->second))
                                      : fmt::format("layers {}..{}: {} each", it->first, last, Bytes(it->second)));
    it = end;
  }
  if (!line.end.steps.empty()) {
    parts.push_back(fmt::format("{}: {}", EndLabel(line.end.kind), Bytes(Sum(line.end.steps, h))));
  }
  if (!line.end.head.empty()) parts.push_back(fmt::format("lm head: {}", Bytes(Sum(line.end.head, h))));
  return fmt::format("bytes per token per rank: {}; total {}\n", fmt::join(parts, ", "), Bytes(BytesPerToken(line, h)));
}

// Rows for the steps outside any stage (receive, final norm, send).
void AddSteps(std::vector<Row>& rows, const std::vector<Step>& steps, std::string_view side, std::string_view label,
              const PlanHeader& h) {
  const size_t first = rows.size();
  for (const Step& s : steps) rows.push_back(StepRow(s, side, h));
  if (rows.size() > first) rows[first][2] = std::string(label);
}

}  // namespace

std::string WireText(const WireDtypes& w) {
  if (w.dispatch == w.act) return fmt::format("wire: {} activations\n", Name(w.act));
  const std::string scales =
      w.dispatch == WireDtype::kFp8 ? fmt::format(", with an fp32 scale per {} elements", kFp8ScaleBlock) : "";
  return fmt::format("wire: {} activations, {} all-to-all dispatch{}\n", Name(w.act), Name(w.dispatch), scales);
}

std::string ToTable(const Pipeline& ranks) {
  std::string out;
  for (const Plan& p : ranks) out += (out.empty() ? "" : "\n") + ToTable(p);
  return out;
}

std::string ToTable(const Plan& plan) {
  const PlanHeader& h = plan.header();
  std::string out = fmt::format("{} on pipeline rank {} of {} (layers {}..{})\n{}\n", ModelLabel(h.model, h.hidden),
                                h.pp_rank, h.config.pp, h.first_layer, h.last_layer - 1, Describe(h.config));
  out += WireText(h.wire);
  out += fmt::format("rows: full = every row of the batch, attn = {}, slice = this rank's 1/attn_tp share of them\n",
                     h.config.cp > 1 ? "this CP rank's zig-zag shard of its attention-DP group's rows"
                                     : "this attention-DP group's rows");
  for (const LinePlan& line : plan.lines()) {
    std::vector<Row> rows = {kHeader};
    const bool last = line.end.kind == EndKind::kFinalNorm;
    size_t stage_first = 0;  // the first row of the stage being written
    WalkLine(line, [&](const LinePlace& at, const std::vector<Step>& steps) {
      switch (at.part) {
        case LinePart::kStart: return AddSteps(rows, steps, "start", h.pp_rank == 0 ? "embedding" : "from_pp", h);
        case LinePart::kEntry: stage_first = rows.size(); break;
        case LinePart::kCompute:
        case LinePart::kExit: break;
        case LinePart::kEnd: return AddSteps(rows, steps, Name(line.end.kind), last ? "final-norm" : "to_pp", h);
        case LinePart::kHead: return AddSteps(rows, steps, "head", "lm-head", h);
      }
      const std::string_view side = at.part == LinePart::kEntry     ? "entry"
                                    : at.part == LinePart::kCompute ? "compute"
                                                                    : "exit";
      for (const Step& s : steps) rows.push_back(StepRow(s, side, h));
      if (at.part == LinePart::kExit) LabelStage(rows, stage_first, *at.stage);
    });
    out += fmt::format("\n{} batches\n", Name(line.variant));
    out += Render(rows);
    out += Totals(line, h);
  }
  return out;
}

}  // namespace seam
