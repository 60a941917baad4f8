// seam/trace.h — what an engine's ranks actually ran: each rank's
// collectives in the order it called them, as a trace records them.
//
// The first reader takes JSON lines, one object a collective call, as a
// hook around torch.distributed's collectives writes them:
//
//   {"rank": 3, "op": "all_reduce", "group": [0, 1, 2, 3], "shape": [64, 7168],
//    "dtype": "bfloat16", "reduce": "sum", "tag": "layer 3 exit"}
//
// `shape` is the tensor the rank passes in (an all-gather's shard, a
// reduce-scatter's whole input, an all-reduce's buffer); `peer` is the
// other end of a send or receive and a broadcast's root (global ranks).
//
//   Expected<std::vector<RankTrace>> t = ReadJsonlTrace(text);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam {

enum class TraceOp { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kSend, kRecv };
std::string_view Name(TraceOp op);

struct TraceEvent {
  TraceOp op = TraceOp::kAllReduce;
  std::vector<int> group;  // the group's global ranks, in its own rank order
  std::vector<int64_t> shape;
  int64_t elements = 0;  // the shape's product
  std::string dtype;     // as torch names it: "bfloat16", "float32", "float8_e4m3fn", ...
  std::string reduce;    // "sum", "avg", "max", "min", "prod"; "" where the op reduces nothing
  int peer = -1;         // a send's or receive's other end, a broadcast's root; -1 for the rest
  std::string tag;       // what the engine called the place ("layer 3 exit"); may be empty
  int line = 0;          // where the trace said it (1-based)
  bool operator==(const TraceEvent&) const = default;
};

struct RankTrace {
  int rank = 0;
  std::vector<TraceEvent> events;  // in the order the rank called them
};

// A trace's bounds: a larger file, line or shape is refused, never read.
inline constexpr int64_t kMaxTraceBytes = int64_t{1} << 30;
inline constexpr size_t kMaxTraceLine = 64 * 1024;
inline constexpr int64_t kMaxTraceElements = int64_t{1} << 40;

// Each rank's events, ranks in increasing order. Every field is checked
// (an unknown key, op, dtype or reduction, a group without the rank, a
// reduction where the op has none, a peer outside the group) and refused
// as Malformed naming its line.
Expected<std::vector<RankTrace>> ReadJsonlTrace(std::string_view text);

}  // namespace seam
