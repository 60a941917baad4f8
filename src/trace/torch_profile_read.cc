// PyTorch profiler traces read: each rank's collectives from the
// record_param_comms CPU events c10d writes around every call (in time
// order; those of no data, and the pieces a call runs inside its own event,
// passed over), or, in a trace with none that moves data, from the NCCL
// kernels Kineto copies their args onto. Never both: a kernel repeats the
// call its CPU event already names.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "seam/limits.h"
#include "seam/printable.h"
#include "seam/trace.h"
#include "trace/chrome_json.h"
#include "trace/torch_profile.h"

namespace seam {
namespace {

using nlohmann::json;

// What is wrong, without the file and event it is wrong in.
struct Bad {
  std::string why;
};

constexpr size_t kMaxDims = 8;
constexpr size_t kMaxText = 256;  // a collective's, dtype's or group's name
// An all-gather's "Out msg nelems" is its part times the group's size.
constexpr int64_t kMaxOutElements = kMaxTraceElements * kMaxRanks;
// The most group members the events of one reading name in all: each event
// holds its group's ranks, and a short event can name a large group.
constexpr int64_t kMaxMembersInAll = int64_t{1} << 26;

// A group's global ranks as the distributedInfo's pg_config lists them, and
// a rank it lists twice (checked once), by the group's name.
struct PgConfig {
  std::vector<int> ranks;
  std::optional<int> twice;
};
using PgConfigs = std::map<std::string, PgConfig>;

// One collective as its event records it, before the trace's rank is known.
struct Call {
  int64_t number = 0;  // the event's place among the trace's events, from 1
  double ts = 0;
  TraceOp op = TraceOp::kAllReduce;
  int64_t elements = 0;
  std::vector<int64_t> shape;
  std::string dtype;
  std::vector<int> group;
  // "Rank", a rank in the group: the caller's own for a collective, the
  // root's for a broadcast or reduce, the other end's for a send or recv
  // (c10d passes those in the rank's place). Kernels carry none.
  std::optional<int> group_rank;
  std::optional<int> p2p;       // "Dst Rank" or "Src Rank": the other end's global rank
  std::vector<int64_t> splits;  // an all-to-all's elements to each member, from "In split size"
};

bool Is(const json& event, const char* key, std::string_view value) {
  const auto it = event.find(key);
  return it != event.end() && it->is_string() && it->get_ref<const std::string&>() == value;
}

bool IsParamComms(const json& event) {
  return Is(event, "name", torch_profile::kParamComms) && Is(event, "cat", "cpu_op");
}

bool IsCollectiveKernel(const json& event) {
  if (!Is(event, "cat", "kernel")) return false;
  const auto args = event.find("args");
  return args != event.end() && args->is_object() && args->contains("Collective name");
}

bool Wanted(const json& event) { return IsParamComms(event) || IsCollectiveKernel(event); }

// An event c10d records for no data (init, wait, barrier).
bool NamesNoData(const json& event) {
  const auto args = event.find("args");
  if (args == event.end() || !args->is_object()) return false;
  const auto name = args->find("Collective name");
  return name != args->end() && name->is_string() &&
         std::find(torch_profile::kNotData.begin(), torch_profile::kNotData.end(),
                   name->get_ref<const std::string&>()) != torch_profile::kNotData.end();
}

std::optional<int64_t> Whole(const json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

int64_t WholeIn(const json& v, std::string_view what, int64_t lo, int64_t hi) {
  const std::optional<int64_t> x = Whole(v);
  if (!x || *x < lo || *x > hi) throw Bad{fmt::format("{} is not a whole number from {} to {}", what, lo, hi)};
  return *x;
}

const json& Arg(const json& args, const char* key) {
  const auto it = args.find(key);
  if (it == args.end()) throw Bad{fmt::format("has no \"{}\"", key)};
  return *it;
}

std::string TextArg(const json& args, const char* key) {
  const json& v = Arg(args, key);
  if (!v.is_string() || v.get_ref<const std::string&>().size() > kMaxText) {
    throw Bad{fmt::format("\"{}\" is not a string of at most {} characters", key, kMaxText)};
  }
  return v.get<std::string>();
}

std::string_view Trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// A list of numbers as PyTorch writes one (ranks, split sizes): a JSON
// list, or a string "[0, 1, 2]"; past 30 entries the string leaves some
// out at "...": "[0, 1, ..., 29, ...]", or in newer releases
// "[0, 1, ..., 28, ..., 63]". Each number from 0 to `hi`, at most `most`.
struct NumberList {
  std::vector<int64_t> head;  // the numbers before "...", or all of them
  std::vector<int64_t> tail;  // the numbers after "..."
  bool cut = false;
};

NumberList ListOf(const json& v, const Bad& bad, int64_t hi, size_t most) {
  NumberList out;
  const auto add = [&](std::optional<int64_t> x) {
    if (!x || *x < 0 || *x > hi || out.head.size() + out.tail.size() >= most) throw bad;
    (out.cut ? out.tail : out.head).push_back(*x);
  };
  if (v.is_array()) {
    for (const json& x : v) add(Whole(x));
    return out;
  }
  if (!v.is_string()) throw bad;
  std::string_view s = Trim(v.get_ref<const std::string&>());
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') throw bad;
  s = Trim(s.substr(1, s.size() - 2));
  while (!s.empty()) {
    const size_t comma = s.find(',');
    const std::string_view token = Trim(s.substr(0, comma));
    if (token == "...") {
      if (out.cut) throw bad;
      out.cut = true;
    } else {
      int64_t x = 0;
      const auto [at, ec] = std::from_chars(token.data(), token.data() + token.size(), x);
      add(ec == std::errc() && at == token.data() + token.size() ? std::optional<int64_t>(x) : std::nullopt);
    }
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  return out;
}

struct RankList {
  std::vector<int> head;  // the ranks before "...", or all of them
  std::vector<int> tail;  // the ranks after "..."
  bool cut = false;
};

RankList RanksOf(const json& v, std::string_view what) {
  const Bad bad{fmt::format("{} is not a list of ranks from 0 to {}", what, kMaxRanks - 1)};
  const NumberList n = ListOf(v, bad, kMaxRanks - 1, static_cast<size_t>(kMaxRanks));
  return {{n.head.begin(), n.head.end()}, {n.tail.begin(), n.tail.end()}, n.cut};
}

// A rank the list holds twice, if any.
std::optional<int> Twice(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  const auto at = std::adjacent_find(ranks.begin(), ranks.end());
  if (at == ranks.end()) return std::nullopt;
  return *at;
}

// A group's ranks, where they were read, and a rank they hold twice.
struct Ranks {
  std::vector<int> ranks;
  std::string source;
  std::optional<int> twice;
};

std::optional<Ranks> Configured(const json& args, const PgConfigs& pgs) {
  const auto name = args.find("Process Group Name");
  if (name == args.end() || !name->is_string()) return std::nullopt;
  const auto pg = pgs.find(name->get<std::string>());
  if (pg == pgs.end()) return std::nullopt;
  return Ranks{pg->second.ranks, fmt::format("the distributedInfo's pg_config for group '{}'", Printable(pg->first)),
               pg->second.twice};
}

// A group of ranks a stride apart (PyTorch writes the stride only where it
// is above 0); a group of one needs no stride.
std::optional<Ranks> Strided(const json& args, int size) {
  const auto start = args.find("Global rank start");
  if (start == args.end()) return std::nullopt;
  const int64_t first = WholeIn(*start, "\"Global rank start\"", 0, kMaxRanks - 1);
  int64_t step = 0;
  if (const auto stride = args.find("Global rank stride"); stride != args.end()) {
    step = WholeIn(*stride, "\"Global rank stride\"", 1, kMaxRanks - 1);
  } else if (size != 1) {
    return std::nullopt;
  }
  if (first + (size - 1) * step >= kMaxRanks) {
    throw Bad{fmt::format("\"Global rank start\" and \"Global rank stride\" reach past rank {}", kMaxRanks - 1)};
  }
  Ranks r{{}, "\"Global rank start\" and \"Global rank stride\"", std::nullopt};
  for (int i = 0; i < size; ++i) r.ranks.push_back(static_cast<int>(first + i * step));
  return r;
}

bool Agrees(const RankList& listed, const std::vector<int>& ranks) {
  return listed.head.size() + listed.tail.size() <= ranks.size() &&
         std::equal(listed.head.begin(), listed.head.end(), ranks.begin()) &&
         std::equal(listed.tail.begin(), listed.tail.end(), ranks.end() - static_cast<ptrdiff_t>(listed.tail.size()));
}

// The group's global ranks in its own order: "Process Group Ranks" where it
// lists them all; else the distributedInfo's pg_config for the group's name;
// else "Global rank start" and "Global rank stride". (PyTorch fills
// "Process Group Ranks" only for a group whose ranks step by a stride above
// 0, and cuts a list of more than 30; its distributedInfo lists every
// group in full.)
std::vector<int> GroupOf(const json& args, int size, const PgConfigs& pgs) {
  const auto at = args.find("Process Group Ranks");
  RankList listed;
  if (at != args.end()) listed = RanksOf(*at, "\"Process Group Ranks\"");
  std::optional<Ranks> group;
  if (!listed.cut && !listed.head.empty()) group = Ranks{listed.head, "\"Process Group Ranks\"", Twice(listed.head)};
  if (!group) group = Configured(args, pgs);
  if (!group) group = Strided(args, size);
  if (!group) {
    throw Bad{fmt::format(
        "does not say the group's ranks: \"Process Group Ranks\" is {}, and neither the distributedInfo's pg_config "
        "nor \"Global rank start\" and \"Global rank stride\" give them",
        at == args.end() ? "missing"
        : listed.cut     ? "cut short"
                         : "empty")};
  }
  if (group->ranks.size() != static_cast<size_t>(size)) {
    throw Bad{fmt::format("{} gives {} ranks, but \"Group size\" is {}", group->source, group->ranks.size(), size)};
  }
  if (group->twice) throw Bad{fmt::format("{} names rank {} twice", group->source, *group->twice)};
  if (listed.cut && !Agrees(listed, group->ranks)) {
    throw Bad{fmt::format("\"Process Group Ranks\" disagrees with {}", group->source)};
  }
  return std::move(group->ranks);
}

// The op, or none for a name that moves none of the model's data.
std::optional<TraceOp> OpOf(const json& args) {
  const std::string name = TextArg(args, "Collective name");
  for (const auto& c : torch_profile::kCollectives) {
    if (name == c.name) return c.op;
  }
  for (std::string_view skipped : torch_profile::kNotData) {
    if (name == skipped) return std::nullopt;
  }
  std::vector<std::string_view> names;
  for (const auto& c : torch_profile::kCollectives) names.push_back(c.name);
  throw Bad{fmt::format("\"Collective name\": '{}' is not one of {} (nor {}, which move no data)", Printable(name),
                        fmt::join(names, ", "), fmt::join(torch_profile::kNotData, ", "))};
}

std::string DtypeOf(const json& args) {
  const std::string c10 = TextArg(args, "dtype");
  std::vector<std::string_view> names;
  for (const auto& [c10_name, torch_name] : torch_profile::kDtypes) {
    if (c10 == c10_name) return std::string(torch_name);
    names.push_back(c10_name);
  }
  throw Bad{fmt::format("\"dtype\": '{}' is not one of {}", Printable(c10), fmt::join(names, ", "))};
}

// The shape of the call's first input where the CPU event records it
// ("Input Dims", with record_shapes=True) and it holds the event's
// elements (an all-reduce's buffer, an all-gather's part, a
// reduce-scatter's or all-to-all's input); else [elements].
std::vector<int64_t> ShapeOf(const json& args, int64_t elements) {
  const auto dims = args.find("Input Dims");
  if (dims == args.end() || !dims->is_array() || dims->empty()) return {elements};
  const json* first = &dims->front();
  // A list of one tensor (c10d passes some calls' tensors as a list) is that tensor.
  if (first->is_array() && first->size() == 1 && first->front().is_array()) first = &first->front();
  if (!first->is_array() || first->empty() || first->size() > kMaxDims) return {elements};
  std::vector<int64_t> shape;
  int64_t product = 1;
  for (const json& d : *first) {
    const std::optional<int64_t> x = Whole(d);
    if (!x || *x < 0 || *x > kMaxTraceElements || (*x != 0 && product > kMaxTraceElements / *x)) return {elements};
    product *= *x;
    shape.push_back(*x);
  }
  if (product != elements) return {elements};
  return shape;
}

// A split-size list as c10d writes it (none known where it is cut short).
std::optional<std::vector<int64_t>> SizesOf(const json& v, size_t most) {
  const Bad bad{fmt::format("\"In split size\" is not a list of sizes from 0 to {}", kMaxTraceElements)};
  NumberList n = ListOf(v, bad, kMaxTraceElements, most);
  if (n.cut) return std::nullopt;
  return std::move(n.head);
}

// An all-to-all's "In split size": the rows it sends each member (c10d's
// input_split_sizes, along the first dimension), as elements. Empty where
// the parts are even ("[]") or the list is cut short.
std::vector<int64_t> SplitsOf(const json& args, int64_t elements, int size) {
  const auto at = args.find("In split size");
  if (at == args.end()) return {};
  const std::optional<std::vector<int64_t>> rows = SizesOf(*at, static_cast<size_t>(size) + 1);
  if (!rows || rows->empty()) return {};
  if (static_cast<int>(rows->size()) != size) {
    throw Bad{fmt::format("\"In split size\" does not give one size for each of the group's {} members", size)};
  }
  int64_t total = 0;
  for (int64_t r : *rows) {
    total += r;
    if (total > kMaxTraceElements) throw Bad{"\"In split size\" adds up to more rows than a trace holds"};
  }
  if (total == 0 ? elements != 0 : elements % total != 0) {
    throw Bad{fmt::format("\"In split size\" adds up to {} rows, which {} elements are not a whole number of", total,
                          elements)};
  }
  std::vector<int64_t> out;
  for (int64_t r : *rows) out.push_back(total == 0 ? 0 : r * (elements / total));
  return out;
}

double TimeOf(const json& event) {
  const auto ts = event.find("ts");
  if (ts == event.end()) throw Bad{"has no \"ts\""};
  if (!ts->is_number()) throw Bad{"\"ts\" is not a number"};
  return ts->get<double>();
}

std::optional<Call> CallOf(const json& event, const PgConfigs& pgs) {
  const auto at = event.find("args");
  if (at == event.end() || !at->is_object()) throw Bad{"has no \"args\" object"};
  const json& args = *at;
  const std::optional<TraceOp> op = OpOf(args);
  if (!op) return std::nullopt;
  Call c{.op = *op};
  c.dtype = DtypeOf(args);
  c.elements = WholeIn(Arg(args, "In msg nelems"), "\"In msg nelems\"", 0, kMaxTraceElements);
  WholeIn(Arg(args, "Out msg nelems"), "\"Out msg nelems\"", 0, kMaxOutElements);
  const int size = static_cast<int>(WholeIn(Arg(args, "Group size"), "\"Group size\"", 1, kMaxRanks));
  c.group = GroupOf(args, size, pgs);
  if (const auto r = args.find("Rank"); r != args.end()) {
    c.group_rank = static_cast<int>(WholeIn(*r, "\"Rank\"", 0, size - 1));
  }
  const char* p2p = c.op == TraceOp::kSend ? "Dst Rank" : c.op == TraceOp::kRecv ? "Src Rank" : nullptr;
  if (const auto p = p2p ? args.find(p2p) : args.end(); p != args.end()) {
    c.p2p = static_cast<int>(WholeIn(*p, fmt::format("\"{}\"", p2p), 0, kMaxRanks - 1));
  }
  c.shape = ShapeOf(args, c.elements);
  if (c.op == TraceOp::kAllToAll) c.splits = SplitsOf(args, c.elements, size);
  c.ts = TimeOf(event);
  return c;
}

// The groups distributedInfo's pg_config lists in full (torch.profiler
// writes each group's ranks; Kineto, where torch did not, the kernels'
// "Process Group Ranks", which may be cut short or empty: no help), and the
// trace's rank where it says it.
void ReadInfo(const json& info, PgConfigs& pgs, std::optional<int>& rank) {
  if (info.is_null()) return;
  if (!info.is_object()) throw Bad{"\"distributedInfo\" is not an object"};
  if (const auto r = info.find("rank"); r != info.end()) {
    rank = static_cast<int>(WholeIn(*r, "the distributedInfo's \"rank\"", 0, kMaxRanks - 1));
  }
  const auto configs = info.find("pg_config");
  if (configs == info.end() || !configs->is_array()) return;
  for (const json& config : *configs) {
    if (!config.is_object()) continue;
    const auto name = config.find("pg_name");
    const auto ranks = config.find("ranks");
    if (name == config.end() || ranks == config.end() || !name->is_string() ||
        name->get_ref<const std::string&>().size() > kMaxText) {
      continue;
    }
    try {
      RankList listed = RanksOf(*ranks, "\"ranks\"");
      if (!listed.cut && !listed.head.empty()) {
        std::optional<int> twice = Twice(listed.head);
        pgs.emplace(name->get<std::string>(), PgConfig{std::move(listed.head), twice});
      }
    } catch (const Bad&) {
      // a group it does not list is read from the events or refused there
    }
  }
}

// Whose "Rank" is the caller's own rank in the group.
bool RanksItself(TraceOp op) {
  return op == TraceOp::kAllReduce || op == TraceOp::kAllGather || op == TraceOp::kReduceScatter ||
         op == TraceOp::kAllToAll;
}

// The trace's rank: its distributedInfo's, else the global rank of the first
// collective's own "Rank".
std::optional<int> RankOf(const std::vector<Call>& calls, std::optional<int> said) {
  if (said) return said;
  for (const Call& c : calls) {
    if (RanksItself(c.op) && c.group_rank) return c.group[*c.group_rank];
  }
  return std::nullopt;
}

bool Holds(const std::vector<int>& group, int rank) {
  return std::find(group.begin(), group.end(), rank) != group.end();
}

int PeerOf(const Call& c, const std::vector<int>& group, int rank) {
  const std::string key = c.op == TraceOp::kSend ? "\"Dst Rank\"" : "\"Src Rank\"";
  int peer = -1;
  if (c.p2p) {
    peer = *c.p2p;
    if (!Holds(group, peer)) throw Bad{fmt::format("{} {} is not in the group", key, peer)};
    if (c.group_rank && group[*c.group_rank] != peer) {
      throw Bad{fmt::format("{} {} is not \"Rank\" {}, the group's global rank {}", key, peer, *c.group_rank,
                            group[*c.group_rank])};
    }
  } else if (c.group_rank) {
    peer = group[*c.group_rank];
  } else {
    throw Bad{fmt::format("has no {}", key)};
  }
  if (peer == rank) throw Bad{fmt::format("a {} whose other end is the trace's own rank", Name(c.op))};
  return peer;
}

TraceEvent EventOf(Call&& c, int rank) {
  if (RanksItself(c.op) && c.group_rank && c.group[*c.group_rank] != rank) {
    throw Bad{fmt::format("\"Rank\" {} is the group's global rank {}, but the trace is rank {}", *c.group_rank,
                          c.group[*c.group_rank], rank)};
  }
  if (!Holds(c.group, rank)) throw Bad{fmt::format("the group does not hold the trace's rank {}", rank)};
  TraceEvent e{.op = c.op,
               .group = std::move(c.group),
               .shape = c.shape,
               .elements = c.elements,
               .dtype = c.dtype,
               .splits = std::move(c.splits),
               .line = static_cast<int>(c.number)};
  // c10d records no reduction op with a call: a profiler trace does not say
  // which one ran, and reads as the default, a sum.
  if (c.op == TraceOp::kAllReduce || c.op == TraceOp::kReduceScatter || c.op == TraceOp::kReduce) e.reduce = "sum";
  if (c.op == TraceOp::kBroadcast || c.op == TraceOp::kReduce) {
    if (!c.group_rank) throw Bad{fmt::format("has no \"Rank\" (the {}'s root)", Name(c.op))};
    e.peer = e.group[*c.group_rank];
  }
  if (c.op == TraceOp::kSend || c.op == TraceOp::kRecv) e.peer = PeerOf(c, e.group, rank);
  return e;
}

std::string Thread(const json& event) {
  const auto pid = event.find("pid");
  const auto tid = event.find("tid");
  return fmt::format("{} {}", pid == event.end() ? "" : pid->dump(), tid == event.end() ? "" : tid->dump());
}

// The CPU events that open inside another on the same thread: the pieces
// c10d runs a call as (an all-gather of uneven parts as broadcasts), each
// recorded within the call's own event, which alone counts. (One thread's
// record_function spans nest: a call's event closes when it returns.)
std::set<int64_t> Nested(const ChromeTrace& trace) {
  struct Span {
    std::string thread;
    double start = 0;
    double end = 0;
    int64_t number = 0;
  };
  std::vector<Span> spans;
  for (const auto& [number, event] : trace.events) {
    const auto ts = event.find("ts");
    if (!IsParamComms(event) || ts == event.end() || !ts->is_number()) continue;
    const auto dur = event.find("dur");
    const double length = dur != event.end() && dur->is_number() ? std::max(0.0, dur->get<double>()) : 0.0;
    spans.push_back({Thread(event), ts->get<double>(), ts->get<double>() + length, number});
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.thread, a.start, b.end) < std::tie(b.thread, b.start, a.end);
  });
  std::set<int64_t> nested;
  const Span* outer = nullptr;
  for (const Span& s : spans) {
    if (outer != nullptr && outer->thread == s.thread && s.start < outer->end) {
      nested.insert(s.number);
    } else {
      outer = &s;
    }
  }
  return nested;
}

std::vector<Call> CallsOf(const ChromeTrace& trace, const PgConfigs& pgs, const std::string& where,
                          int64_t& members_left) {
  // The CPU events where the trace has any that names data; else the
  // kernels (whose CPU events fell outside what was recorded).
  const bool cpu = std::any_of(trace.events.begin(), trace.events.end(), [](const auto& numbered) {
    return IsParamComms(numbered.second) && !NamesNoData(numbered.second);
  });
  const std::set<int64_t> nested = cpu ? Nested(trace) : std::set<int64_t>();
  std::vector<Call> calls;
  for (const auto& [number, event] : trace.events) {
    if (IsParamComms(event) != cpu || nested.contains(number)) continue;
    try {
      std::optional<Call> c = CallOf(event, pgs);
      if (!c) continue;
      c->number = number;
      members_left -= static_cast<int64_t>(c->group.size());
      if (members_left < 0) {
        throw Bad{fmt::format("the traces' events name more than {} group members in all", kMaxMembersInAll)};
      }
      calls.push_back(std::move(*c));
    } catch (const Bad& b) {
      throw Bad{fmt::format("{} event {}: {}", where, number, b.why)};
    }
  }
  if (calls.empty()) {
    throw Bad{fmt::format(
        "{}: holds no collective (a record_param_comms event, or a kernel with a \"Collective name\", other than "
        "init, wait and barrier)",
        where)};
  }
  std::stable_sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) { return a.ts < b.ts; });
  return calls;
}

RankTrace ReadOne(std::string_view text, int file, int64_t& members_left) {
  const std::string where = fmt::format("profiler trace {}", file);
  if (static_cast<int64_t>(text.size()) > kMaxTraceBytes) {
    throw Bad{fmt::format("{}: is over {} bytes", where, kMaxTraceBytes)};
  }
  const ChromeTrace trace = ReadChromeTrace(text, Wanted);
  if (!trace.error.empty()) throw Bad{fmt::format("{}: {}", where, trace.error)};
  PgConfigs pgs;
  std::optional<int> said;
  try {
    ReadInfo(trace.distributed_info, pgs, said);
  } catch (const Bad& b) {
    throw Bad{fmt::format("{}: {}", where, b.why)};
  }
  std::vector<Call> calls = CallsOf(trace, pgs, where, members_left);
  const std::optional<int> rank = RankOf(calls, said);
  if (!rank) {
    throw Bad{fmt::format(
        "{}: does not say its rank (no distributedInfo \"rank\", and no collective whose \"Rank\" is its own)", where)};
  }
  RankTrace out{.rank = *rank};
  for (Call& c : calls) {
    try {
      out.events.push_back(EventOf(std::move(c), *rank));
    } catch (const Bad& b) {
      throw Bad{fmt::format("{} event {}: {}", where, c.number, b.why)};
    }
  }
  return out;
}

}  // namespace

Expected<std::vector<RankTrace>> ReadTorchTraces(std::span<const std::string> texts) {
  if (texts.empty()) return Malformed("no profiler trace to read");
  std::map<int, std::pair<int, RankTrace>> ranks;  // by rank: the file that is it, and its events
  int64_t members_left = kMaxMembersInAll;
  try {
    for (size_t i = 0; i < texts.size(); ++i) {
      const int file = static_cast<int>(i) + 1;
      RankTrace t = ReadOne(texts[i], file, members_left);
      const auto [at, fresh] = ranks.try_emplace(t.rank, file, RankTrace{});
      if (!fresh) throw Bad{fmt::format("profiler traces {} and {} are both rank {}", at->second.first, file, t.rank)};
      at->second.second = std::move(t);
    }
  } catch (const Bad& b) {
    return Malformed(b.why);
  }
  std::vector<RankTrace> out;
  for (auto& [rank, trace] : ranks) out.push_back(std::move(trace.second));
  return out;
}

}  // namespace seam
