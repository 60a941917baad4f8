// NCCL's log lines one at a time: where a line's NCCL part starts, and the
// fields of a call's COLL line and of a communicator's init line, each read
// as the format strings of NCCL 2.18 to 2.27 print them (docs/traces.md).
#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "seam/limits.h"
#include "seam/printable.h"
#include "seam/trace.h"
#include "trace/nccl.h"

namespace seam::nccl {
namespace {

constexpr std::string_view kMark = " NCCL INFO ";
// NCCL cuts the host name at its first '.', and its line buffer is 1024
// bytes: a longer run of name characters is not a host NCCL printed.
constexpr size_t kMaxHost = 255;
constexpr size_t kMaxDigits = 20;
constexpr size_t kShown = 40;

using CallName = std::pair<Call, std::string_view>;
// "AllToAll" is RCCL's name for the same per-peer-count call.
constexpr std::array kCalls = {CallName{Call::kAllReduce, "AllReduce"},
                               CallName{Call::kAllGather, "AllGather"},
                               CallName{Call::kReduceScatter, "ReduceScatter"},
                               CallName{Call::kBroadcast, "Broadcast"},
                               CallName{Call::kReduce, "Reduce"},
                               CallName{Call::kSend, "Send"},
                               CallName{Call::kRecv, "Recv"},
                               CallName{Call::kAlltoAll, "AlltoAll"},
                               CallName{Call::kAlltoAll, "AllToAll"}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
// A host name is what is left between a launcher's prefix and ":pid":
// no blank, control, ':' or bracket (Ray's "(Worker pid=1) ", torchrun's
// "[rank0]:", a timestamp "[2025-01-01 12:00:00] ", a colour "\e[36m").
bool IsHostChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u != 0x7f && c != ':' && c != '[' && c != ']' && c != '(' && c != ')';
}

// What a hostile token looks like in a message: printable and short.
std::string Shown(std::string_view token) {
  if (token.empty()) return "the line's end";
  if (token.size() <= kShown) return fmt::format("'{}'", Printable(token));
  return fmt::format("'{}...'", Printable(token.substr(0, kShown)));
}

// Takes a run of 1 to `most` characters for which `keep` holds off the end
// of `s`; false (and `s` as it was) where there is none or a longer one.
template <class Keep>
bool TakeBack(std::string_view& s, std::string_view& taken, size_t most, Keep keep) {
  size_t n = 0;
  while (n < s.size() && n <= most && keep(s[s.size() - 1 - n])) ++n;
  if (n == 0 || n > most) return false;
  taken = s.substr(s.size() - n);
  s.remove_suffix(n);
  return true;
}

bool TakeBack(std::string_view& s, char c) {
  if (s.empty() || s.back() != c) return false;
  s.remove_suffix(1);
  return true;
}

// "host:pid:tid [dev]" at the end of `s`, as "host:pid".
std::optional<std::string> ProcessAtEnd(std::string_view s) {
  std::string_view dev, tid, pid, host;
  const auto digit = [](char c) { return IsDigit(c); };
  const auto device = [](char c) { return IsDigit(c) || c == '-'; };
  if (!TakeBack(s, ']') || !TakeBack(s, dev, kMaxDigits, device) || !TakeBack(s, '[') || !TakeBack(s, ' ') ||
      !TakeBack(s, tid, kMaxDigits, digit) || !TakeBack(s, ':') || !TakeBack(s, pid, kMaxDigits, digit) ||
      !TakeBack(s, ':') || !TakeBack(s, host, kMaxHost, IsHostChar)) {
    return std::nullopt;
  }
  // A terminal colour ("\e[36m") before the host ends in name characters.
  if (s.ends_with("\x1b[")) {
    const size_t m = host.find_first_not_of("0123456789;");
    if (m != std::string_view::npos && host[m] == 'm' && m + 1 < host.size()) host.remove_prefix(m + 1);
  }
  return fmt::format("{}:{}", host, pid);
}

std::string_view TrimEnd(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A line's space-separated tokens, read in NCCL's order.
class Fields {
 public:
  explicit Fields(std::string_view s) : rest_(s) {}

  std::string_view Next() {
    const size_t start = std::min(rest_.find_first_not_of(' '), rest_.size());
    rest_.remove_prefix(start);
    const size_t end = std::min(rest_.find(' '), rest_.size());
    const std::string_view token = rest_.substr(0, end);
    rest_.remove_prefix(end);
    return token;
  }
  void Key(std::string_view key) {
    const std::string_view token = Next();
    if (token != key) throw BadLine{fmt::format("has {} where NCCL prints '{}'", Shown(token), key)};
  }
  int64_t Decimal(std::string_view key, int64_t lo, int64_t hi) { return DecimalOf(key, Next(), lo, hi); }
  uint64_t Pointer(std::string_view key) { return PointerOf(key, Next()); }
  uint64_t Hex(std::string_view key) {
    const std::string_view token = Next();
    return HexOf(key, token, token);
  }

  static int64_t DecimalOf(std::string_view key, std::string_view token, int64_t lo, int64_t hi) {
    std::string_view digits = token;
    const bool negative = !digits.empty() && digits.front() == '-';
    if (negative) digits.remove_prefix(1);
    if (!digits.empty() && digits.size() <= 18 && std::all_of(digits.begin(), digits.end(), IsDigit)) {
      int64_t v = 0;
      for (char c : digits) v = v * 10 + (c - '0');
      if (negative) v = -v;
      if (v >= lo && v <= hi) return v;
    }
    throw BadLine{fmt::format("{} {} is not a whole number from {} to {}", key, Shown(token), lo, hi)};
  }
  // %p (glibc: "0x..." or "(nil)"), and "0x%llx".
  static uint64_t PointerOf(std::string_view key, std::string_view token) {
    if (token == "(nil)") return 0;
    if (token.starts_with("0x")) return HexOf(key, token.substr(2), token);
    throw BadLine{fmt::format("{} {} is not a pointer as NCCL prints one (0x... or (nil))", key, Shown(token))};
  }
  // The digits of `token` (all of it, or what follows its "0x").
  static uint64_t HexOf(std::string_view key, std::string_view digits, std::string_view token) {
    const auto hex = [](char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
    if (digits.empty() || digits.size() > 16 || !std::all_of(digits.begin(), digits.end(), hex)) {
      throw BadLine{fmt::format("{} {} is not a hexadecimal number of at most 16 digits", key, Shown(token))};
    }
    uint64_t v = 0;
    for (char c : digits) v = v * 16 + static_cast<uint64_t>(IsDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
    return v;
  }

 private:
  std::string_view rest_;
};

Call CallOf(std::string_view name) {
  for (const auto& [call, n] : kCalls) {
    if (n == name) return call;
  }
  throw BadLine{
      fmt::format("{} is no NCCL call seam reads (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, "
                  "Send, Recv, AlltoAll)",
                  Shown(name))};
}

bool Rooted(Call c) { return c == Call::kBroadcast || c == Call::kReduce || c == Call::kSend || c == Call::kRecv; }

// What the trace counts for a call whose count is per rank, checked
// against the bound before it is multiplied.
void CheckTotal(const CollLine& c) {
  if (c.call != Call::kReduceScatter && c.call != Call::kAlltoAll) return;
  if (c.count > kMaxTraceElements / c.nranks) {
    throw BadLine{fmt::format("{} of count {} on {} ranks moves over {} elements", c.function, c.count, c.nranks,
                              kMaxTraceElements)};
  }
}

void CheckDatatype(int64_t d) {
  if (d < 0 || d >= static_cast<int64_t>(kDtypes.size())) {
    throw BadLine{fmt::format("datatype {} is not one of NCCL's (0 ncclInt8 to 11 ncclFloat8e5m2)", d)};
  }
  if (kDtypes[static_cast<size_t>(d)].empty()) {
    throw BadLine{
        fmt::format("datatype {} is {}, which no torch dtype maps to", d, kDtypeNames[static_cast<size_t>(d)])};
  }
}

// "[nranks=8]"
int NranksOf(std::string_view token) {
  if (!token.starts_with("[nranks=") || !token.ends_with("]")) {
    throw BadLine{fmt::format("has {} where NCCL prints '[nranks=N]'", Shown(token))};
  }
  return static_cast<int>(Fields::DecimalOf("nranks", token.substr(8, token.size() - 9), 1, kMaxRanks));
}

}  // namespace

std::optional<Info> FindInfo(std::string_view line) {
  for (size_t at = line.find(kMark); at != std::string_view::npos; at = line.find(kMark, at + 1)) {
    if (std::optional<std::string> process = ProcessAtEnd(line.substr(0, at))) {
      return Info{std::move(*process), TrimEnd(line.substr(at + kMark.size()))};
    }
  }
  return std::nullopt;
}

std::optional<CollLine> ParseColl(std::string_view message) {
  const size_t colon = message.find(": opCount ");
  if (colon == std::string_view::npos || colon == 0 || colon > kShown ||
      !std::all_of(message.begin(), message.begin() + static_cast<ptrdiff_t>(colon), IsAlnum)) {
    return std::nullopt;
  }
  CollLine c{.call = CallOf(message.substr(0, colon)), .function = message.substr(0, colon)};
  Fields f(message.substr(colon + 1));
  f.Key("opCount");
  f.Hex("opCount");
  f.Key("sendbuff");
  f.Pointer("sendbuff");
  f.Key("recvbuff");
  f.Pointer("recvbuff");
  f.Key("count");
  c.count = f.Decimal("count", 0, kMaxTraceElements);
  f.Key("datatype");
  const int64_t datatype = f.Decimal("datatype", INT_MIN, INT_MAX);
  CheckDatatype(datatype);
  c.datatype = static_cast<int>(datatype);
  f.Key("op");
  c.op = f.Decimal("op", INT_MIN, INT_MAX);
  if (c.op < 0) throw BadLine{fmt::format("op {} is not an NCCL reduction (0 to 4, or a PreMulSum from 5)", c.op)};
  f.Key("root");
  const int64_t root = f.Decimal("root", INT_MIN, INT_MAX);
  f.Key("comm");
  c.comm = f.Pointer("comm");
  c.nranks = NranksOf(f.Next());
  if (Rooted(c.call) && (root < 0 || root >= c.nranks)) {
    throw BadLine{fmt::format("root {} is not a rank of the communicator's {}", root, c.nranks)};
  }
  c.root = Rooted(c.call) ? static_cast<int>(root) : 0;
  f.Key("stream");
  f.Pointer("stream");
  // RCCL goes on with "task %d globalrank %d"; upstream NCCL ends here.
  std::string_view token = f.Next();
  if (token == "task") {
    f.Decimal("task", INT_MIN, INT_MAX);
    f.Key("globalrank");
    f.Decimal("globalrank", INT_MIN, INT_MAX);
    token = f.Next();
  }
  if (!token.empty()) throw BadLine{fmt::format("has {} after the stream, where NCCL ends the line", Shown(token))};
  CheckTotal(c);
  return c;
}

std::optional<InitLine> ParseInit(std::string_view message) {
  std::string_view m = message;
  if (m.ends_with("Init START")) {
    m.remove_suffix(std::string_view("Init START").size());
  } else if (m.ends_with("Init COMPLETE")) {
    m.remove_suffix(std::string_view("Init COMPLETE").size());
  } else {
    return std::nullopt;
  }
  // "... commId 0x1 - Init START", and 2.25's split "... key 0- Init START".
  m = TrimEnd(m);
  if (!m.ends_with('-')) return std::nullopt;
  m.remove_suffix(1);
  Fields f(m);
  std::string_view token = f.Next();
  // From 2.21 the API that made the communicator comes first
  // (ncclCommInitRank, ncclCommInitRankConfig, ncclCommSplit, ...).
  if (token != "comm") {
    if (!token.starts_with("nccl") || !std::all_of(token.begin(), token.end(), IsAlnum)) return std::nullopt;
    token = f.Next();
    if (token != "comm") return std::nullopt;
  }
  InitLine init;
  std::optional<int64_t> rank, nranks, color;
  for (std::string_view key = token; !key.empty(); key = f.Next()) {
    const std::string_view value = f.Next();
    if (value.empty()) throw BadLine{fmt::format("the init line's {} has no value", Shown(key))};
    if (key == "comm") init.comm = Fields::PointerOf("comm", value);
    if (key == "parent") init.parent = Fields::PointerOf("parent", value);
    if (key == "commId") init.comm_id = Fields::PointerOf("commId", value);
    if (key == "rank") rank = Fields::DecimalOf("rank", value, 0, kMaxRanks - 1);
    if (key == "nranks") nranks = Fields::DecimalOf("nranks", value, 1, kMaxRanks);
    if (key == "color") color = Fields::DecimalOf("color", value, INT_MIN, INT_MAX);
    if (key == "splitCount" || key == "childCount") init.split_count = Fields::DecimalOf(key, value, 0, INT_MAX);
    if (key == "cudaDev" || key == "nvmlDev" || key == "key") Fields::DecimalOf(key, value, INT_MIN, INT_MAX);
    if (key == "busId") Fields::HexOf("busId", value, value);
    // Any other field a later NCCL adds is passed over with its value.
  }
  if (!rank || !nranks) throw BadLine{"an init line without its rank and nranks"};
  if (*rank >= *nranks) throw BadLine{fmt::format("rank {} is not below nranks {}", *rank, *nranks)};
  init.rank = static_cast<int>(*rank);
  init.nranks = static_cast<int>(*nranks);
  if (!init.comm_id && !init.parent) {
    throw BadLine{
        "an init line without commId, as NCCL before 2.18 prints it: seam joins a communicator's processes by the "
        "commId of NCCL 2.18 and later ('comm 0x... rank 0 nranks 8 ... commId 0x... - Init START')"};
  }
  if (!init.comm_id && !color) throw BadLine{"a split's init line without its color"};
  init.color = color.value_or(0);
  return init;
}

std::string Pointer(uint64_t p) { return p == 0 ? std::string("(nil)") : fmt::format("0x{:x}", p); }

}  // namespace seam::nccl
