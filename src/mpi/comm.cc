// The MPI backend: each group of the topology is a communicator; data moves
// with MPI's own collectives inside it, sums follow the mode. Every wait is
// bounded (mpi/wait.h).
#include <fmt/format.h>
#include <mpi.h>

#include <chrono>
#include <csignal>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "mpi/wait.h"
#include "mpi/watchdog.h"
#include "seam/runtime/mpi.h"
#include "seam/runtime/tree_sum.h"

namespace seam {
namespace {

using mpi::Check;
using mpi::WaitAll;

constexpr int kShapeTag = 1;
constexpr int kDataTag = 2;
constexpr int kWidthTag = 16;  // and up: a message whose tag says its width

int Elements(const Tensor& t) { return static_cast<int>(t.size()); }

std::string Members(const RankGroup& g) { return fmt::format("ranks {}", fmt::join(g.ranks, ",")); }

// The other members in the order a member addresses them: me + 1, me + 2,
// ... (mod n), so the members do not all start with member 0.
std::vector<int> Others(int me, int n) {
  std::vector<int> out;
  for (int k = 1; k < n; ++k) out.push_back((me + k) % n);
  return out;
}

// Point-to-point requests inside one group, waited for together.
class Requests {
 public:
  Requests(const RankGroup& g, MPI_Comm c) : g_(g), c_(c) {}
  template <class T>
  void Recv(int member, T* into, size_t count, int tag = kDataTag) {
    Check(MPI_Irecv(into, Count(count), TypeOf<T>(), member, tag, c_, Next(member)), "MPI_Irecv");
  }
  template <class T>
  void Send(int member, const T* from, size_t count, int tag = kDataTag) {
    Check(MPI_Isend(from, Count(count), TypeOf<T>(), member, tag, c_, Next(member)), "MPI_Isend");
  }
  void Wait(double timeout_seconds, const std::string& what) { WaitAll(requests_, peers_, timeout_seconds, what); }

 private:
  template <class T>
  static MPI_Datatype TypeOf() {
    return std::is_same_v<T, float> ? MPI_FLOAT : MPI_INT;
  }
  static int Count(size_t count) {
    SEAM_CHECK(count <= static_cast<size_t>(std::numeric_limits<int>::max()), "a message over 2^31 elements");
    return static_cast<int>(count);
  }
  MPI_Request* Next(int member) {
    // Requests are handed to MPI by address: reserve so none moves.
    if (requests_.capacity() == 0) requests_.reserve(2 * static_cast<size_t>(g_.size()));
    SEAM_CHECK(requests_.size() < requests_.capacity(), "more requests than a group exchange posts");
    peers_.push_back(g_.ranks[static_cast<size_t>(member)]);
    return &requests_.emplace_back();
  }

  const RankGroup& g_;
  MPI_Comm c_;
  std::vector<MPI_Request> requests_;
  std::vector<int> peers_;
};

class MpiComm final : public Comm {
 public:
  int calls() const { return calls_; }
  MpiComm(int rank, const ParallelConfig& cfg, const MpiOptions& o) : Comm(rank), options_(o) {
    int* ub = nullptr;
    int found = 0;
    Check(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found), "MPI_Comm_get_attr");
    tag_ub_ = found ? *ub : 32767;  // the least the standard allows
    // Every rank splits the world once per kind of group, in the same order:
    // the members of a group share a colour (their first rank) and are
    // ordered by their place in the group. A split waits for every rank.
    const mpi::Watchdog watchdog(o.timeout_seconds,
                                 fmt::format("not every rank made its communicators within --timeout {:g} s (one is "
                                             "stopped or cut off)",
                                             o.timeout_seconds));
    for (Group g : kEveryGroup) {
      const std::vector<int> members = GroupRanks(cfg, g, rank);
      if (groups_.count(members)) continue;  // the same ranks as a kind already split
      const int key = RankGroup{members}.IndexOf(rank);
      MPI_Comm c = MPI_COMM_NULL;
      Check(MPI_Comm_split(MPI_COMM_WORLD, members.front(), key, &c), "MPI_Comm_split");
      groups_[members] = c;
    }
  }

  ~MpiComm() override {
    for (auto& [members, c] : groups_) MPI_Comm_free(&c);
  }

  std::string_view backend() const override { return "mpi"; }

 protected:
  std::vector<Tensor> Exchange(const RankGroup& g, std::vector<Tensor> to_each,
                               std::span<const Shape> expect) override {
    Tick();
    const int n = g.size();
    const int me = g.IndexOf(rank());
    const std::string what = "an exchange over " + Members(g);
    std::vector<Tensor> from = ExchangeAnyShape(g, to_each, what);
    for (int j = 0; j < n && j < static_cast<int>(expect.size()); ++j) {
      const Shape e = expect[static_cast<size_t>(j)];
      const Tensor& got = from[static_cast<size_t>(j)];
      if (j != me && e.rows >= 0 && (got.rows() != e.rows || got.cols() != e.cols)) {
        throw Failure(
            FailedCheck(fmt::format("rank {} sent [{}, {}] where rank {} expected [{}, {}]",
                                    g.ranks[static_cast<size_t>(j)], got.rows(), got.cols(), rank(), e.rows, e.cols)));
      }
    }
    from[static_cast<size_t>(me)] = std::move(to_each[static_cast<size_t>(me)]);
    return from;
  }

  void SendTo(int peer, const Tensor& t) override {
    Tick();
    const int shape[2] = {t.rows(), t.cols()};
    MPI_Request r[2];
    Check(MPI_Isend(shape, 2, MPI_INT, peer, kShapeTag, MPI_COMM_WORLD, &r[0]), "MPI_Isend");
    Check(MPI_Isend(t.data(), Elements(t), MPI_FLOAT, peer, kDataTag, MPI_COMM_WORLD, &r[1]), "MPI_Isend");
    const int peers[2] = {peer, peer};
    WaitAll(r, peers, options_.timeout_seconds, fmt::format("a send to rank {}", peer));
  }

  Tensor RecvFrom(int peer, Shape expect) override {
    Tick();
    int shape[2] = {0, 0};
    MPI_Request r;
    Check(MPI_Irecv(shape, 2, MPI_INT, peer, kShapeTag, MPI_COMM_WORLD, &r), "MPI_Irecv");
    const int peers[1] = {peer};
    WaitAll(std::span(&r, 1), peers, options_.timeout_seconds, fmt::format("a receive from rank {}", peer));
    if ((expect.rows >= 0 && shape[0] != expect.rows) || (expect.cols >= 0 && shape[1] != expect.cols)) {
      throw Failure(FailedCheck(fmt::format("rank {} sent [{}, {}] where rank {} expected [{}, {}]", peer, shape[0],
                                            shape[1], rank(), expect.rows, expect.cols)));
    }
    Tensor t = Tensor::Uninitialized(shape[0], shape[1]);
    Check(MPI_Irecv(t.data(), Elements(t), MPI_FLOAT, peer, kDataTag, MPI_COMM_WORLD, &r), "MPI_Irecv");
    WaitAll(std::span(&r, 1), peers, options_.timeout_seconds, fmt::format("a receive from rank {}", peer));
    return t;
  }

  // ---- the collectives ----
  //
  // Data moves point to point, straight between the callers' buffers (MPI's
  // nonblocking collectives progress slowly, and blocking ones cannot be
  // bounded in time). Canonical sums are the canonical tree over the
  // members' rows in group order; native ones are MPI's own reduction.

  Tensor DoReduceScatter(const RankGroup& g, const Tensor& partial, std::span<const RowSpan> spans) override {
    Tick();
    const int n = g.size();
    const int me = g.IndexOf(rank());
    const int cols = partial.cols();
    const RowSpan mine = spans[static_cast<size_t>(me)];
    Tensor out = Tensor::Uninitialized(mine.rows(), cols);
    int64_t sent = 0;
    for (int j = 0; j < n; ++j) sent += j == me ? 0 : int64_t{spans[static_cast<size_t>(j)].rows()} * cols;
    if (options_.mode == MpiMode::kNative) {
      NativeReduceScatter(g, partial, spans, out);
    } else {
      // Member j's rows of my span land in slot j; my own stay where they are.
      const size_t each = static_cast<size_t>(mine.rows()) * static_cast<size_t>(cols);
      Tensor slots = Tensor::Uninitialized(n, static_cast<int>(each));
      Requests q(g, CommOf(g));
      for (int j : Others(me, n)) q.Recv(j, slots.data() + static_cast<size_t>(j) * each, each);
      for (int j : Others(me, n)) {
        const RowSpan s = spans[static_cast<size_t>(j)];
        q.Send(j, partial.row(s.begin), static_cast<size_t>(s.rows()) * static_cast<size_t>(cols));
      }
      q.Wait(options_.timeout_seconds, "a reduce-scatter over " + Members(g));
      std::vector<const float*> parts;
      for (int j = 0; j < n; ++j) {
        parts.push_back(j == me ? partial.row(mine.begin) : slots.data() + static_cast<size_t>(j) * each);
      }
      TreeSumInto(parts, each, out.data());
    }
    Comm::Count(CommOp::kReduceScatter, sent);
    return out;
  }

  Tensor DoAllReduce(const RankGroup& g, const Tensor& partial) override {
    if (options_.mode == MpiMode::kCanonical) return Comm::DoAllReduce(g, partial);  // reduce-scatter + all-gather
    Tick();
    Tensor out(partial.rows(), partial.cols());
    MPI_Request r;
    Check(MPI_Iallreduce(partial.data(), out.data(), Elements(partial), MPI_FLOAT, MPI_SUM, CommOf(g), &r),
          "MPI_Iallreduce");
    WaitCollective(r, "an all-reduce over " + Members(g));
    const int64_t n = g.size();
    Comm::Count(CommOp::kAllReduce, 2 * (n - 1) * static_cast<int64_t>(partial.size()) / n);  // what a ring sends
    return out;
  }

  Tensor DoAllGather(const RankGroup& g, const Tensor& mine, std::span<const int> rows_of) override {
    Tick();
    const int n = g.size();
    const int me = g.IndexOf(rank());
    const size_t cols = static_cast<size_t>(mine.cols());
    std::vector<size_t> first;  // each member's first row in the output
    size_t rows = 0;
    for (int r : rows_of) {
      first.push_back(rows);
      rows += static_cast<size_t>(r);
    }
    Tensor out = Tensor::Uninitialized(static_cast<int>(rows), mine.cols());
    std::copy(mine.data(), mine.data() + mine.size(), out.data() + first[static_cast<size_t>(me)] * cols);
    Requests q(g, CommOf(g));
    for (int j : Others(me, n)) {
      q.Recv(j, out.data() + first[static_cast<size_t>(j)] * cols,
             static_cast<size_t>(rows_of[static_cast<size_t>(j)]) * cols);
      q.Send(j, mine.data(), mine.size());
    }
    q.Wait(options_.timeout_seconds, "an all-gather over " + Members(g));
    Comm::Count(CommOp::kAllGather, static_cast<int64_t>(n - 1) * static_cast<int64_t>(mine.size()));
    return out;
  }

  std::vector<Tensor> DoAllToAll(const RankGroup& g, std::vector<Tensor> to_each) override {
    Tick();
    const int me = g.IndexOf(rank());
    int64_t sent = 0;
    for (int j = 0; j < g.size(); ++j)
      sent += j == me ? 0 : static_cast<int64_t>(to_each[static_cast<size_t>(j)].size());
    std::vector<Tensor> from = ExchangeAnyShape(g, to_each, "an all-to-all over " + Members(g));
    from[static_cast<size_t>(me)] = std::move(to_each[static_cast<size_t>(me)]);
    Comm::Count(CommOp::kAllToAll, sent);
    return from;
  }

 private:
  // MPI's reduce-scatter: the members' rows must follow group order.
  void NativeReduceScatter(const RankGroup& g, const Tensor& partial, std::span<const RowSpan> spans, Tensor& out) {
    std::vector<int> counts;
    int next = 0;
    for (const RowSpan& s : spans) {
      SEAM_CHECK(s.begin == next, "a native reduce-scatter needs the members' rows in group order");
      next = s.end;
      counts.push_back(s.rows() * partial.cols());
    }
    SEAM_CHECK(next == partial.rows(), "the spans do not cover the rows");
    MPI_Request r;
    Check(MPI_Ireduce_scatter(partial.data(), out.data(), counts.data(), MPI_FLOAT, MPI_SUM, CommOf(g), &r),
          "MPI_Ireduce_scatter");
    WaitCollective(r, "a reduce-scatter over " + Members(g));
  }

  MPI_Comm CommOf(const RankGroup& g) const {
    auto it = groups_.find(g.ranks);
    SEAM_CHECK(it != groups_.end(), "no communicator for " + Members(g) + ": not a group of the topology");
    return it->second;
  }

  // Sends to_each[j] to every other member j and receives what each sends
  // this one, whatever its shape: one message per pair, its width in the tag
  // and its rows from its length, so no round of shapes goes first.
  std::vector<Tensor> ExchangeAnyShape(const RankGroup& g, const std::vector<Tensor>& to_each,
                                       const std::string& what) {
    const int n = g.size();
    const int me = g.IndexOf(rank());
    const MPI_Comm c = CommOf(g);
    std::vector<Tensor> from(static_cast<size_t>(n));
    std::vector<MPI_Request> requests;
    std::vector<int> peers;
    requests.reserve(2 * static_cast<size_t>(n));
    for (int j : Others(me, n)) {
      const Tensor& t = to_each[static_cast<size_t>(j)];
      requests.emplace_back();
      Check(MPI_Isend(t.data(), Elements(t), MPI_FLOAT, j, WidthTag(t.cols()), c, &requests.back()), "MPI_Isend");
      peers.push_back(g.ranks[static_cast<size_t>(j)]);
    }
    std::vector<int> unmatched = Others(me, n);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.timeout_seconds);
    while (!unmatched.empty()) {
      for (auto it = unmatched.begin(); it != unmatched.end();) {
        std::optional<Tensor> t = TryReceive(c, *it, requests.emplace_back());
        if (!t) {
          requests.pop_back();
          ++it;
          continue;
        }
        from[static_cast<size_t>(*it)] = std::move(*t);
        peers.push_back(g.ranks[static_cast<size_t>(*it)]);
        it = unmatched.erase(it);
      }
      if (unmatched.empty()) break;
      if (std::chrono::steady_clock::now() > deadline) {
        throw mpi::PeerTimeout(fmt::format("rank {} did not answer within {:.3g} s ({})",
                                           g.ranks[static_cast<size_t>(unmatched.front())], options_.timeout_seconds,
                                           what));
      }
      std::this_thread::yield();
    }
    WaitAll(requests, peers, std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count(), what);
    return from;
  }

  // If a message from `member` has arrived: a tensor of its shape, being
  // received into `request`.
  std::optional<Tensor> TryReceive(MPI_Comm c, int member, MPI_Request& request) {
    int found = 0;
    MPI_Message message;
    MPI_Status status;
    Check(MPI_Improbe(member, MPI_ANY_TAG, c, &found, &message, &status), "MPI_Improbe");
    if (!found) return std::nullopt;
    int count = 0;
    Check(MPI_Get_count(&status, MPI_FLOAT, &count), "MPI_Get_count");
    const int cols = status.MPI_TAG - kWidthTag;
    SEAM_CHECK(cols >= 0 && (cols == 0 ? count == 0 : count % cols == 0), "a message of another shape");
    Tensor t = Tensor::Uninitialized(cols == 0 ? 0 : count / cols, cols);
    Check(MPI_Imrecv(t.data(), count, MPI_FLOAT, &message, &request), "MPI_Imrecv");
    return t;
  }

  // The tag that carries a message's width.
  int WidthTag(int cols) const {
    SEAM_CHECK(cols <= tag_ub_ - kWidthTag,
               fmt::format("a tensor {} columns wide is wider than MPI tags can carry", cols));
    return kWidthTag + cols;
  }

  void WaitCollective(MPI_Request& r, const std::string& what) {
    const int peers[1] = {-1};
    WaitAll(std::span(&r, 1), peers, options_.timeout_seconds, what);
  }

  // Counts communication calls; the injected fault strikes at its call.
  void Tick() {
    ++calls_;
    const Fault& f = options_.fault;
    if (f.rank != rank() || calls_ != f.at_call) return;
    switch (f.kind) {
      case FaultKind::kThrow:
        throw Failure(FailedCheck(fmt::format("injected fault at communication call {}", calls_)));
      case FaultKind::kKill: std::raise(SIGKILL); break;
      case FaultKind::kHang:
        while (true) std::this_thread::sleep_for(std::chrono::seconds(1));  // until the job is aborted
      case FaultKind::kInput: break;                                        // strikes at setup, not here
    }
  }

  MpiOptions options_;
  int tag_ub_ = 32767;
  std::map<std::vector<int>, MPI_Comm> groups_;
  int calls_ = 0;
};

}  // namespace

std::unique_ptr<Comm> MakeMpiComm(const MpiProcess& p, const ParallelConfig& cfg, const MpiOptions& o) {
  return std::make_unique<MpiComm>(p.rank(), cfg, o);
}

int CommunicationCalls(const Comm& comm) {
  const auto* mpi = dynamic_cast<const MpiComm*>(&comm);
  SEAM_CHECK(mpi != nullptr, "CommunicationCalls counts an MPI rank's calls");
  return mpi->calls();
}

}  // namespace seam
