// seam/runtime/comm.h — one interface for collectives, with backends behind it.
//
// A backend provides two primitives: an exchange (every member hands one
// tensor to every member: an all-to-all-v) and point-to-point send/recv.
// Every collective is built here from those, so each backend reduces in
// the same canonical order: a reduce-scatter is an exchange of row chunks
// followed by the fixed binary tree over the members in group order; an
// all-reduce is a reduce-scatter plus an all-gather (the bytes of a ring).
// The bits of a sum never depend on the backend or on which rank holds
// which part. A backend may run a collective its own way instead (MPI's
// native mode); its sums are then MPI's, checked within a tolerance.
//
//   RankGroup g{{4, 5, 6, 7}};
//   Tensor sum = comm.AllReduce(g, partial);   // every member: the tree sum
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seam/layout.h"
#include "seam/runtime/tensor.h"

namespace seam {

// Ranks in group order: the order sums are reduced in and gathers concatenate in.
struct RankGroup {
  std::vector<int> ranks;
  int size() const { return static_cast<int>(ranks.size()); }
  int IndexOf(int rank) const;  // SEAM_CHECK that the rank is a member
  bool operator==(const RankGroup&) const = default;
};

// The operations a Comm counts, in the order they print.
enum class CommOp { kAllGather, kAllReduce, kAllToAll, kBarrier, kRecv, kReduceScatter, kSend };
inline constexpr int kCommOps = 7;
std::string_view Name(CommOp op);  // "all-gather", "all-reduce", ...

// What one rank did: calls and elements sent per operation.
struct CommStats {
  struct Op {
    int64_t calls = 0;
    int64_t elements_sent = 0;
  };
  std::map<CommOp, Op> ops;
  int64_t calls() const;
  int64_t elements_sent() const;
};
// One call a rank made, as a trace records it: the tensor it passed in (a
// receive: the one it got), in the form of seam/trace.h (an all-gather's
// own part, a reduce-scatter's whole input, all an all-to-all sends).
struct CommCall {
  CommOp op = CommOp::kAllReduce;
  std::vector<int> group;  // collectives: the members in group order; send, recv: empty
  int peer = -1;           // send, recv: the other end
  int64_t rows = 0;
  int64_t cols = 0;
  // Each member's rows: a gather's parts, a reduce-scatter's parts of the
  // sum, what an all-to-all sends each; empty for the rest.
  std::vector<int> parts;
  bool operator==(const CommCall&) const = default;
};

// The bytes `elements` float32 elements are on the wire, as runs report them.
constexpr int64_t BytesSent(int64_t elements) { return 4 * elements; }

class Comm {
 public:
  virtual ~Comm() = default;
  virtual std::string_view backend() const = 0;  // its name, for messages
  // Whether the collectives move data: false for a backend that only
  // records the calls (what comes back is shaped but holds no values).
  virtual bool moves_data() const { return true; }
  int rank() const { return rank_; }
  const CommStats& stats() const { return stats_; }
  // Every call from now on (but barriers) appended to `log`, in call order;
  // nullptr stops it.
  void LogCalls(std::vector<CommCall>* log) { log_ = log; }

  // The tree sum of every member's `partial` (all of one shape); member i
  // receives rows spans[i] of it.
  Tensor ReduceScatter(const RankGroup& g, const Tensor& partial, std::span<const RowSpan> spans);
  // Every member's rows, concatenated in group order; rows_of[i] is member
  // i's row count (every member passes the same list).
  Tensor AllGather(const RankGroup& g, const Tensor& mine, std::span<const int> rows_of);
  // The tree sum on every member: a reduce-scatter over even spans, then an all-gather.
  Tensor AllReduce(const RankGroup& g, const Tensor& partial);
  // Member i sends to_each[j] to member j and receives from_each[j] from j.
  std::vector<Tensor> AllToAll(const RankGroup& g, std::vector<Tensor> to_each);
  void Send(int peer, const Tensor& t);
  Tensor Recv(int peer, int rows, int cols);
  void Barrier(const RankGroup& g);
  // On a backend that moves no data: the call counted and logged from its
  // shapes alone (what the collective of those shapes counts), with no
  // tensor made, so a plan is counted at any size in little memory.
  void Tally(const CommCall& c);

 protected:
  explicit Comm(int rank) : rank_(rank) {}
  // A shape to expect from a member; rows < 0 when only the sender knows it.
  struct Shape {
    int rows = -1;
    int cols = -1;
  };
  // Member i hands to_each[j] to member j; returns what every member handed
  // to this one, checked against `expect` where given.
  virtual std::vector<Tensor> Exchange(const RankGroup& g, std::vector<Tensor> to_each,
                                       std::span<const Shape> expect) = 0;
  virtual void SendTo(int peer, const Tensor& t) = 0;
  virtual Tensor RecvFrom(int peer, Shape expect) = 0;

  // The collectives, canonical unless a backend runs them its own way. The
  // public calls count nothing themselves: each of these counts what it sends.
  virtual Tensor DoReduceScatter(const RankGroup& g, const Tensor& partial, std::span<const RowSpan> spans);
  virtual Tensor DoAllGather(const RankGroup& g, const Tensor& mine, std::span<const int> rows_of);
  virtual Tensor DoAllReduce(const RankGroup& g, const Tensor& partial);  // counted as its two halves
  virtual std::vector<Tensor> DoAllToAll(const RankGroup& g, std::vector<Tensor> to_each);
  void Count(CommOp op, int64_t elements_sent);

 private:
  void Count(CommOp op, const RankGroup& g, std::span<const Tensor> to_each);
  void Log(CommCall c) {
    if (log_ != nullptr) log_->push_back(std::move(c));
  }
  int rank_;
  CommStats stats_;
  std::vector<CommCall>* log_ = nullptr;
};

enum class Backend {
  kThreads,  // one thread per rank in one process, data in memory
  kRecord,   // no data: checks arguments, counts calls and elements
};
std::string_view Name(Backend b);
Expected<Backend> ParseBackend(std::string_view text);

// Runs fn(rank, comm) on `size` ranks, one thread each, and joins them all.
// With threads, a rank that fails aborts the others: every rank waiting on
// it fails at once (no hang), and a wait longer than `timeout_seconds` fails
// too. The first failure comes back naming its rank.
Status RunOnRanks(Backend backend, int size, const std::function<void(int rank, Comm& comm)>& fn,
                  double timeout_seconds = 60.0);

}  // namespace seam
