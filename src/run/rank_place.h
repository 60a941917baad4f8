// Where a rank stands in a run: the rows it holds of the batch, the groups
// it joins and its pipeline neighbours. The interpreter and the recorder
// both place their steps with it.
#pragma once

#include <vector>

#include "seam/runtime/batch.h"
#include "seam/runtime/comm.h"
#include "seam/topology.h"

namespace seam::exec {

class RankPlace {
 public:
  RankPlace(const BatchLayout& layout, const ParallelConfig& cfg, int rank)
      : layout_(layout), cfg_(cfg), rank_(rank), me_(CoordOf(cfg, rank)) {}

  const RankCoord& me() const { return me_; }
  RowSpan Span(Rows r) const { return SpanOf(layout_, cfg_, r, me_); }
  RankGroup GroupFor(Group g) const { return {GroupRanks(cfg_, g, rank_)}; }
  // Each member's rows of `r`.
  std::vector<RowSpan> MemberSpans(const RankGroup& g, Rows r) const {
    std::vector<RowSpan> out;
    for (int rank : g.ranks) out.push_back(SpanOf(layout_, cfg_, r, CoordOf(cfg_, rank)));
    return out;
  }
  // How many rows of `r` each member holds: what a gather receives from each.
  std::vector<int> MemberRows(const RankGroup& g, Rows r) const {
    std::vector<int> out;
    for (const RowSpan& sp : MemberSpans(g, r)) out.push_back(sp.rows());
    return out;
  }
  // A reduce-scatter from this rank's rows `in` onto each member's rows
  // `out`, as spans within the rows it sums.
  std::vector<RowSpan> ScatterSpans(const RankGroup& g, Rows in, Rows out) const {
    const RowSpan from = Span(in);
    std::vector<RowSpan> spans = MemberSpans(g, out);
    for (RowSpan& sp : spans) sp = {sp.begin - from.begin, sp.end - from.begin};
    return spans;
  }
  // The rank `step` pipeline ranks on, at the same DP and attention-TP place.
  int Neighbour(int step) const {
    RankCoord c = me_;
    c.pp_rank += step;
    return GlobalRank(cfg_, c);
  }

 private:
  const BatchLayout& layout_;
  const ParallelConfig& cfg_;
  int rank_;
  RankCoord me_;
};

}  // namespace seam::exec
