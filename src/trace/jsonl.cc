// seam.trace's JSON lines: one collective a line, checked field by field.
#include "seam/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "seam/limits.h"
#include "seam/printable.h"

namespace seam {
namespace {

using nlohmann::json;

using OpName = std::pair<TraceOp, const char*>;
constexpr std::array kOps = {OpName{TraceOp::kAllReduce, "all_reduce"},
                             OpName{TraceOp::kAllGather, "all_gather"},
                             OpName{TraceOp::kReduceScatter, "reduce_scatter"},
                             OpName{TraceOp::kAllToAll, "all_to_all"},
                             OpName{TraceOp::kBroadcast, "broadcast"},
                             OpName{TraceOp::kReduce, "reduce"},
                             OpName{TraceOp::kSend, "send"},
                             OpName{TraceOp::kRecv, "recv"}};
constexpr std::array kDtypes = {"bfloat16", "float16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
                                "int8",     "uint8",   "int32",   "int64",   "bool"};
constexpr std::array kReductions = {"sum", "avg", "max", "min", "prod"};
constexpr std::array kKeys = {"rank", "op", "group", "shape", "dtype", "reduce", "peer", "tag", "splits"};
constexpr size_t kMaxDims = 8;
constexpr size_t kMaxTag = 256;

// A line's failure: "seam.trace line 12: ...".
struct Bad {
  std::string why;
};

bool Reduces(TraceOp op) {
  return op == TraceOp::kAllReduce || op == TraceOp::kReduceScatter || op == TraceOp::kReduce;
}
bool HasPeer(TraceOp op) {
  return op == TraceOp::kSend || op == TraceOp::kRecv || op == TraceOp::kBroadcast || op == TraceOp::kReduce;
}

int Rank(const json& v, std::string_view what) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= kMaxRanks) {
    throw Bad{fmt::format("{} is not a rank from 0 to {}", what, kMaxRanks - 1)};
  }
  return v.get<int>();
}

std::string Text(const json& j, const char* key, size_t most) {
  const json& v = j.at(key);
  if (!v.is_string() || v.get<std::string>().size() > most) {
    throw Bad{fmt::format("\"{}\" is not a string of at most {} characters", key, most)};
  }
  return v.get<std::string>();
}

template <size_t N>
std::string OneOf(const json& j, const char* key, const std::array<const char*, N>& names) {
  const std::string v = Text(j, key, 64);
  if (std::find_if(names.begin(), names.end(), [&](const char* n) { return v == n; }) == names.end()) {
    throw Bad{fmt::format("\"{}\": '{}' is not one of {}", key, Printable(v), fmt::join(names, ", "))};
  }
  return v;
}

TraceOp OpOf(const json& j) {
  const std::string v = Text(j, "op", 64);
  for (const auto& [op, name] : kOps) {
    if (v == name) return op;
  }
  std::vector<const char*> names;
  for (const auto& [op, name] : kOps) names.push_back(name);
  throw Bad{fmt::format("\"op\": '{}' is not one of {}", Printable(v), fmt::join(names, ", "))};
}

std::vector<int> GroupOf(const json& j, int rank) {
  const json& g = j.at("group");
  if (!g.is_array() || g.empty() || g.size() > static_cast<size_t>(kMaxRanks)) {
    throw Bad{fmt::format("\"group\" is not a list of 1 to {} ranks", kMaxRanks)};
  }
  std::vector<int> out;
  std::set<int> seen;
  for (const json& r : g) {
    const int x = Rank(r, "a \"group\" member");
    if (!seen.insert(x).second) throw Bad{fmt::format("\"group\" names rank {} twice", x)};
    out.push_back(x);
  }
  if (!seen.contains(rank)) throw Bad{fmt::format("\"group\" does not hold the line's rank {}", rank)};
  return out;
}

std::vector<int64_t> ShapeOf(const json& j, int64_t& elements) {
  const json& s = j.at("shape");
  if (!s.is_array() || s.size() > kMaxDims)
    throw Bad{fmt::format("\"shape\" is not a list of at most {} sizes", kMaxDims)};
  std::vector<int64_t> out;
  elements = 1;
  for (const json& d : s) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > kMaxTraceElements) {
      throw Bad{fmt::format("\"shape\" holds a size that is not a whole number from 0 to {}", kMaxTraceElements)};
    }
    out.push_back(d.get<int64_t>());
    if (out.back() != 0 && elements > kMaxTraceElements / out.back()) {
      throw Bad{fmt::format("\"shape\" has more than {} elements", kMaxTraceElements)};
    }
    elements *= out.back();
  }
  return out;
}

// Each member's elements, as many as the group has, adding up to what the
// rank passes in (an all-gather's: its own among them).
std::vector<int64_t> SplitsOf(const json& j, const TraceEvent& e, int rank) {
  if (e.op != TraceOp::kAllGather && e.op != TraceOp::kReduceScatter && e.op != TraceOp::kAllToAll) {
    throw Bad{fmt::format("{} takes no \"splits\"", Name(e.op))};
  }
  const json& s = j.at("splits");
  if (!s.is_array() || s.size() != e.group.size()) {
    throw Bad{fmt::format("\"splits\" is not a list of {} sizes, one a member of the group", e.group.size())};
  }
  std::vector<int64_t> out;
  int64_t sum = 0;
  for (const json& x : s) {
    if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() > kMaxTraceElements) {
      throw Bad{fmt::format("\"splits\" holds a size that is not a whole number from 0 to {}", kMaxTraceElements)};
    }
    out.push_back(x.get<int64_t>());
    sum += out.back();
  }
  const size_t me = static_cast<size_t>(std::find(e.group.begin(), e.group.end(), rank) - e.group.begin());
  if (e.op == TraceOp::kAllGather ? out[me] != e.elements : sum != e.elements) {
    throw Bad{fmt::format("\"splits\" do not add up to the shape's {} elements{}", e.elements,
                          e.op == TraceOp::kAllGather ? " (an all-gather's: the rank's own part)" : "")};
  }
  return out;
}

TraceEvent EventOf(const json& j, int& rank) {
  if (!j.is_object()) throw Bad{"is not a JSON object"};
  for (const auto& [key, value] : j.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      throw Bad{fmt::format("unknown key \"{}\"; the keys are {}", Printable(key), fmt::join(kKeys, ", "))};
    }
  }
  for (const char* key : {"rank", "op", "group", "shape", "dtype"}) {
    if (!j.contains(key)) throw Bad{fmt::format("has no \"{}\"", key)};
  }
  rank = Rank(j.at("rank"), "\"rank\"");
  TraceEvent e{.op = OpOf(j)};
  e.group = GroupOf(j, rank);
  e.shape = ShapeOf(j, e.elements);
  e.dtype = OneOf(j, "dtype", kDtypes);
  if (Reduces(e.op) != j.contains("reduce")) {
    throw Bad{fmt::format("{} {} \"reduce\"", Name(e.op), Reduces(e.op) ? "needs a" : "takes no")};
  }
  if (Reduces(e.op)) e.reduce = OneOf(j, "reduce", kReductions);
  if (HasPeer(e.op) != (j.contains("peer") && !j.at("peer").is_null())) {
    throw Bad{fmt::format("{} {} \"peer\"", Name(e.op), HasPeer(e.op) ? "needs a" : "takes no")};
  }
  if (HasPeer(e.op)) {
    e.peer = Rank(j.at("peer"), "\"peer\"");
    if (std::find(e.group.begin(), e.group.end(), e.peer) == e.group.end()) {
      throw Bad{fmt::format("\"peer\" {} is not in the group", e.peer)};
    }
    if ((e.op == TraceOp::kSend || e.op == TraceOp::kRecv) && e.peer == rank) {
      throw Bad{fmt::format("a {} to the line's own rank", Name(e.op))};
    }
  }
  if (j.contains("tag")) e.tag = Printable(Text(j, "tag", kMaxTag));
  if (j.contains("splits")) e.splits = SplitsOf(j, e, rank);
  return e;
}

}  // namespace

std::string_view Name(TraceOp op) {
  for (const auto& [o, name] : kOps) {
    if (o == op) return name;
  }
  SEAM_CHECK(false, "an unknown trace op");
}

Expected<std::vector<RankTrace>> ReadJsonlTrace(std::string_view text) {
  if (static_cast<int64_t>(text.size()) > kMaxTraceBytes) {
    return Malformed(fmt::format("the seam.trace file is over {} bytes", kMaxTraceBytes));
  }
  std::map<int, RankTrace> ranks;
  int line = 0;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view body = text.substr(at, end - at);
    at = end + 1;
    ++line;
    if (body.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (body.size() > kMaxTraceLine) {
      return Malformed(fmt::format("seam.trace line {}: longer than {} bytes", line, kMaxTraceLine));
    }
    try {
      const json j = json::parse(body);
      int rank = 0;
      TraceEvent e = EventOf(j, rank);
      e.line = line;
      RankTrace& r = ranks[rank];
      r.rank = rank;
      r.events.push_back(std::move(e));
    } catch (const Bad& b) {
      return Malformed(fmt::format("seam.trace line {}: {}", line, b.why));
    } catch (const json::exception&) {
      return Malformed(fmt::format("seam.trace line {}: is not JSON", line));
    }
  }
  if (ranks.empty()) return Malformed("the seam.trace file holds no collective");
  std::vector<RankTrace> out;
  for (auto& [rank, trace] : ranks) out.push_back(std::move(trace));
  return out;
}

std::string WriteJsonlTrace(std::span<const RankTrace> ranks) {
  std::string out;
  for (const RankTrace& r : ranks) {
    for (const TraceEvent& e : r.events) {
      json j = {{"rank", r.rank}, {"op", Name(e.op)}, {"group", e.group}, {"shape", e.shape}, {"dtype", e.dtype}};
      if (!e.reduce.empty()) j["reduce"] = e.reduce;
      if (e.peer >= 0) j["peer"] = e.peer;
      if (!e.tag.empty()) j["tag"] = e.tag;
      if (!e.splits.empty()) j["splits"] = e.splits;
      out += j.dump();
      out += '\n';
    }
  }
  return out;
}

}  // namespace seam
