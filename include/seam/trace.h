// seam/trace.h — what an engine's ranks actually ran: each rank's
// collectives in the order it called them, as a trace records them.
//
// Three readers bring a run's collectives into one form, and three writers
// write that form back out as the engine's own tools would:
//
//   - seam.trace's JSON lines, one object a call, as the hook the Python
//     package ships writes them around torch.distributed:
//       {"rank": 3, "op": "all_reduce", "group": [0, 1, 2, 3], "shape": [64, 7168],
//        "dtype": "bfloat16", "reduce": "sum", "tag": "layer 3 exit"}
//   - NCCL's own log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL): a line a
//     call, and the init lines that tie each communicator to its members;
//   - a PyTorch profiler trace (Chrome JSON, one file a rank): the
//     record_param_comms events c10d writes for each collective.
//
// Every reader yields the same numbers for the same call. `elements` is:
//   all_reduce, broadcast, reduce   the buffer
//   all_gather                      this rank's part (what it sends)
//   reduce_scatter                  the whole input (every member's part)
//   all_to_all                      everything this rank sends, its own part included
//   send, recv                      the message
// `peer` is a broadcast's or reduce's root, a send's or receive's other end
// (global ranks). NCCL knows no shapes: its events' shape is [elements].
//
//   Expected<std::vector<RankTrace>> t = ReadJsonlTrace(text);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam {

enum class TraceOp { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kReduce, kSend, kRecv };
std::string_view Name(TraceOp op);

struct TraceEvent {
  TraceOp op = TraceOp::kAllReduce;
  std::vector<int> group;  // the group's global ranks, in its own rank order
  std::vector<int64_t> shape;
  int64_t elements = 0;  // the shape's product
  std::string dtype;     // as torch names it: "bfloat16", "float32", "float8_e4m3fn", ...
  std::string reduce;    // "sum", "avg", "max", "min", "prod"; "" where the op reduces nothing
  int peer = -1;         // a send's or receive's other end, a broadcast's or reduce's root; -1 for the rest
  std::string tag;       // what the engine called the place ("layer 3 exit"); may be empty
  // Each member's elements in group order, where the trace says them: an
  // all-gather's parts, a reduce-scatter's parts of the sum, what an
  // all-to-all sends each member. Empty: even parts (or unknown).
  std::vector<int64_t> splits;
  int line = 0;  // where the trace said it (1-based)
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
// The same lines back, one a call, ranks in turn; ReadJsonlTrace reads them
// back to the same events.
std::string WriteJsonlTrace(std::span<const RankTrace> ranks);

// NCCL's log of every process (one text a file; a file may hold several
// processes' lines, and one process's lines may be spread over files). A
// process's global rank is its rank in the communicator that spans every
// process (PyTorch's default group); a communicator's members are the
// processes whose init lines share its commId (or, for a split without
// one, its parent and color). Refused, naming the line: a call on a
// communicator no init line names, a count or datatype NCCL does not
// print, no communicator spanning every process.
Expected<std::vector<RankTrace>> ReadNcclLogs(std::span<const std::string> texts);
// The NCCL releases whose log lines differ (see docs/traces.md).
enum class NcclVersion { k2_18, k2_21, k2_25 };
// Each rank's log as NCCL of `version` would print it for a PyTorch
// process: the world communicator's init, each group's split, then a COLL
// line a call (an all-to-all as PyTorch runs it on NCCL: a send and a
// receive to each member, its own included, in one group). One text a rank.
// The ranks are 0 to n-1, each group's members among them, each dtype one
// NCCL numbers (bool is written as PyTorch passes it, as uint8), and a
// reduce-scatter's or all-to-all's elements divide among its group (NCCL
// counts a member's share); anything else is a bug in the caller.
std::vector<std::string> WriteNcclLogs(std::span<const RankTrace> ranks, NcclVersion version);

// PyTorch profiler traces, one Chrome JSON file a rank: the
// record_param_comms CPU events c10d writes (collective name, dtype, in
// and out element counts, the group's global ranks), in time order.
Expected<std::vector<RankTrace>> ReadTorchTraces(std::span<const std::string> texts);
// One rank's trace as torch.profiler exports it: a record_param_comms CPU
// event a call, and the NCCL kernel it launched with the same metadata.
std::string WriteTorchTrace(const RankTrace& rank, int world_size);

}  // namespace seam
