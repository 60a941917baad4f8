// NCCL's debug log read into each rank's calls: the init lines say which
// processes make up each communicator and in what rank order, the world
// communicator gives each process its global rank, and each COLL line
// becomes an event in the trace's own counts (docs/traces.md).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "seam/limits.h"
#include "seam/printable.h"
#include "seam/trace.h"
#include "trace/nccl.h"

namespace seam {
namespace {

using nccl::BadLine;
using nccl::Call;

// Every event carries its group's global ranks: a log of many calls on
// large communicators would grow by that much more than its own size.
constexpr int64_t kMaxGroupEntries = int64_t{1} << 28;

struct Place {
  size_t file = 0;  // 1-based, as messages name it
  int line = 0;
};
std::string Where(Place p) { return fmt::format("NCCL log {} line {}", p.file, p.line); }

[[noreturn]] void Refuse(std::string message) { throw Failure(Malformed(std::move(message))); }

// One process's handle on a communicator (its `comm %p`).
struct Comm {
  int process = 0;
  uint64_t ptr = 0;
  int rank = 0;
  int nranks = 0;
  int identity = 0;
  Place place;
};

// What every member's init line shares: a commId, or for a split that
// prints none (NCCL 2.25 on) its parent's identity, the parent's split
// count and the color. Its members by rank.
struct Identity {
  int nranks = 0;
  std::map<int, int> members;  // rank -> process
  std::map<int, int> ranks;    // process -> rank
  std::vector<int> group;      // global ranks, made at its first call
};
// (0, commId, 0, 0) or (1, parent identity, split count, color).
using IdentityKey = std::tuple<int, uint64_t, int64_t, int64_t>;

struct CallAt {
  nccl::CollLine coll;
  int comm = 0;
  Place place;
};

struct Process {
  std::string name;               // host:pid
  std::map<uint64_t, int> comms;  // the communicator a pointer names now
  std::vector<CallAt> calls;      // in the order the process made them
};

std::string_view Reduction(int64_t op) {
  return op < nccl::kFirstUserOp ? nccl::kReductions[static_cast<size_t>(op)] : std::string_view("avg");
}
bool Reduces(Call c) { return c == Call::kAllReduce || c == Call::kReduceScatter || c == Call::kReduce; }
bool IsPointToPoint(const CallAt& c) { return c.coll.call == Call::kSend || c.coll.call == Call::kRecv; }

// The 2n calls of a window on an n-rank communicator are an all-to-all as
// PyTorch runs it on NCCL (all_to_all_single: a group of a send to and a
// receive from every member, itself included) when they send to every rank
// once and receive from every rank once. The window slides a call at a
// time, so a run of sends is read in time linear in its length.
class AllToAllWindow {
 public:
  explicit AllToAllWindow(int n) : n_(n), sent_(static_cast<size_t>(n)), received_(static_cast<size_t>(n)) {}
  void Add(const CallAt& c) { Count(c, 1); }
  void Remove(const CallAt& c) { Count(c, -1); }
  bool Complete() const { return sent_once_ == n_ && received_once_ == n_; }

 private:
  void Count(const CallAt& c, int by) {
    const bool send = c.coll.call == Call::kSend;
    int& n = (send ? sent_ : received_)[static_cast<size_t>(c.coll.root)];
    int& once = send ? sent_once_ : received_once_;
    if (n == 1) --once;
    n += by;
    if (n == 1) ++once;
  }

  int n_;
  std::vector<int> sent_, received_;
  int sent_once_ = 0, received_once_ = 0;
};

class Reader {
 public:
  void Line(const nccl::Info& info, Place at) {
    if (std::optional<nccl::CollLine> c = nccl::ParseColl(info.message)) {
      Coll(*c, info.process, at);
    } else if (std::optional<nccl::InitLine> i = nccl::ParseInit(info.message)) {
      Init(*i, info.process, at);
    }
  }
  std::vector<RankTrace> Finish();

 private:
  void Init(const nccl::InitLine& in, const std::string& name, Place at);
  void Coll(const nccl::CollLine& c, const std::string& name, Place at);
  const std::vector<int>& GroupOf(const CallAt& c);
  void Events(const Process& p, std::vector<TraceEvent>& out);
  void PointToPoint(const std::vector<CallAt>& calls, size_t begin, size_t end, std::vector<TraceEvent>& out);
  TraceEvent Event(const CallAt& c);

  std::vector<Process> processes_;
  std::map<std::string, int> process_index_;
  std::vector<Comm> comms_;
  std::vector<Identity> identities_;
  std::map<IdentityKey, int> identity_index_;
  std::vector<int> global_;  // each process's global rank
  int64_t group_entries_ = 0;
};

void Reader::Init(const nccl::InitLine& in, const std::string& name, Place at) {
  auto [slot, fresh] = process_index_.emplace(name, static_cast<int>(processes_.size()));
  if (fresh) processes_.push_back(Process{.name = name});
  const int p = slot->second;
  IdentityKey key{0, in.comm_id.value_or(0), 0, 0};
  if (!in.comm_id) {
    const auto parent = processes_[static_cast<size_t>(p)].comms.find(*in.parent);
    if (parent == processes_[static_cast<size_t>(p)].comms.end()) {
      throw BadLine{fmt::format("a split of comm {}, which no earlier init line of process {} names",
                                nccl::Pointer(*in.parent), Printable(name))};
    }
    key = {1, static_cast<uint64_t>(comms_[static_cast<size_t>(parent->second)].identity), in.split_count, in.color};
  }
  auto [found, added] = identity_index_.emplace(key, static_cast<int>(identities_.size()));
  if (added) identities_.push_back(Identity{.nranks = in.nranks});
  const int id = found->second;
  Identity& ident = identities_[static_cast<size_t>(id)];
  Process& proc = processes_[static_cast<size_t>(p)];
  // START and COMPLETE name the same communicator twice.
  if (const auto same = proc.comms.find(in.comm); same != proc.comms.end()) {
    const Comm& c = comms_[static_cast<size_t>(same->second)];
    if (c.identity == id && c.rank == in.rank) return;
  }
  if (ident.nranks != in.nranks) {
    throw BadLine{fmt::format("nranks {} where another member's init line of the same communicator says {}", in.nranks,
                              ident.nranks)};
  }
  // A split's commId (2.18 to 2.22) hashes only its parent and color: two
  // splits of one parent with the same color share it, and the same
  // members in the same ranks.
  const auto [holder, first] = ident.members.emplace(in.rank, p);
  if (!first && holder->second != p) {
    throw BadLine{fmt::format("processes {} and {} both hold rank {} of one communicator",
                              Printable(processes_[static_cast<size_t>(holder->second)].name), Printable(name),
                              in.rank)};
  }
  const auto [mine, once] = ident.ranks.emplace(p, in.rank);
  if (!once && mine->second != in.rank) {
    throw BadLine{fmt::format("process {} holds ranks {} and {} of one communicator: seam reads one rank a process",
                              Printable(name), mine->second, in.rank)};
  }
  proc.comms[in.comm] = static_cast<int>(comms_.size());
  comms_.push_back(
      Comm{.process = p, .ptr = in.comm, .rank = in.rank, .nranks = in.nranks, .identity = id, .place = at});
}

void Reader::Coll(const nccl::CollLine& c, const std::string& name, Place at) {
  const auto p = process_index_.find(name);
  Process* proc = p == process_index_.end() ? nullptr : &processes_[static_cast<size_t>(p->second)];
  const auto comm = proc ? proc->comms.find(c.comm) : std::map<uint64_t, int>::iterator{};
  if (!proc || comm == proc->comms.end()) {
    throw BadLine{
        fmt::format("{} on comm {}, which no init line of process {} names (log with NCCL_DEBUG=INFO "
                    "NCCL_DEBUG_SUBSYS=INIT,COLL from the process's start)",
                    c.function, nccl::Pointer(c.comm), Printable(name))};
  }
  const Comm& made = comms_[static_cast<size_t>(comm->second)];
  if (made.nranks != c.nranks) {
    throw BadLine{fmt::format("[nranks={}] where comm {}'s init line ({}) says nranks {}", c.nranks,
                              nccl::Pointer(c.comm), Where(made.place), made.nranks)};
  }
  proc->calls.push_back(CallAt{c, comm->second, at});
}

const std::vector<int>& Reader::GroupOf(const CallAt& c) {
  const Comm& comm = comms_[static_cast<size_t>(c.comm)];
  Identity& ident = identities_[static_cast<size_t>(comm.identity)];
  group_entries_ += ident.nranks;
  if (group_entries_ > kMaxGroupEntries) {
    Refuse(
        fmt::format("the NCCL logs' calls name over {} group members in all (each call names its "
                    "communicator's ranks): read fewer calls at a time",
                    kMaxGroupEntries));
  }
  if (!ident.group.empty()) return ident.group;
  if (static_cast<int>(ident.members.size()) != ident.nranks) {
    Refuse(fmt::format("{}: comm {} has {} ranks, but init lines name only {} of them (pass every process's log)",
                       Where(c.place), nccl::Pointer(comm.ptr), ident.nranks, ident.members.size()));
  }
  for (const auto& [rank, process] : ident.members) ident.group.push_back(global_[static_cast<size_t>(process)]);
  return ident.group;
}

TraceEvent Reader::Event(const CallAt& c) {
  static constexpr std::array kOps = {TraceOp::kAllReduce, TraceOp::kAllGather, TraceOp::kReduceScatter,
                                      TraceOp::kBroadcast, TraceOp::kReduce,    TraceOp::kSend,
                                      TraceOp::kRecv,      TraceOp::kAllToAll};
  const nccl::CollLine& l = c.coll;
  TraceEvent e{.op = kOps[static_cast<size_t>(l.call)], .group = GroupOf(c)};
  // NCCL counts a reduce-scatter's output and an all-to-all's share of one
  // peer; the trace counts the whole input and everything sent.
  const bool per_rank = l.call == Call::kReduceScatter || l.call == Call::kAlltoAll;
  e.elements = per_rank ? l.count * l.nranks : l.count;
  e.shape = {e.elements};
  e.dtype = nccl::kDtypes[static_cast<size_t>(l.datatype)];
  if (Reduces(l.call)) e.reduce = Reduction(l.op);
  if (l.call == Call::kBroadcast || l.call == Call::kReduce || IsPointToPoint(c)) {
    e.peer = e.group[static_cast<size_t>(l.root)];
  }
  e.line = c.place.line;
  return e;
}

// A run of sends and receives on one communicator: each window that is an
// all-to-all becomes one, the rest stay sends and receives (a pipeline's).
void Reader::PointToPoint(const std::vector<CallAt>& calls, size_t begin, size_t end, std::vector<TraceEvent>& out) {
  const auto n = static_cast<size_t>(calls[begin].coll.nranks);
  std::optional<AllToAllWindow> window;
  const auto fill = [&](size_t from) {
    window.emplace(static_cast<int>(n));
    for (size_t k = from; k < from + 2 * n; ++k) window->Add(calls[k]);
  };
  if (end - begin >= 2 * n) fill(begin);
  for (size_t k = begin; k < end;) {
    if (k + 2 * n <= end && window->Complete()) {
      TraceEvent e = Event(calls[k]);
      e.op = TraceOp::kAllToAll;
      e.peer = -1;
      e.elements = 0;
      e.splits.assign(n, 0);
      for (size_t s = k; s < k + 2 * n; ++s) {
        if (calls[s].coll.call != Call::kSend) continue;
        e.elements += calls[s].coll.count;
        e.splits[static_cast<size_t>(calls[s].coll.root)] = calls[s].coll.count;
      }
      if (e.elements > kMaxTraceElements) {
        Refuse(fmt::format("{}: an all-to-all whose sends move over {} elements", Where(calls[k].place),
                           kMaxTraceElements));
      }
      e.shape = {e.elements};
      out.push_back(std::move(e));
      k += 2 * n;
      if (k + 2 * n <= end) fill(k);
      continue;
    }
    out.push_back(Event(calls[k]));
    if (k + 2 * n < end) {
      window->Remove(calls[k]);
      window->Add(calls[k + 2 * n]);
    }
    ++k;
  }
}

void Reader::Events(const Process& p, std::vector<TraceEvent>& out) {
  const std::vector<CallAt>& calls = p.calls;
  for (size_t k = 0; k < calls.size();) {
    if (!IsPointToPoint(calls[k])) {
      out.push_back(Event(calls[k++]));
      continue;
    }
    size_t end = k + 1;
    while (end < calls.size() && IsPointToPoint(calls[end]) && calls[end].comm == calls[k].comm) ++end;
    PointToPoint(calls, k, end, out);
    k = end;
  }
}

std::vector<RankTrace> Reader::Finish() {
  if (std::none_of(processes_.begin(), processes_.end(), [](const Process& p) { return !p.calls.empty(); })) {
    Refuse("no NCCL log holds a COLL line: log with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL");
  }
  const int world = static_cast<int>(processes_.size());
  const auto spans = std::find_if(identities_.begin(), identities_.end(), [&](const Identity& i) {
    return i.nranks == world && static_cast<int>(i.members.size()) == world;
  });
  if (spans == identities_.end()) {
    Refuse(
        fmt::format("no communicator spans all {} processes: a process's global rank is its rank in the "
                    "communicator of every process (PyTorch's default group), and no init lines of one are "
                    "here (log every process with NCCL_DEBUG_SUBSYS=INIT,COLL from its start)",
                    world));
  }
  global_.assign(processes_.size(), 0);
  for (const auto& [rank, process] : spans->members) global_[static_cast<size_t>(process)] = rank;
  std::vector<RankTrace> out(processes_.size());
  for (size_t p = 0; p < processes_.size(); ++p) {
    RankTrace& r = out[static_cast<size_t>(global_[p])];
    r.rank = global_[p];
    Events(processes_[p], r.events);
  }
  return out;
}

}  // namespace

Expected<std::vector<RankTrace>> ReadNcclLogs(std::span<const std::string> texts) {
  Reader reader;
  try {
    for (size_t f = 0; f < texts.size(); ++f) {
      const std::string_view text = texts[f];
      if (static_cast<int64_t>(text.size()) > kMaxTraceBytes) {
        return Malformed(fmt::format("NCCL log {}: over {} bytes", f + 1, kMaxTraceBytes));
      }
      Place at{.file = f + 1};
      for (size_t from = 0; from < text.size();) {
        const size_t end = std::min(text.find('\n', from), text.size());
        const std::string_view body = text.substr(from, end - from);
        from = end + 1;
        ++at.line;
        // NCCL prints at most 1024 bytes a line: a longer one holding its
        // mark is no line of NCCL's (a launcher's long lines are passed).
        if (body.size() > kMaxTraceLine) {
          if (body.find(" NCCL INFO ") == std::string_view::npos) continue;
          return Malformed(fmt::format("{}: longer than {} bytes", Where(at), kMaxTraceLine));
        }
        const std::optional<nccl::Info> info = nccl::FindInfo(body);
        if (!info) continue;
        try {
          reader.Line(*info, at);
        } catch (const BadLine& b) {
          return Malformed(fmt::format("{}: {}", Where(at), b.why));
        }
      }
    }
    return reader.Finish();
  } catch (const Failure& f) {
    return f.error();
  }
}

}  // namespace seam
