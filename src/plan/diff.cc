// Structural diff of two plans. Step lists are aligned by a longest common
// subsequence and stage lists by stage index, so one inserted step or one
// missing stage is one line, not a difference at every later position.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "seam/plan_io.h"
#include "seam/printable.h"

namespace seam {
namespace {

// One place of an alignment: a position of each list, or of one of them
// (the element only that list has).
struct Pair {
  std::optional<size_t> a;
  std::optional<size_t> b;
};

// A longest common subsequence costs a table of a.size() * b.size(); past
// this many cells (a malformed plan file, a list thousands long) the middle
// is paired position by position instead, so a diff stays bounded.
constexpr size_t kMaxAlignCells = size_t{1} << 22;

// Pairs a[lo_a, hi_a) with b[lo_b, hi_b) position by position: the fallback
// for a middle too long to align.
void PairInOrder(size_t lo_a, size_t hi_a, size_t lo_b, size_t hi_b, std::vector<Pair>& out) {
  for (size_t i = 0; lo_a + i < hi_a || lo_b + i < hi_b; ++i) {
    Pair p;
    if (lo_a + i < hi_a) p.a = lo_a + i;
    if (lo_b + i < hi_b) p.b = lo_b + i;
    out.push_back(p);
  }
}

// The alignment of a and b in order: matched pairs where `same` holds on a
// longest common subsequence, single-sided entries for the rest.
template <class T, class Same>
std::vector<Pair> Align(const std::vector<T>& a, const std::vector<T>& b, Same same) {
  // A common prefix and suffix match as they are; only the middle needs a table.
  size_t lo = 0;
  while (lo < a.size() && lo < b.size() && same(a[lo], b[lo])) ++lo;
  size_t ea = a.size();
  size_t eb = b.size();
  while (ea > lo && eb > lo && same(a[ea - 1], b[eb - 1])) --ea, --eb;
  std::vector<Pair> out;
  for (size_t i = 0; i < lo; ++i) out.push_back({i, i});
  const size_t n = ea - lo;
  const size_t m = eb - lo;
  if (n * m > kMaxAlignCells) {
    PairInOrder(lo, ea, lo, eb, out);
  } else {
    // len[i][j]: the LCS length of a[lo+i..ea) and b[lo+j..eb).
    // (32 bits: the limit keeps every length far below 2^32.)
    std::vector<uint32_t> len((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& { return len[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        at(i, j) = same(a[lo + i], b[lo + j]) ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
      }
    }
    size_t i = 0;
    size_t j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && same(a[lo + i], b[lo + j])) {
        out.push_back({lo + i++, lo + j++});
      } else if (j == m || (i < n && at(i + 1, j) >= at(i, j + 1))) {
        out.push_back({lo + i++, std::nullopt});
      } else {
        out.push_back({std::nullopt, lo + j++});
      }
    }
  }
  for (size_t k = 0; k < a.size() - ea; ++k) out.push_back({ea + k, eb + k});
  return out;
}

// Every field of the step, so two different steps never print alike.
std::string StepText(const Step& s) {
  const std::string group = s.group ? fmt::format("({})", Name(*s.group)) : "";
  return fmt::format("{}{} {} {} -> {}, owes {} -> {}, width {}", Name(s.kind), group, Name(s.operand), Name(s.rows_in),
                     Name(s.rows_out), Name(s.owed_before), Name(s.owed_after), s.width);
}

// ShortString leaves out a plain add; the diff names every fact.
std::string BoundaryText(const Boundary& b) {
  std::string text = ShortString(b);
  if (b.value && b.value->update != UpdateKind::kPlainAdd) text += fmt::format(", update {}", Name(b.value->update));
  return text;
}

std::string RowsText(const std::optional<Rows>& r) { return r ? std::string(Name(*r)) : "-"; }

// "entry[2]", or "entry[2->3]" where the step moved.
std::string Position(const std::string& where, size_t a, size_t b) {
  return a == b ? fmt::format("{}[{}]", where, a) : fmt::format("{}[{}->{}]", where, a, b);
}

class Differ {
 public:
  explicit Differ(std::vector<std::string>& out) : out_(out) {}

  template <class T>
  void Field(const std::string& where, const T& a, const T& b) {
    if (!(a == b)) out_.push_back(fmt::format("{}: {} != {}", where, a, b));
  }

  void Header(const PlanHeader& a, const PlanHeader& b) {
    // A name is text from a file: printed escaped, compared as it is.
    if (a.model != b.model) out_.push_back(fmt::format("model: {} != {}", Printable(a.model), Printable(b.model)));
    Field("hidden", a.hidden, b.hidden);
    Field("residual_streams", a.residual_streams, b.residual_streams);
    Field("vocab", a.vocab, b.vocab);
    Field("act_dtype", std::string(Name(a.wire.act)), std::string(Name(b.wire.act)));
    Field("dispatch_dtype", std::string(Name(a.wire.dispatch)), std::string(Name(b.wire.dispatch)));
    Field("config", Describe(a.config), Describe(b.config));
    // Describe names the dense width it resolves to; a file may still spell
    // it differently (0, "the whole TP group", against the size itself).
    if (Describe(a.config) == Describe(b.config)) {
      Field("config dense_tp", a.config.dense_tp, b.config.dense_tp);
      Field("config ep", a.config.ep, b.config.ep);
    }
    Field("pp_rank", a.pp_rank, b.pp_rank);
    Field("layers", fmt::format("{}..{}", a.first_layer, a.last_layer),
          fmt::format("{}..{}", b.first_layer, b.last_layer));
  }

  // A step only one list has is one "-" or "+" line; a removed and an
  // inserted step at the same place of the alignment are one "~" line.
  void Steps(const std::string& where, const std::vector<Step>& a, const std::vector<Step>& b) {
    std::vector<size_t> removed;
    std::vector<size_t> inserted;
    for (const Pair& p : Align(a, b, std::equal_to<Step>())) {
      if (p.a && p.b) {
        Flush(where, a, removed, b, inserted);
        if (!(a[*p.a] == b[*p.b])) out_.push_back(Changed(where, a, *p.a, b, *p.b));  // paired past the limit
      } else {
        (p.a ? removed : inserted).push_back(p.a ? *p.a : *p.b);
      }
    }
    Flush(where, a, removed, b, inserted);
  }

  void Stage(const std::string& where, const StagePlan& a, const StagePlan& b) {
    Field(where + " layer", a.layer, b.layer);
    if (!(a.decl == b.decl))
      out_.push_back(fmt::format("{} declaration differs: {}", where, FirstDifference(a.decl, b.decl)));
    Field(where + " arrives", BoundaryText(a.arrives), BoundaryText(b.arrives));
    Field(where + " input", RowsText(a.input), RowsText(b.input));
    Field(where + " residual", RowsText(a.residual), RowsText(b.residual));
    Steps(where + " entry", a.entry, b.entry);
    Steps(where + " compute", a.compute, b.compute);
    Steps(where + " exit", a.exit, b.exit);
    Field(where + " departs", BoundaryText(a.departs), BoundaryText(b.departs));
  }

  // Stages are keyed by their model-wide index: a stage one plan lacks is one
  // line, and the stages after it are still compared with their own kind.
  void Stages(const std::string& v, const std::vector<StagePlan>& a, const std::vector<StagePlan>& b) {
    const auto same_index = [](const StagePlan& x, const StagePlan& y) { return x.index == y.index; };
    for (const Pair& p : Align(a, b, same_index)) {
      if (p.a && p.b && a[*p.a].index == b[*p.b].index) {
        Stage(fmt::format("{} stage {}", v, a[*p.a].index), a[*p.a], b[*p.b]);
        continue;
      }
      if (p.a) out_.push_back(fmt::format("- {} stage {}", v, StageSummary(a[*p.a])));
      if (p.b) out_.push_back(fmt::format("+ {} stage {}", v, StageSummary(b[*p.b])));
    }
  }

  void Line(const LinePlan& a, const LinePlan& b) {
    const std::string v(Name(a.variant));
    Steps(v + " start", a.start, b.start);
    Stages(v, a.stages, b.stages);
    Field(v + " end", std::string(Name(a.end.kind)), std::string(Name(b.end.kind)));
    Field(fmt::format("{} {} arrives", v, Name(a.end.kind)), BoundaryText(a.end.arrives), BoundaryText(b.end.arrives));
    Steps(fmt::format("{} {}", v, Name(a.end.kind)), a.end.steps, b.end.steps);
    Steps(v + " lm-head", a.end.head, b.end.head);
  }

 private:
  static std::string Changed(const std::string& where, const std::vector<Step>& a, size_t i, const std::vector<Step>& b,
                             size_t j) {
    return fmt::format("~ {}: {} != {}", Position(where, i, j), StepText(a[i]), StepText(b[j]));
  }

  // Writes the steps removed and inserted since the last common step, pairing
  // them in order as changed steps; empties both lists.
  void Flush(const std::string& where, const std::vector<Step>& a, std::vector<size_t>& removed,
             const std::vector<Step>& b, std::vector<size_t>& inserted) {
    const size_t changed = std::min(removed.size(), inserted.size());
    for (size_t k = 0; k < changed; ++k) out_.push_back(Changed(where, a, removed[k], b, inserted[k]));
    for (size_t k = changed; k < removed.size(); ++k) {
      out_.push_back(fmt::format("- {}[{}]: {}", where, removed[k], StepText(a[removed[k]])));
    }
    for (size_t k = changed; k < inserted.size(); ++k) {
      out_.push_back(fmt::format("+ {}[{}]: {}", where, inserted[k], StepText(b[inserted[k]])));
    }
    removed.clear();
    inserted.clear();
  }

  // "3 (layer 1, dense-ffn): 1 entry, 1 compute, 1 exit steps": what the
  // stage is, without a line per step.
  static std::string StageSummary(const StagePlan& s) {
    return fmt::format("{} (layer {}, {}): {} entry, {} compute, {} exit steps", s.index, s.layer, Name(s.decl.kind),
                       s.entry.size(), s.compute.size(), s.exit.size());
  }

  std::vector<std::string>& out_;
};

// Every structural difference of one rank's plans, without the bytes.
void Structure(const Plan& a, const Plan& b, std::vector<std::string>& out) {
  Differ d(out);
  d.Header(a.header(), b.header());
  for (const LinePlan& la : a.lines()) {
    const LinePlan* lb = b.line(la.variant);
    if (lb == nullptr) {
      out.push_back(fmt::format("only the first plan has {} batches", Name(la.variant)));
    } else {
      d.Line(la, *lb);
    }
  }
  for (const LinePlan& lb : b.lines()) {
    if (a.line(lb.variant) == nullptr)
      out.push_back(fmt::format("only the second plan has {} batches", Name(lb.variant)));
  }
}

// The bytes a rank moves per token on its `v` line; nothing when it has none.
std::optional<double> LineBytes(const Plan& p, Variant v) {
  const LinePlan* line = p.line(v);
  if (line == nullptr) return std::nullopt;
  return BytesPerToken(*line, p.header());
}

// The bytes of every rank's `v` line, in rank order; nothing when a rank
// lacks the line (so a total never adds up part of a pipeline).
std::optional<std::vector<double>> RankBytes(std::span<const Plan> ranks, Variant v) {
  std::vector<double> out;
  for (const Plan& p : ranks) {
    const std::optional<double> bytes = LineBytes(p, v);
    if (!bytes) return std::nullopt;
    out.push_back(*bytes);
  }
  return out;
}

double Sum(const std::vector<double>& xs) {
  double total = 0;
  for (const double x : xs) total += x;
  return total;
}

// "448 -> 384 (-64)". A difference of fractions that is whole up to rounding
// prints whole.
std::string Change(double a, double b) {
  double d = b - a;
  if (std::abs(d - std::round(d)) < 1e-9 * std::max(1.0, std::abs(d))) d = std::round(d);
  const std::string delta = d == 0 ? "no change" : fmt::format("{}{}", d > 0 ? "+" : "-", BytesText(std::abs(d)));
  return fmt::format("{} -> {} ({})", BytesText(a), BytesText(b), delta);
}

// The change in bytes per token of each batch variant both sides have on
// every rank: per rank, and in total where there are several ranks.
void BytesSummary(std::span<const Plan> a, std::span<const Plan> b, std::vector<std::string>& out) {
  const bool several = a.size() > 1 || b.size() > 1;
  for (const Variant v : {Variant::kOrdinary, Variant::kInputScattered}) {
    const std::optional<std::vector<double>> ra = RankBytes(a, v);
    const std::optional<std::vector<double>> rb = RankBytes(b, v);
    if (!ra || !rb) continue;
    const std::string total = Change(Sum(*ra), Sum(*rb));
    if (!several) {
      out.push_back(fmt::format("bytes/token ({}): {}", Name(v), total));
      continue;
    }
    for (size_t r = 0; r < std::min(ra->size(), rb->size()); ++r) {
      out.push_back(fmt::format("rank {}: bytes/token ({}): {}", r, Name(v), Change((*ra)[r], (*rb)[r])));
    }
    out.push_back(fmt::format("total bytes/token ({}): {}", Name(v), total));
  }
}

}  // namespace

std::vector<std::string> Diff(const Pipeline& a, const Pipeline& b) {
  std::vector<std::string> out;
  if (a.size() != b.size()) out.push_back(fmt::format("pipeline ranks: {} != {}", a.size(), b.size()));
  for (size_t r = 0; r < std::min(a.size(), b.size()); ++r) {
    std::vector<std::string> rank;
    Structure(a[r], b[r], rank);
    for (const std::string& d : rank) out.push_back(a.size() > 1 ? fmt::format("rank {}: {}", r, d) : d);
  }
  if (!out.empty()) BytesSummary(a, b, out);
  return out;
}

std::vector<std::string> Diff(const Plan& a, const Plan& b) {
  std::vector<std::string> out;
  Structure(a, b, out);
  if (!out.empty()) BytesSummary(std::span(&a, 1), std::span(&b, 1), out);
  return out;
}

}  // namespace seam
