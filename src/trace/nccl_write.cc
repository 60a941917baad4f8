// Each rank's calls written as NCCL of one release logs them for a PyTorch
// process (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL): the world
// communicator's init, a split for each other group, a COLL line a call.
// Pointers, commIds and colors are made up but fixed by the ranks and the
// groups, so the same trace always writes the same text.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "seam/trace.h"
#include "trace/nccl.h"

namespace seam {
namespace {

// The PCI bus ids of an 8-GPU node's devices, in cudaDev order.
constexpr std::array<uint64_t, 8> kBusIds = {0x18000, 0x2a000, 0x3a000, 0x5d000, 0x9a000, 0xab000, 0xba000, 0xdb000};
constexpr uint64_t kCommBase = 0x555500000340;
constexpr uint64_t kStreamBase = 0x5555d00005e0;
constexpr uint64_t kBufferBase = 0x7f0000000000;

struct Release {
  std::string_view version;  // as "NCCL version" prints it
  std::string_view init;     // the API PyTorch's world communicator comes from, as printed ("" before 2.21)
};
Release ReleaseOf(NcclVersion v) {
  switch (v) {
    case NcclVersion::k2_18: return {"2.18.3+cuda12.2", ""};
    case NcclVersion::k2_21: return {"2.21.5+cuda12.4", "ncclCommInitRank "};
    case NcclVersion::k2_25: return {"2.25.1+cuda12.8", "ncclCommInitRankConfig "};
  }
  SEAM_CHECK(false, "an unknown NCCL version");
}

// FNV-1a over the group's ranks: a group's color and commId, as PyTorch
// hashes a group's ranks into its split color.
// The salt is hashed as bytes before the ranks (folded into the start, a
// salt and a first rank that differ in the same bits would cancel).
uint64_t Hash(const std::vector<int>& group, uint64_t salt) {
  uint64_t h = 0xcbf29ce484222325ULL;
  const auto mix = [&](uint64_t v, int bytes) {
    for (int b = 0; b < bytes; ++b) {
      h ^= (v >> (8 * b)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  };
  mix(salt, 8);
  for (int r : group) mix(static_cast<uint64_t>(r), 4);
  return h;
}

template <size_t N>
int IndexOf(const std::array<std::string_view, N>& names, std::string_view name, const char* what) {
  const auto at = std::find(names.begin(), names.end(), name);
  SEAM_CHECK(at != names.end(), fmt::format("{} '{}' has no NCCL number", what, name));
  return static_cast<int>(at - names.begin());
}

int DatatypeOf(const std::string& dtype) {
  // PyTorch passes a bool tensor as ncclUint8: it reads back as uint8.
  return dtype == "bool" ? 1 : IndexOf(nccl::kDtypes, dtype, "dtype");
}

int RankIn(const std::vector<int>& group, int rank) {
  const auto at = std::find(group.begin(), group.end(), rank);
  SEAM_CHECK(at != group.end(), fmt::format("rank {} is not in its call's group", rank));
  return static_cast<int>(at - group.begin());
}

// The run's groups other than the world in its rank order, in the order
// they are first used: PyTorch's ranks split them in the same order.
std::vector<std::vector<int>> SplitGroups(std::span<const RankTrace> ranks) {
  const auto world = static_cast<int>(ranks.size());
  std::vector<std::vector<int>> groups;
  std::map<std::vector<int>, size_t> seen;
  for (const RankTrace& r : ranks) {
    for (const TraceEvent& e : r.events) {
      for (int g : e.group) SEAM_CHECK(g >= 0 && g < world, fmt::format("group member {} is not a rank", g));
      bool is_world = static_cast<int>(e.group.size()) == world;
      for (size_t i = 0; is_world && i < e.group.size(); ++i) is_world = e.group[i] == static_cast<int>(i);
      if (!is_world && seen.emplace(e.group, groups.size()).second) groups.push_back(e.group);
    }
  }
  return groups;
}

// What each member sends a rank in each all-to-all with splits: the i-th
// all-to-all of a group on one rank is the i-th on every member.
std::vector<std::map<size_t, std::vector<int64_t>>> Received(std::span<const RankTrace> ranks) {
  std::vector<std::map<size_t, std::vector<int64_t>>> out(ranks.size());
  std::vector<std::map<std::vector<int>, std::vector<const TraceEvent*>>> by_group(ranks.size());
  for (const RankTrace& r : ranks) {
    for (const TraceEvent& e : r.events) {
      if (e.op == TraceOp::kAllToAll) by_group[static_cast<size_t>(r.rank)][e.group].push_back(&e);
    }
  }
  for (const RankTrace& r : ranks) {
    std::map<std::vector<int>, size_t> seen;
    for (size_t i = 0; i < r.events.size(); ++i) {
      const TraceEvent& e = r.events[i];
      if (e.op != TraceOp::kAllToAll) continue;
      const size_t k = seen[e.group]++;
      const size_t me = static_cast<size_t>(RankIn(e.group, r.rank));
      std::vector<int64_t> from;
      for (int peer : e.group) {
        const auto& theirs = by_group[static_cast<size_t>(peer)][e.group];
        if (k >= theirs.size() || theirs[k]->splits.size() != e.group.size()) break;
        from.push_back(theirs[k]->splits[me]);
      }
      if (from.size() == e.group.size()) out[static_cast<size_t>(r.rank)][i] = std::move(from);
    }
  }
  return out;
}

class RankLog {
 public:
  RankLog(int rank, int world, NcclVersion v) : rank_(rank), world_(world), v_(v), pid_(1000 + rank) {}

  void Inits(const std::vector<std::vector<int>>& splits);
  // `received[i]`: what each member sends this rank in its event i (an all-to-all).
  void Calls(const std::vector<TraceEvent>& events, const std::map<size_t, std::vector<int64_t>>& received);
  std::string Text() && { return std::move(out_); }

 private:
  struct Comm {
    uint64_t ptr = 0;
    int rank = 0;
    int nranks = 0;
    uint64_t op_count = 0;
  };
  void Line(int tid, std::string_view message) {
    out_ += fmt::format("node0:{}:{} [{}] NCCL INFO {}\n", pid_, tid, rank_ % 8, message);
  }
  std::string Device() const {
    return fmt::format("cudaDev {} nvmlDev {} busId {:x}", rank_ % 8, rank_ % 8,
                       kBusIds[static_cast<size_t>(rank_ % 8)]);
  }
  void Split(size_t s, const std::vector<int>& group);
  void Coll(std::string_view function, Comm& comm, int64_t count, int datatype, int op, int root);

  int rank_, world_;
  NcclVersion v_;
  int pid_;
  std::vector<Comm> comms_;  // the world's, then each split's
  std::map<std::vector<int>, size_t> comm_of_;
  uint64_t buffer_ = 0;
  std::string out_;
};

void RankLog::Inits(const std::vector<std::vector<int>>& splits) {
  const Release release = ReleaseOf(v_);
  const int tid = pid_ + 71;  // NCCL inits on a thread of its own
  comms_.push_back(Comm{.ptr = kCommBase + (static_cast<uint64_t>(rank_) << 28), .rank = rank_, .nranks = world_});
  if (rank_ == 0) Line(pid_, fmt::format("NCCL version {}", release.version));
  const std::string world = fmt::format("{}comm {} rank {} nranks {} {} commId 0x{:x}", release.init,
                                        nccl::Pointer(comms_[0].ptr), rank_, world_, Device(), Hash({world_}, 0x5eed));
  Line(tid, world + " - Init START");
  Line(tid, fmt::format("comm {} rank {} nRanks {} nNodes 1 localRanks {} localRank {} MNNVL 0",
                        nccl::Pointer(comms_[0].ptr), rank_, world_, world_, rank_));
  Line(tid, world + " - Init COMPLETE");
  if (v_ == NcclVersion::k2_25) {
    Line(tid, fmt::format("Init timings - ncclCommInitRankConfig: rank {} nranks {} total 0.52 (kernels 0.31, alloc "
                          "0.02, bootstrap 0.05, allgathers 0.01, topo 0.08, graphs 0.01, connections 0.03, rest 0.01)",
                          rank_, world_));
  }
  for (size_t s = 0; s < splits.size(); ++s) {
    if (std::find(splits[s].begin(), splits[s].end(), rank_) != splits[s].end()) Split(s, splits[s]);
  }
}

// 2.18 to 2.20 print a split as any init, with a commId hashed from the
// parent and color; 2.21 and 2.22 name ncclCommSplit and its parent, color
// and key; 2.25 adds the parent's split count and prints no commId.
void RankLog::Split(size_t s, const std::vector<int>& group) {
  const int tid = pid_ + 71;
  const Comm c{
      .ptr = comms_[0].ptr + 0x1000 * (s + 1), .rank = RankIn(group, rank_), .nranks = static_cast<int>(group.size())};
  const auto color = static_cast<int>(Hash(group, 0) & 0x7fffffff);
  const std::string head =
      fmt::format("comm {} rank {} nranks {} {}", nccl::Pointer(c.ptr), c.rank, c.nranks, Device());
  const std::string parent = fmt::format("parent {}", nccl::Pointer(comms_[0].ptr));
  const uint64_t comm_id = Hash(group, s + 1);
  switch (v_) {
    case NcclVersion::k2_18:
      Line(tid, fmt::format("{} commId 0x{:x} - Init START", head, comm_id));
      Line(tid, fmt::format("{} commId 0x{:x} - Init COMPLETE", head, comm_id));
      break;
    case NcclVersion::k2_21:
      for (const char* phase : {"START", "COMPLETE"}) {
        Line(tid, fmt::format("ncclCommSplit {} {} color {} key {} commId 0x{:x} - Init {}", head, parent, color,
                              c.rank, comm_id, phase));
      }
      break;
    case NcclVersion::k2_25:
      Line(tid, fmt::format("ncclCommSplit {} {} splitCount {} color {} key {}- Init START", head, parent, s + 1, color,
                            c.rank));
      Line(tid, fmt::format("ncclCommSplit {} {} splitCount {} color {} key {} - Init COMPLETE", head, parent, s + 1,
                            color, c.rank));
      break;
  }
  comm_of_[group] = comms_.size();
  comms_.push_back(c);
}

void RankLog::Coll(std::string_view function, Comm& comm, int64_t count, int datatype, int op, int root) {
  const uint64_t buffer = kBufferBase + ((static_cast<uint64_t>(rank_) & 0xff) << 32) + ((buffer_++ % 1024) << 21);
  std::string send = nccl::Pointer(buffer), recv = send;
  // From 2.22 a Send's buffer is printed as recvbuff; a Recv has no sendbuff.
  if (function == "Send" && v_ == NcclVersion::k2_18) recv = nccl::Pointer(0);
  if ((function == "Send" && v_ != NcclVersion::k2_18) || function == "Recv") send = nccl::Pointer(0);
  if (function == "AllGather" || function == "ReduceScatter") recv = nccl::Pointer(buffer + 0x100000);
  Line(pid_, fmt::format("{}: opCount {:x} sendbuff {} recvbuff {} count {} datatype {} op {} root {} comm {} "
                         "[nranks={}] stream {}",
                         function, comm.op_count++, send, recv, count, datatype, op, root, nccl::Pointer(comm.ptr),
                         comm.nranks, nccl::Pointer(kStreamBase + (static_cast<uint64_t>(rank_) << 28))));
}

// Each member's elements: the event's splits, or even parts of `total`.
std::vector<int64_t> PartsOf(const TraceEvent& e, int64_t total) {
  if (!e.splits.empty()) return e.splits;
  const auto n = static_cast<int64_t>(e.group.size());
  SEAM_CHECK(total % n == 0, fmt::format("a {}'s elements do not divide among its group", Name(e.op)));
  return std::vector<int64_t>(e.group.size(), total / n);
}

bool Even(const std::vector<int64_t>& parts) {
  return std::all_of(parts.begin(), parts.end(), [&](int64_t p) { return p == parts.front(); });
}

void RankLog::Calls(const std::vector<TraceEvent>& events, const std::map<size_t, std::vector<int64_t>>& received) {
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    const auto found = comm_of_.find(e.group);
    Comm& comm = comms_[found == comm_of_.end() ? 0 : found->second];
    const int n = comm.nranks;
    SEAM_CHECK(RankIn(e.group, rank_) == comm.rank, "a call's group is not its communicator's");
    const int dt = DatatypeOf(e.dtype);
    const int op = e.reduce.empty() ? 0 : IndexOf(nccl::kReductions, e.reduce, "reduction");
    const int root = e.peer >= 0 ? RankIn(e.group, e.peer) : 0;
    switch (e.op) {
      case TraceOp::kAllReduce: Coll("AllReduce", comm, e.elements, dt, op, 0); break;
      case TraceOp::kAllGather: {
        // Uneven parts as vLLM's and SGLang's pynccl all_gatherv gathers
        // them: a broadcast from each member in one NCCL group.
        const std::vector<int64_t> parts = e.splits.empty() ? std::vector<int64_t>{e.elements} : e.splits;
        if (Even(parts)) {
          Coll("AllGather", comm, e.elements, dt, 0, 0);
        } else {
          for (int k = 0; k < n; ++k) Coll("Broadcast", comm, parts[static_cast<size_t>(k)], dt, 0, k);
        }
        break;
      }
      case TraceOp::kReduceScatter: {
        // Uneven parts as pynccl's reduce_scatterv: a reduce to each member.
        const std::vector<int64_t> parts = PartsOf(e, e.elements);
        if (Even(parts)) {
          Coll("ReduceScatter", comm, parts.front(), dt, op, 0);
        } else {
          for (int k = 0; k < n; ++k) Coll("Reduce", comm, parts[static_cast<size_t>(k)], dt, op, k);
        }
        break;
      }
      case TraceOp::kBroadcast: Coll("Broadcast", comm, e.elements, dt, 0, root); break;
      case TraceOp::kReduce: Coll("Reduce", comm, e.elements, dt, op, root); break;
      case TraceOp::kSend: Coll("Send", comm, e.elements, dt, 0, root); break;
      case TraceOp::kRecv: Coll("Recv", comm, e.elements, dt, 0, root); break;
      case TraceOp::kAllToAll:
        // PyTorch's all_to_all_single: a send to and a receive from each
        // member, itself included, in one NCCL group.
        {
          const std::vector<int64_t> sent = PartsOf(e, e.elements);
          const auto got = received.find(i);
          const std::vector<int64_t>& from = got == received.end() ? sent : got->second;
          for (int peer = 0; peer < n; ++peer) {
            Coll("Send", comm, sent[static_cast<size_t>(peer)], dt, 0, peer);
            Coll("Recv", comm, from[static_cast<size_t>(peer)], dt, 0, peer);
          }
          break;
        }
    }
  }
}

}  // namespace

std::vector<std::string> WriteNcclLogs(std::span<const RankTrace> ranks, NcclVersion version) {
  const auto world = static_cast<int>(ranks.size());
  std::vector<bool> seen(ranks.size());
  for (const RankTrace& r : ranks) {
    SEAM_CHECK(r.rank >= 0 && r.rank < world && !seen[static_cast<size_t>(r.rank)],
               "the ranks are not 0 to the number of ranks less one");
    seen[static_cast<size_t>(r.rank)] = true;
  }
  const std::vector<std::vector<int>> splits = SplitGroups(ranks);
  const std::vector<std::map<size_t, std::vector<int64_t>>> received = Received(ranks);
  std::vector<std::string> out;
  for (const RankTrace& r : ranks) {
    RankLog log(r.rank, world, version);
    log.Inits(splits);
    log.Calls(r.events, received[static_cast<size_t>(r.rank)]);
    out.push_back(std::move(log).Text());
  }
  return out;
}

}  // namespace seam
