// The collectives, built once from a backend's exchange and point-to-point.
#include "seam/runtime/comm.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/enum_text.h"
#include "seam/runtime/tree_sum.h"

namespace seam {

int RankGroup::IndexOf(int rank) const {
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] == rank) return static_cast<int>(i);
  }
  SEAM_CHECK(false, fmt::format("rank {} is not in the group {}", rank, fmt::join(ranks, ",")));
}

int64_t CommStats::calls() const {
  int64_t c = 0;
  for (const auto& [name, op] : ops) c += op.calls;
  return c;
}

int64_t CommStats::elements_sent() const {
  int64_t e = 0;
  for (const auto& [name, op] : ops) e += op.elements_sent;
  return e;
}

constexpr auto kCommOpNames = EnumNames<CommOp>("operation", {{CommOp::kAllGather, "all-gather"},
                                                              {CommOp::kAllReduce, "all-reduce"},
                                                              {CommOp::kAllToAll, "all-to-all"},
                                                              {CommOp::kBarrier, "barrier"},
                                                              {CommOp::kRecv, "recv"},
                                                              {CommOp::kReduceScatter, "reduce-scatter"},
                                                              {CommOp::kSend, "send"}});
static_assert(kCommOpNames.rows.size() == kCommOps);

std::string_view Name(CommOp op) { return kCommOpNames.Name(op); }

void Comm::Count(CommOp op, int64_t elements_sent) {
  CommStats::Op& o = stats_.ops[op];
  ++o.calls;
  o.elements_sent += elements_sent;
}

void Comm::Count(CommOp op, const RankGroup& g, std::span<const Tensor> to_each) {
  const int me = g.IndexOf(rank_);
  int64_t sent = 0;
  for (size_t j = 0; j < to_each.size(); ++j) {
    if (static_cast<int>(j) != me) sent += static_cast<int64_t>(to_each[j].size());
  }
  Count(op, sent);
}

Tensor Comm::ReduceScatter(const RankGroup& g, const Tensor& partial, std::span<const RowSpan> spans) {
  SEAM_CHECK(static_cast<int>(spans.size()) == g.size(), "one row span per member");
  CommCall c{CommOp::kReduceScatter, g.ranks, -1, partial.rows(), partial.cols()};
  for (const RowSpan& s : spans) c.parts.push_back(s.rows());
  Log(std::move(c));
  return DoReduceScatter(g, partial, spans);
}

Tensor Comm::AllGather(const RankGroup& g, const Tensor& mine, std::span<const int> rows_of) {
  SEAM_CHECK(static_cast<int>(rows_of.size()) == g.size(), "one row count per member");
  SEAM_CHECK(rows_of[static_cast<size_t>(g.IndexOf(rank_))] == mine.rows(), "all-gather of another row count");
  Log({CommOp::kAllGather, g.ranks, -1, mine.rows(), mine.cols(), {rows_of.begin(), rows_of.end()}});
  return DoAllGather(g, mine, rows_of);
}

Tensor Comm::AllReduce(const RankGroup& g, const Tensor& partial) {
  Log({CommOp::kAllReduce, g.ranks, -1, partial.rows(), partial.cols()});
  return DoAllReduce(g, partial);
}

std::vector<Tensor> Comm::AllToAll(const RankGroup& g, std::vector<Tensor> to_each) {
  SEAM_CHECK(static_cast<int>(to_each.size()) == g.size(), "one tensor per member");
  CommCall c{CommOp::kAllToAll, g.ranks};
  for (const Tensor& t : to_each) {
    c.rows += t.rows();
    c.cols = std::max<int64_t>(c.cols, t.cols());
    c.parts.push_back(t.rows());
  }
  Log(std::move(c));
  return DoAllToAll(g, std::move(to_each));
}

Tensor Comm::DoReduceScatter(const RankGroup& g, const Tensor& partial, std::span<const RowSpan> spans) {
  const int n = g.size();
  const int me = g.IndexOf(rank_);
  std::vector<Tensor> to_each;
  for (const RowSpan& s : spans) to_each.push_back(partial.RowRange(s.begin, s.end));
  std::vector<Shape> expect(static_cast<size_t>(n), Shape{spans[static_cast<size_t>(me)].rows(), partial.cols()});
  Count(CommOp::kReduceScatter, g, to_each);
  const std::vector<Tensor> parts = Exchange(g, std::move(to_each), expect);
  return TreeSum(parts);
}

Tensor Comm::DoAllGather(const RankGroup& g, const Tensor& mine, std::span<const int> rows_of) {
  const int n = g.size();
  std::vector<Tensor> to_each(static_cast<size_t>(n), mine);
  std::vector<Shape> expect;
  for (int r : rows_of) expect.push_back({r, mine.cols()});
  Count(CommOp::kAllGather, g, to_each);
  return ConcatRows(Exchange(g, std::move(to_each), expect));
}

Tensor Comm::DoAllReduce(const RankGroup& g, const Tensor& partial) {
  const std::vector<RowSpan> spans = EvenSpans(partial.rows(), g.size());
  std::vector<int> rows_of;
  for (const RowSpan& s : spans) rows_of.push_back(s.rows());
  // The halves run as the backend runs them, not as calls of their own.
  return DoAllGather(g, DoReduceScatter(g, partial, spans), rows_of);
}

std::vector<Tensor> Comm::DoAllToAll(const RankGroup& g, std::vector<Tensor> to_each) {
  Count(CommOp::kAllToAll, g, to_each);
  return Exchange(g, std::move(to_each), {});
}

void Comm::Send(int peer, const Tensor& t) {
  CommStats::Op& o = stats_.ops[CommOp::kSend];
  ++o.calls;
  o.elements_sent += static_cast<int64_t>(t.size());
  Log({CommOp::kSend, {}, peer, t.rows(), t.cols()});
  SendTo(peer, t);
}

Tensor Comm::Recv(int peer, int rows, int cols) {
  ++stats_.ops[CommOp::kRecv].calls;
  Log({CommOp::kRecv, {}, peer, rows, cols});
  return RecvFrom(peer, {rows, cols});
}

void Comm::Tally(const CommCall& c) {
  SEAM_CHECK(!moves_data(), "a tally on a backend that moves data");
  const RankGroup g{c.group};
  const auto others = [&](std::span<const int> rows) {
    const int me = g.IndexOf(rank_);
    int64_t n = 0;
    for (size_t j = 0; j < rows.size(); ++j) n += static_cast<int>(j) == me ? 0 : int64_t{rows[j]} * c.cols;
    return n;
  };
  switch (c.op) {
    case CommOp::kAllReduce: {  // a reduce-scatter over even spans, then an all-gather of each span
      std::vector<int> spans;
      for (const RowSpan& s : EvenSpans(static_cast<int>(c.rows), g.size())) spans.push_back(s.rows());
      Count(CommOp::kReduceScatter, others(spans));
      Count(CommOp::kAllGather, int64_t{g.size() - 1} * spans[static_cast<size_t>(g.IndexOf(rank_))] * c.cols);
      break;
    }
    case CommOp::kAllGather: Count(c.op, int64_t{g.size() - 1} * c.rows * c.cols); break;
    case CommOp::kReduceScatter:
    case CommOp::kAllToAll: Count(c.op, others(c.parts)); break;
    case CommOp::kSend: Count(c.op, c.rows * c.cols); break;
    case CommOp::kRecv: ++stats_.ops[CommOp::kRecv].calls; break;
    case CommOp::kBarrier: ++stats_.ops[CommOp::kBarrier].calls; break;
  }
  Log(c);
}

void Comm::Barrier(const RankGroup& g) {
  std::vector<Tensor> empty(static_cast<size_t>(g.size()));
  ++stats_.ops[CommOp::kBarrier].calls;
  Exchange(g, std::move(empty), {});
}

constexpr auto kBackends =
    EnumNames<Backend>("backend", {{Backend::kThreads, "threads"}, {Backend::kRecord, "record"}});

std::string_view Name(Backend b) { return kBackends.Name(b); }
Expected<Backend> ParseBackend(std::string_view text) { return kBackends.Parse(text); }

}  // namespace seam
