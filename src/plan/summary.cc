// A plan in a screen: a real model's plan is hundreds of table rows, most of
// them the same few seams repeated layer after layer. Here each kind of seam
// (the steps between one stage's compute and the next's) is one row: how
// often the rank crosses it, the collectives it runs and their bytes.
#include <fmt/format.h>

#include <algorithm>

#include "seam/plan_io.h"

namespace seam {
namespace {

// One kind of seam and how many times a line crosses it.
struct SeamRow {
  std::string label;        // "attention -> sparse-ffn"
  std::string collectives;  // "rs(attn_tp) ag(attn_tp)", or "-"
  double bytes = 0;         // per token, each time
  int count = 0;
};

class Seams {
 public:
  explicit Seams(const PlanHeader& h) : h_(h) {}

  // Adds the steps of one crossing; seams alike in label, collectives and
  // bytes are one row.
  void Add(std::string label, const std::vector<const std::vector<Step>*>& lists) {
    std::vector<std::string> names;
    double bytes = 0;
    for (const std::vector<Step>* steps : lists) {
      for (const Step& s : *steps) {
        bytes += BytesPerToken(s, h_);
        if (IsCollective(s.kind)) {
          names.push_back(s.group ? fmt::format("{}({})", Name(s.kind), Name(*s.group)) : std::string(Name(s.kind)));
        }
      }
    }
    const std::string collectives = names.empty() ? "-" : fmt::format("{}", fmt::join(names, " "));
    const auto same = [&](const SeamRow& r) {
      return r.label == label && r.collectives == collectives && r.bytes == bytes;
    };
    if (auto it = std::find_if(rows_.begin(), rows_.end(), same); it != rows_.end()) {
      ++it->count;
    } else {
      rows_.push_back({std::move(label), collectives, bytes, 1});
    }
  }

  std::string Render() const {
    size_t label = std::string_view("seam").size(), coll = std::string_view("collectives").size();
    for (const SeamRow& r : rows_) {
      label = std::max(label, r.label.size());
      coll = std::max(coll, r.collectives.size());
    }
    std::string out =
        fmt::format("  {:<{}}  {:>5}  {:<{}}  {}\n", "seam", label, "count", "collectives", coll, "bytes/token each");
    for (const SeamRow& r : rows_) {
      out += fmt::format("  {:<{}}  {:>5}  {:<{}}  {:>16}\n", r.label, label, r.count, r.collectives, coll,
                         BytesText(r.bytes));
    }
    return out;
  }

 private:
  const PlanHeader& h_;
  std::vector<SeamRow> rows_;
};

std::string LineSummary(const LinePlan& line, const PlanHeader& h) {
  Seams seams(h);
  // The steps since the last compute, and what ran it. A no-op stage runs
  // nothing: the seam goes on through it.
  std::string from = h.pp_rank == 0 ? "embedding" : "receive";
  std::vector<const std::vector<Step>*> pending = {&line.start};
  for (const StagePlan& s : line.stages) {
    if (s.decl.kind == StageKind::kNoOp) continue;
    const std::string kind(Name(s.decl.kind));
    pending.push_back(&s.entry);
    seams.Add(fmt::format("{} -> {}", from, kind), pending);
    const bool collective =
        std::any_of(s.compute.begin(), s.compute.end(), [](const Step& c) { return IsCollective(c.kind); });
    if (collective) seams.Add(fmt::format("{} (inside)", kind), {&s.compute});
    from = kind;
    pending = {&s.exit};
  }
  pending.push_back(&line.end.steps);
  seams.Add(fmt::format("{} -> {}", from, line.end.kind == EndKind::kFinalNorm ? "final norm" : "send"), pending);
  if (!line.end.head.empty()) seams.Add("lm head", {&line.end.head});
  return seams.Render() + fmt::format("  total {} a token\n", BytesText(BytesPerToken(line, h)));
}

}  // namespace

std::string ToSummary(const Pipeline& ranks) {
  std::string out;
  for (const Plan& p : ranks) {
    const PlanHeader& h = p.header();
    if (out.empty())
      out = fmt::format("{}\n{}\n{}", ModelLabel(h.model, h.hidden), Describe(h.config), WireText(h.wire));
    for (const LinePlan& line : p.lines()) {
      out += fmt::format("\npipeline rank {} of {} (layers {}..{}), {} batches\n", h.pp_rank, h.config.pp,
                         h.first_layer, h.last_layer - 1, Name(line.variant));
      out += LineSummary(line, h);
    }
  }
  return out;
}

}  // namespace seam
