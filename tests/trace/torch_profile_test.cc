// PyTorch profiler traces: the record_param_comms events c10d writes (or,
// without them, the NCCL kernels Kineto copies their args onto) read into
// each rank's collectives in seam's form; one rank's collectives written
// back as torch.profiler exports them; every malformed or hostile trace
// refused naming its file, its event and what is wrong.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>

#include "seam/trace.h"

namespace seam {
namespace {

using nlohmann::json;

std::string Iota(int n) {
  std::vector<int> r(n);
  std::iota(r.begin(), r.end(), 0);
  return fmt::format("[{}]", fmt::join(r, ", "));
}

// A real NCCL kernel event: mlcommons/chakra PR #140, "Encode communicator
// groups in Chakra traces" (https://github.com/mlcommons/chakra/pull/140).
// The quoted excerpt stops at "Collective name"; the rest is completed with
// the keys pytorch/kineto's ChromeTraceLogger writes after it, in its order
// ("Collective name", "In msg nelems", "Out msg nelems", "Group size",
// "dtype", the split sizes, the group's name, description and ranks), with
// values of our choosing, and the "ts" and "dur" every complete event has,
// likewise ours. The distributedInfo is the one Kineto writes itself where
// torch.profiler adds none (its "ranks" a string).
const char* const kChakraKernel = R"json({
  "schemaVersion": 1,
  "traceEvents": [
  {
    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242,
    "ts": 1699999999999.100, "dur": 4.2,
    "args": {"External id": 14728, "cbid": 211, "correlation": 136816}
  },
  {
    "ph": "X",
    "cat": "kernel",
    "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "pid": 0,
    "tid": 60,
    "ts": 1699999999999.500, "dur": 81.3,
    "args": {
      "External id": 14728,
      "queued": 0,
      "device": 0,
      "context": 1,
      "stream": 60,
      "correlation": 136816,
      "registers per thread": 96,
      "shared memory": 89296,
      "blocks per SM": 0.222222,
      "warps per SM": 3.777778,
      "grid": [24, 1, 1],
      "block": [544, 1, 1],
      "est. achieved occupancy %": 0,
      "Collective name": "allreduce",
      "In msg nelems": 458752,
      "Out msg nelems": 458752,
      "Group size": 8,
      "dtype": "BFloat16",
      "In split size": "[]",
      "Out split size": "[]",
      "Process Group Name": "0",
      "Process Group Description": "default_pg",
      "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"
    }
  }
  ],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8, "pg_count": 1, "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 8, "ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}], "nccl_version": "unknown"},
  "traceName": "/tmp/rank0.pt.trace.json"
})json";

TEST(TorchTrace, TheChakraKernelEventReadsAsItsAllReduce) {
  const std::vector<std::string> texts = {kChakraKernel};
  const Expected<std::vector<RankTrace>> t = ReadTorchTraces(texts);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 1U);
  EXPECT_EQ((*t)[0].rank, 0);
  ASSERT_EQ((*t)[0].events.size(), 1U);
  const TraceEvent& e = (*t)[0].events[0];
  EXPECT_EQ(e.op, TraceOp::kAllReduce);
  EXPECT_EQ(e.group, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(e.elements, 458752);
  EXPECT_EQ(e.shape, (std::vector<int64_t>{458752}));  // a kernel records no shape
  EXPECT_EQ(e.dtype, "bfloat16");
  EXPECT_EQ(e.reduce, "sum");  // a trace does not say which reduction ran
  EXPECT_EQ(e.peer, -1);
  EXPECT_EQ(e.line, 2);  // the second event of the trace
}

// Rank 1 of 64, as torch.profiler(record_shapes=True) exports it: no
// distributedInfo (its rank is its collectives' own "Rank"), events out of
// time order, "Process Group Ranks" as a JSON list (older releases), as a
// string, and cut short past 30 ranks (read from "Global rank start" and
// "Global rank stride"); init, wait, barrier, the nccl:* ops, the kernels
// and the broadcasts an all-gather of uneven parts runs inside its own
// event are passed over.
std::string RankOneTrace() {
  const std::string cut =
      "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, "
      "..., 63]";
  const std::string tp =
      R"("Global rank start": 0, "Global rank stride": 1, "Group size": 4, "Process Group Name": "1", "Process Group Description": "undefined")";
  return fmt::format(R"json({{
  "schemaVersion": 1,
  "deviceProperties": [{{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912}}],
  "traceEvents": [
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 5.000, "dur": 1.000,
    "args": {{"External id": 1, "Record function id": 0, "Collective name": "init", "dtype": "Byte", "In msg nelems": 0, "Out msg nelems": 0, "In split size": "[]", "Out split size": "[]", "Global rank start": 0, "Global rank stride": 1, "Group size": 64, "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "{0}", "Rank": 1}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": 7, "tid": 7, "ts": 20.000, "dur": 3.000,
    "args": {{"External id": 2, "Record function id": 0, "Sequence number": 12}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 20.500, "dur": 2.000,
    "args": {{"External id": 3, "Record function id": 0, "Input Dims": [[[8, 512]], [], [], [], [], [], [], [], [], []], "Collective name": "allreduce", "dtype": "BFloat16", "In msg nelems": 4096, "Out msg nelems": 4096, "In split size": "[]", "Out split size": "[]", {1}, "Process Group Ranks": [0, 1, 2, 3], "Rank": 1}}}},
  {{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 1, "tid": 61, "ts": 25.000, "dur": 9.000,
    "args": {{"External id": 3, "Collective name": "allreduce", "In msg nelems": 4096, "Out msg nelems": 4096, "Group size": 4, "dtype": "BFloat16", "In split size": "[]", "Out split size": "[]", "Process Group Name": "1", "Process Group Description": "undefined", "Process Group Ranks": "[0, 1, 2, 3]"}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 40.250, "dur": 2.000,
    "args": {{"External id": 5, "Record function id": 0, "Input Dims": [[4, 256], [], [], [], [], [], [], [], [], []], "Collective name": "_allgather_base", "dtype": "Float", "In msg nelems": 1024, "Out msg nelems": 4096, "In split size": "[]", "Out split size": "[]", "Global rank start": 1, "Global rank stride": 2, "Group size": 4, "Process Group Name": "2", "Process Group Description": "undefined", "Process Group Ranks": "[1, 3, 5, 7]", "Rank": 0}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 50.000, "dur": 2.000,
    "args": {{"External id": 6, "Record function id": 0, "Collective name": "barrier", "dtype": "Byte", "In msg nelems": 1, "Out msg nelems": 1, "In split size": "[]", "Out split size": "[]", {1}, "Process Group Ranks": "[0, 1, 2, 3]", "Rank": 1}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 35.000, "dur": 2.000,
    "args": {{"External id": 7, "Record function id": 0, "Collective name": "all_to_allv", "dtype": "BFloat16", "In msg nelems": 6400, "Out msg nelems": 6336, "In split size": "[2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, ..., 2]", "Out split size": "[]", "Global rank start": 0, "Global rank stride": 1, "Group size": 64, "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "{0}", "Rank": 1}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 60.000, "dur": 2.000,
    "args": {{"External id": 8, "Record function id": 0, "Input Dims": [[[2, 256]], [], [], [], [], [], [], [], [], []], "Collective name": "send", "dtype": "Half", "In msg nelems": 512, "Out msg nelems": 512, "In split size": "[]", "Out split size": "[]", {1}, "Process Group Ranks": "[0, 1, 2, 3]", "Rank": 2, "Dst Rank": 2}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 70.000, "dur": 2.000,
    "args": {{"External id": 9, "Record function id": 0, "Collective name": "recv", "dtype": "Half", "In msg nelems": 512, "Out msg nelems": 512, "In split size": "[]", "Out split size": "[]", {1}, "Process Group Ranks": "[0, 1, 2, 3]", "Rank": 0, "Src Rank": 0}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 80.000, "dur": 2.000,
    "args": {{"External id": 10, "Record function id": 0, "Collective name": "broadcast", "dtype": "Long", "In msg nelems": 3, "Out msg nelems": 3, "In split size": "[]", "Out split size": "[]", {1}, "Process Group Ranks": "[0, 1, 2, 3]", "Rank": 0}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 90.000, "dur": 2.000,
    "args": {{"External id": 11, "Record function id": 0, "Collective name": "reduce_scatter", "dtype": "Float", "In msg nelems": 4096, "Out msg nelems": 1024, "In split size": "[]", "Out split size": "[]", {1}, "Process Group Ranks": "[0, 1, 2, 3]", "Rank": 1}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 95.000, "dur": 1.000,
    "args": {{"External id": 12, "Record function id": 0, "Collective name": "wait", "dtype": "Byte", "In msg nelems": 0, "Out msg nelems": 0, "In split size": "[]", "Out split size": "[]", "Group size": 1, "Process Group Name": "1", "Process Group Description": "undefined", "Process Group Ranks": "[]", "Rank": 1}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 100.000, "dur": 10.000,
    "args": {{"External id": 13, "Record function id": 0, "Input Dims": [[[3, 100]], [], [], [], [], [], [], [], [], []], "Collective name": "all_gather", "dtype": "Float", "In msg nelems": 300, "Out msg nelems": 1200, "In split size": "[]", "Out split size": "[]", {1}, "Process Group Ranks": "[0, 1, 2, 3]", "Rank": 1}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 101.000, "dur": 1.000,
    "args": {{"External id": 14, "Record function id": 0, "Collective name": "_broadcast_oop", "dtype": "Float", "In msg nelems": 250, "Out msg nelems": 250, "In split size": "[]", "Out split size": "[]", {1}, "Process Group Ranks": "[0, 1, 2, 3]", "Rank": 1}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 7, "ts": 103.000, "dur": 1.000,
    "args": {{"External id": 15, "Record function id": 0, "Collective name": "_broadcast_oop", "dtype": "Float", "In msg nelems": 300, "Out msg nelems": 300, "In split size": "[]", "Out split size": "[]", {1}, "Process Group Ranks": "[0, 1, 2, 3]", "Rank": 1}}}},
  {{"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 120.000}}
  ],
  "traceName": "/tmp/rank1.pt.trace.json"
}})json",
                     cut, tp);
}

// Rank 3, with the distributedInfo torch.profiler adds: a group whose ranks
// are not a stride apart has "Process Group Ranks" empty, and is read from
// the pg_config; a group of one is its "Global rank start".
std::string RankThreeTrace() {
  return fmt::format(R"({{
  "schemaVersion": 1,
  "distributedInfo": {{"backend": "nccl", "rank": 3, "world_size": 64, "pg_count": 2, "pg_config": [{{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 64, "ranks": {0}}}, {{"pg_name": "5", "pg_desc": "undefined", "backend_config": "cuda:nccl", "pg_size": 4, "ranks": [3, 0, 2, 1]}}], "nccl_version": "2.26.2"}},
  "traceEvents": [
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 9, "tid": 9, "ts": 10.000, "dur": 2.000,
    "args": {{"External id": 1, "Record function id": 0, "Collective name": "allreduce", "dtype": "BFloat16", "In msg nelems": 64, "Out msg nelems": 64, "In split size": "[]", "Out split size": "[]", "Global rank start": 3, "Group size": 4, "Process Group Name": "5", "Process Group Description": "undefined", "Process Group Ranks": "[]", "Rank": 0}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 9, "tid": 9, "ts": 20.000, "dur": 2.000,
    "args": {{"External id": 2, "Record function id": 0, "Collective name": "send", "dtype": "BFloat16", "In msg nelems": 64, "Out msg nelems": 64, "In split size": "[]", "Out split size": "[]", "Global rank start": 3, "Group size": 4, "Process Group Name": "5", "Process Group Description": "undefined", "Process Group Ranks": "[]", "Rank": 2}}}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 9, "tid": 9, "ts": 30.000, "dur": 2.000,
    "args": {{"External id": 3, "Record function id": 0, "Collective name": "allreduce", "dtype": "Double", "In msg nelems": 1, "Out msg nelems": 1, "In split size": "[]", "Out split size": "[]", "Global rank start": 3, "Group size": 1, "Process Group Name": "9", "Process Group Description": "undefined", "Process Group Ranks": "[]", "Rank": 0}}}}
  ]
}})",
                     Iota(64));
}

// Rank 2: a bare list of events, as some tools save a trace.
const char* const kRankTwoTrace = R"([
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 8, "tid": 8, "ts": 1, "dur": 1,
   "args": {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 16, "Out msg nelems": 16, "Group size": 4, "Process Group Ranks": "[0, 1, 2, 3]", "Rank": 2}}
])";

TEST(TorchTrace, PyTorchsOwnFormatsReadToTheirCollectives) {
  const std::vector<std::string> texts = {RankThreeTrace(), RankOneTrace(), kRankTwoTrace};
  const Expected<std::vector<RankTrace>> t = ReadTorchTraces(texts);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 3U);
  const std::vector<int> tp = {0, 1, 2, 3};
  const std::vector<int> world(64, 0);
  std::vector<int> iota(64);
  std::iota(iota.begin(), iota.end(), 0);

  const RankTrace& one = (*t)[0];
  EXPECT_EQ(one.rank, 1);
  const std::vector<TraceEvent> want_one = {
      {.op = TraceOp::kAllReduce,
       .group = tp,
       .shape = {8, 512},
       .elements = 4096,
       .dtype = "bfloat16",
       .reduce = "sum",
       .line = 3},
      {.op = TraceOp::kAllToAll, .group = iota, .shape = {6400}, .elements = 6400, .dtype = "bfloat16", .line = 7},
      {.op = TraceOp::kAllGather,
       .group = {1, 3, 5, 7},
       .shape = {4, 256},
       .elements = 1024,
       .dtype = "float32",
       .line = 5},
      {.op = TraceOp::kSend, .group = tp, .shape = {2, 256}, .elements = 512, .dtype = "float16", .peer = 2, .line = 8},
      {.op = TraceOp::kRecv, .group = tp, .shape = {512}, .elements = 512, .dtype = "float16", .peer = 0, .line = 9},
      {.op = TraceOp::kBroadcast, .group = tp, .shape = {3}, .elements = 3, .dtype = "int64", .peer = 0, .line = 10},
      {.op = TraceOp::kReduceScatter,
       .group = tp,
       .shape = {4096},
       .elements = 4096,
       .dtype = "float32",
       .reduce = "sum",
       .line = 11},
      {.op = TraceOp::kAllGather, .group = tp, .shape = {3, 100}, .elements = 300, .dtype = "float32", .line = 13},
  };
  EXPECT_EQ(one.events, want_one);

  const RankTrace& two = (*t)[1];
  EXPECT_EQ(two.rank, 2);
  ASSERT_EQ(two.events.size(), 1U);
  EXPECT_EQ(two.events[0].group, tp);
  EXPECT_EQ(two.events[0].line, 1);

  const RankTrace& three = (*t)[2];
  EXPECT_EQ(three.rank, 3);
  const std::vector<int> uneven = {3, 0, 2, 1};
  const std::vector<TraceEvent> want_three = {
      {.op = TraceOp::kAllReduce,
       .group = uneven,
       .shape = {64},
       .elements = 64,
       .dtype = "bfloat16",
       .reduce = "sum",
       .line = 1},
      {.op = TraceOp::kSend, .group = uneven, .shape = {64}, .elements = 64, .dtype = "bfloat16", .peer = 2, .line = 2},
      {.op = TraceOp::kAllReduce,
       .group = {3},
       .shape = {1},
       .elements = 1,
       .dtype = "float64",
       .reduce = "sum",
       .line = 3},
  };
  EXPECT_EQ(three.events, want_three);
}

// Rank 2 of 48: every op, groups in and out of order, uneven, of one rank
// and of more than 30 (whose "Process Group Ranks" PyTorch cuts short).
RankTrace EveryOp() {
  std::vector<int> forty(40);
  std::iota(forty.begin(), forty.end(), 0);
  RankTrace r{.rank = 2};
  r.events = {
      {.op = TraceOp::kAllReduce,
       .group = {0, 1, 2, 3},
       .shape = {4, 64},
       .elements = 256,
       .dtype = "bfloat16",
       .reduce = "sum",
       .tag = "layer 0 exit"},
      {.op = TraceOp::kAllGather, .group = {2, 6}, .shape = {16}, .elements = 16, .dtype = "float32"},
      {.op = TraceOp::kReduceScatter,
       .group = {3, 2, 1, 0},
       .shape = {8, 8},
       .elements = 64,
       .dtype = "float32",
       .reduce = "sum"},
      {.op = TraceOp::kAllToAll, .group = {0, 2, 5}, .shape = {30, 2}, .elements = 60, .dtype = "bfloat16"},
      {.op = TraceOp::kBroadcast, .group = {0, 1, 2, 3}, .shape = {5}, .elements = 5, .dtype = "int64", .peer = 0},
      {.op = TraceOp::kReduce,
       .group = {2, 0},
       .shape = {3},
       .elements = 3,
       .dtype = "float16",
       .reduce = "sum",
       .peer = 0},
      {.op = TraceOp::kSend, .group = forty, .shape = {2, 3}, .elements = 6, .dtype = "bfloat16", .peer = 35},
      {.op = TraceOp::kRecv, .group = {2, 6}, .shape = {7}, .elements = 7, .dtype = "float8_e4m3fn", .peer = 6},
      {.op = TraceOp::kSend, .group = {1, 2, 7}, .shape = {4}, .elements = 4, .dtype = "int32", .peer = 7},
      {.op = TraceOp::kAllReduce, .group = {2}, .shape = {1}, .elements = 1, .dtype = "float64", .reduce = "sum"},
      {.op = TraceOp::kAllGather, .group = forty, .shape = {2, 2, 2}, .elements = 8, .dtype = "uint8"},
      {.op = TraceOp::kBroadcast, .group = {7, 2}, .shape = {9}, .elements = 9, .dtype = "bool", .peer = 7},
      {.op = TraceOp::kAllToAll, .group = {2, 3}, .shape = {0}, .elements = 0, .dtype = "int8"},
      {.op = TraceOp::kRecv, .group = {0, 1, 2, 3}, .shape = {1, 5}, .elements = 5, .dtype = "float8_e5m2", .peer = 1},
  };
  return r;
}

TEST(TorchTrace, EveryOpWrittenReadsBackToItsEvents) {
  const RankTrace r = EveryOp();
  const std::vector<std::string> texts = {WriteTorchTrace(r, 48)};
  const Expected<std::vector<RankTrace>> back = ReadTorchTraces(texts);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 1U);
  EXPECT_EQ((*back)[0].rank, 2);
  ASSERT_EQ((*back)[0].events.size(), r.events.size());
  for (size_t i = 0; i < r.events.size(); ++i) {
    TraceEvent want = r.events[i];
    want.tag.clear();                         // a profiler trace has no place for it
    want.line = static_cast<int>(2 * i) + 1;  // each call's CPU event, then its kernel
    EXPECT_EQ((*back)[0].events[i], want) << i;
  }
}

// What an all-to-all sends each member comes back from its "In split size"
// (rows, as c10d records input_split_sizes), past 65535 rows too.
TEST(TorchTrace, AnAllToAllsSplitSizesReadBackAsEachMembersElements) {
  RankTrace r;
  r.rank = 1;
  r.events = {{.op = TraceOp::kAllToAll,
               .group = {0, 1, 2, 3},
               .shape = {70004, 8},
               .elements = 70004 * 8,
               .dtype = "bfloat16",
               .splits = {3 * 8, 0, 70000 * 8, 1 * 8}}};
  const std::string text = WriteTorchTrace(r, 4);
  EXPECT_NE(text.find(R"("In split size":"[3, 0, 70000, 1]")"), std::string::npos) << text;
  const std::vector<std::string> texts = {text};
  const Expected<std::vector<RankTrace>> back = ReadTorchTraces(texts);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ((*back)[0].events[0].splits, r.events[0].splits);
  // A list c10d cut short says nothing of the parts; one that does not
  // divide the elements is refused.
  for (const auto& [list, message] : std::vector<std::pair<std::string, std::string>>{
           {R"("[3, 0, ..., 1]")", ""},
           {R"("[3, 0, 7]")", "\"In split size\" does not give one size for each of the group's 4 members"},
           {R"("[3, 0, 70000, 2]")",
            "\"In split size\" adds up to 70005 rows, which 560032 elements are not a whole number of"}}) {
    std::string edited = text;
    const std::string from = R"("[3, 0, 70000, 1]")";
    for (size_t at = edited.find(from); at != std::string::npos; at = edited.find(from, at)) {
      edited.replace(at, from.size(), list);
    }
    const std::vector<std::string> one = {edited};
    const Expected<std::vector<RankTrace>> t = ReadTorchTraces(one);
    if (message.empty()) {
      ASSERT_TRUE(t.ok()) << t.error().message;
      EXPECT_TRUE((*t)[0].events[0].splits.empty());
    } else {
      ASSERT_FALSE(t.ok()) << list;
      EXPECT_NE(t.error().message.find(message), std::string::npos) << t.error().message;
    }
  }
}

TEST(TorchTrace, TheWrittenTraceIsTorchProfilersFormAndTheSameEveryTime) {
  const RankTrace r = EveryOp();
  const std::string text = WriteTorchTrace(r, 48);
  EXPECT_EQ(text, WriteTorchTrace(r, 48));
  const json j = json::parse(text);
  EXPECT_EQ(j["schemaVersion"], 1);
  EXPECT_EQ(j["distributedInfo"]["rank"], 2);
  EXPECT_EQ(j["distributedInfo"]["world_size"], 48);
  EXPECT_EQ(j["distributedInfo"]["pg_config"][0]["pg_name"], "0");
  EXPECT_EQ(j["distributedInfo"]["pg_config"][0]["pg_desc"], "default_pg");
  const json& events = j["traceEvents"];
  ASSERT_EQ(events.size(), 2 * r.events.size());
  const json& op = events[0];
  EXPECT_EQ(op["cat"], "cpu_op");
  EXPECT_EQ(op["name"], "record_param_comms");
  EXPECT_EQ(op["args"]["Collective name"], "allreduce");
  EXPECT_EQ(op["args"]["dtype"], "BFloat16");
  EXPECT_EQ(op["args"]["Process Group Ranks"], "[0, 1, 2, 3]");
  EXPECT_EQ(op["args"]["Rank"], 2);
  const json& kernel = events[1];
  EXPECT_EQ(kernel["cat"], "kernel");
  EXPECT_EQ(kernel["name"], "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(kernel["args"]["External id"], op["args"]["External id"]);
  EXPECT_FALSE(kernel["args"].contains("Rank"));
  // A send in a group of 40: the list cut to its first 29 ranks and its last,
  // the other end's group rank in "Rank" and its global rank in "Dst Rank".
  const json& send = events[12]["args"];
  EXPECT_EQ(send["Collective name"], "send");
  EXPECT_EQ(send["Process Group Ranks"],
            "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, "
            "28, ..., 39]");
  EXPECT_EQ(send["Rank"], 35);
  EXPECT_EQ(send["Dst Rank"], 35);
  // Ranks out of order: no list, no stride, and no "Dst Rank" (as PyTorch).
  const json& uneven = events[16]["args"];
  EXPECT_EQ(uneven["Process Group Ranks"], "[]");
  EXPECT_FALSE(uneven.contains("Global rank stride"));
  EXPECT_FALSE(uneven.contains("Dst Rank"));
  EXPECT_EQ(events[3]["name"], "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(events[7]["args"]["Collective name"], "all_to_allv");
  EXPECT_EQ(events[9]["name"], "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(events[15]["name"], "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
}

// The trace without its CPU events: only the kernels, as where the
// record_param_comms events fell outside what was recorded.
std::string KernelsOnly(const std::string& text) {
  json j = json::parse(text);
  json kept = json::array();
  for (json& e : j["traceEvents"]) {
    if (e["cat"] == "kernel") kept.push_back(std::move(e));
  }
  j["traceEvents"] = std::move(kept);
  return j.dump();
}

TEST(TorchTrace, AKernelsOnlyTraceReadsFromItsKernels) {
  RankTrace r = EveryOp();
  // A kernel carries no "Rank": a broadcast's or reduce's root, and a
  // send's other end in a group whose ranks PyTorch does not list, are not
  // in it (AKernelWithoutItsRootIsRefused).
  std::erase_if(r.events, [](const TraceEvent& e) {
    return e.op == TraceOp::kBroadcast || e.op == TraceOp::kReduce || e.group == std::vector<int>{1, 2, 7};
  });
  const std::vector<std::string> texts = {KernelsOnly(WriteTorchTrace(r, 48))};
  const Expected<std::vector<RankTrace>> back = ReadTorchTraces(texts);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ((*back)[0].events.size(), r.events.size());
  for (size_t i = 0; i < r.events.size(); ++i) {
    TraceEvent want = r.events[i];
    want.tag.clear();
    want.shape = {want.elements};  // a kernel records no shape
    want.line = static_cast<int>(i) + 1;
    EXPECT_EQ((*back)[0].events[i], want) << i;
  }
}

TEST(TorchTrace, CpuEventsOfNoDataLeaveTheKernelsToBeRead) {
  const std::string text = R"json({"distributedInfo": {"rank": 1}, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
   "args": {"Collective name": "wait", "dtype": "Byte", "In msg nelems": 0, "Out msg nelems": 0, "Group size": 1, "Process Group Ranks": "[]", "Rank": 1}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 60, "ts": 2, "dur": 1,
   "args": {"Collective name": "_allgather_base", "In msg nelems": 4, "Out msg nelems": 8, "Group size": 2, "dtype": "Float", "Process Group Ranks": "[0, 1]"}}
  ]})json";
  const Expected<std::vector<RankTrace>> t = ReadTorchTraces(std::vector<std::string>{text});
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ((*t)[0].events.size(), 1U);
  EXPECT_EQ((*t)[0].events[0].op, TraceOp::kAllGather);
  EXPECT_EQ((*t)[0].events[0].line, 2);
}

// Each event holds its group's ranks: a short event naming a group of 65536
// cannot make a reading hold more than 2^26 of them in all.
TEST(TorchTrace, EventsNamingGroupsPastTheBoundAreRefused) {
  std::vector<std::string> events;
  for (int i = 0; i < 1025; ++i) {
    events.push_back(fmt::format(
        R"({{"cat": "cpu_op", "name": "record_param_comms", "ts": {}, "args": {{"Collective name": "allreduce", )"
        R"("dtype": "Float", "In msg nelems": 1, "Out msg nelems": 1, "Group size": 65536, "Global rank start": 0, )"
        R"("Global rank stride": 1, "Process Group Ranks": "[]", "Rank": 0}}}})",
        i));
  }
  const std::string text = fmt::format(R"({{"traceEvents": [{}]}})", fmt::join(events, ",\n"));
  const Expected<std::vector<RankTrace>> t = ReadTorchTraces(std::vector<std::string>{text});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message,
            "profiler trace 1 event 1025: the traces' events name more than 67108864 group members in all");
}

TEST(TorchTrace, ACallWithBothItsCpuEventAndItsKernelCountsOnce) {
  const RankTrace r = EveryOp();
  const std::string text = WriteTorchTrace(r, 48);
  ASSERT_EQ(json::parse(text)["traceEvents"].size(), 2 * r.events.size());
  const std::vector<std::string> texts = {text};
  const Expected<std::vector<RankTrace>> back = ReadTorchTraces(texts);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ((*back)[0].events.size(), r.events.size());
  for (const TraceEvent& e : (*back)[0].events) EXPECT_EQ(e.line % 2, 1);  // each read from its CPU event
}

TEST(TorchTrace, RanksComeBackInOrderWhateverTheFilesOrder) {
  std::vector<std::string> texts;
  for (int rank : {3, 0, 2, 1}) {
    RankTrace r{.rank = rank};
    r.events = {{.op = TraceOp::kAllReduce,
                 .group = {0, 1, 2, 3},
                 .shape = {2},
                 .elements = 2,
                 .dtype = "float32",
                 .reduce = "sum"}};
    texts.push_back(WriteTorchTrace(r, 4));
  }
  const Expected<std::vector<RankTrace>> t = ReadTorchTraces(texts);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 4U);
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ((*t)[rank].rank, rank);
}

// One record_param_comms event with these args, in a trace with this
// distributedInfo (none where null).
std::string OneEvent(const json& args, const json& info = nullptr, const char* cat = "cpu_op") {
  json event = {{"ph", "X"}, {"cat", cat},  {"name", cat == std::string("cpu_op") ? "record_param_comms" : "k"},
                {"pid", 1},  {"tid", 1},    {"ts", 1.5},
                {"dur", 1},  {"args", args}};
  json trace = {{"schemaVersion", 1}, {"traceEvents", json::array({event})}};
  if (!info.is_null()) trace["distributedInfo"] = info;
  return trace.dump();
}

json AllReduceArgs() {
  return {{"Collective name", "allreduce"},
          {"dtype", "BFloat16"},
          {"In msg nelems", 8},
          {"Out msg nelems", 8},
          {"Group size", 2},
          {"Process Group Name", "0"},
          {"Process Group Description", "default_pg"},
          {"Process Group Ranks", "[0, 1]"},
          {"Rank", 0}};
}

json With(json args, const char* key, json value) {
  if (value.is_null()) {
    args.erase(key);
  } else {
    args[key] = std::move(value);
  }
  return args;
}

std::string Refusal(const std::vector<std::string>& texts) {
  const Expected<std::vector<RankTrace>> t = ReadTorchTraces(texts);
  if (t.ok()) return "read";
  EXPECT_EQ(t.error().code, ErrorCode::kMalformed);
  return t.error().message;
}

TEST(TorchTrace, EveryMalformedTraceIsRefusedNamingItsFileEventAndWhy) {
  const json ar = AllReduceArgs();
  const json rank5 = {{"rank", 5}};
  const json rank0 = {{"rank", 0}};
  const json send = With(With(ar, "Collective name", "send"), "Rank", 1);
  const std::string cut =
      R"("[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, ..., 39]")";
  const json forty = With(With(ar, "Group size", 40), "Process Group Ranks", json::parse(cut));
  const std::string e1 = "profiler trace 1 event 1: ";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "no profiler trace to read"},
      {{"{"}, "profiler trace 1: is not JSON (at byte 2)"},
      {{"{\"traceEvents\": []} x"}, "profiler trace 1: is not JSON (at byte 21)"},
      {{R"({"traceEvents": 5})"},
       "profiler trace 1: is neither an object with a \"traceEvents\" list nor a list of events"},
      {{"7"}, "profiler trace 1: is neither an object with a \"traceEvents\" list nor a list of events"},
      {{R"({"traceEvents": [], "traceEvents": []})"},
       "profiler trace 1: key \"traceEvents\" appears twice in one object"},
      {{R"({"traceEvents": [{"args": {"Rank": 1, "Rank": 2}}]})"},
       "profiler trace 1: key \"Rank\" appears twice in one object"},
      {{R"({"traceEvents": [], "distributedInfo": 3})"}, "profiler trace 1: \"distributedInfo\" is not an object"},
      {{OneEvent(ar, {{"rank", -1}})},
       "profiler trace 1: the distributedInfo's \"rank\" is not a whole number from 0 to 65535"},
      {{R"({"traceEvents": []})"},
       "profiler trace 1: holds no collective (a record_param_comms event, or a kernel with a \"Collective name\", "
       "other than init, wait and barrier)"},
      {{OneEvent(With(ar, "Collective name", "init"))},
       "profiler trace 1: holds no collective (a record_param_comms event, or a kernel with a \"Collective name\", "
       "other than init, wait and barrier)"},
      {{R"({"traceEvents": [{"cat": "cpu_op", "name": "record_param_comms", "ts": 1}]})"},
       e1 + "has no \"args\" object"},
      {{OneEvent(With(ar, "In msg nelems", nullptr))}, e1 + "has no \"In msg nelems\""},
      {{OneEvent(With(ar, "Group size", nullptr))}, e1 + "has no \"Group size\""},
      {{OneEvent(With(ar, "Collective name", "gather"))},
       e1 + "\"Collective name\": 'gather' is not one of allreduce, allreduce_coalesced, all_gather, "
            "_allgather_base, allgather_into_tensor_coalesced, reduce_scatter, _reduce_scatter_base, "
            "reduce_scatter_tensor_coalesced, all_to_all, all_to_allv, broadcast, reduce, send, recv (nor init, "
            "wait, barrier, which move no data)"},
      {{OneEvent(With(ar, "Collective name", "_broadcast_oop"))},
       e1 + "\"Collective name\": '_broadcast_oop' is not one of allreduce, allreduce_coalesced, all_gather, "
            "_allgather_base, allgather_into_tensor_coalesced, reduce_scatter, _reduce_scatter_base, "
            "reduce_scatter_tensor_coalesced, all_to_all, all_to_allv, broadcast, reduce, send, recv (nor init, "
            "wait, barrier, which move no data)"},
      {{OneEvent(With(ar, "Collective name", 3))},
       e1 + "\"Collective name\" is not a string of at most 256 characters"},
      {{OneEvent(With(ar, "dtype", "ComplexFloat"))},
       e1 + "\"dtype\": 'ComplexFloat' is not one of BFloat16, Half, Float, Double, Float8_e4m3fn, Float8_e5m2, "
            "Char, Byte, Int, Long, Bool"},
      {{OneEvent(With(ar, "In msg nelems", int64_t{1} << 40 | 1))},
       e1 + "\"In msg nelems\" is not a whole number from 0 to 1099511627776"},
      {{OneEvent(With(ar, "In msg nelems", -8))},
       e1 + "\"In msg nelems\" is not a whole number from 0 to 1099511627776"},
      {{OneEvent(With(ar, "In msg nelems", 8.5))},
       e1 + "\"In msg nelems\" is not a whole number from 0 to 1099511627776"},
      {{OneEvent(With(ar, "In msg nelems", "8"))},
       e1 + "\"In msg nelems\" is not a whole number from 0 to 1099511627776"},
      {{OneEvent(With(ar, "Out msg nelems", -1))},
       e1 + "\"Out msg nelems\" is not a whole number from 0 to 72057594037927936"},
      {{OneEvent(With(ar, "Group size", 0))}, e1 + "\"Group size\" is not a whole number from 1 to 65536"},
      {{OneEvent(With(ar, "Process Group Ranks", "[0, x]"))},
       e1 + "\"Process Group Ranks\" is not a list of ranks from 0 to 65535"},
      {{OneEvent(With(ar, "Process Group Ranks", "0, 1"))},
       e1 + "\"Process Group Ranks\" is not a list of ranks from 0 to 65535"},
      {{OneEvent(With(ar, "Process Group Ranks", "[0, ..., ...]"))},
       e1 + "\"Process Group Ranks\" is not a list of ranks from 0 to 65535"},
      {{OneEvent(With(ar, "Process Group Ranks", json::array({0, 65536})))},
       e1 + "\"Process Group Ranks\" is not a list of ranks from 0 to 65535"},
      {{OneEvent(With(ar, "Process Group Ranks", "[0, 1, 2]"))},
       e1 + "\"Process Group Ranks\" gives 3 ranks, but \"Group size\" is 2"},
      {{OneEvent(With(ar, "Process Group Ranks", "[1, 1]"))}, e1 + "\"Process Group Ranks\" names rank 1 twice"},
      {{OneEvent(With(ar, "Process Group Ranks", "[]"))},
       e1 + "does not say the group's ranks: \"Process Group Ranks\" is empty, and neither the distributedInfo's "
            "pg_config nor \"Global rank start\" and \"Global rank stride\" give them"},
      {{OneEvent(With(ar, "Process Group Ranks", nullptr))},
       e1 + "does not say the group's ranks: \"Process Group Ranks\" is missing, and neither the distributedInfo's "
            "pg_config nor \"Global rank start\" and \"Global rank stride\" give them"},
      {{OneEvent(forty)},
       e1 + "does not say the group's ranks: \"Process Group Ranks\" is cut short, and neither the distributedInfo's "
            "pg_config nor \"Global rank start\" and \"Global rank stride\" give them"},
      {{OneEvent(With(With(forty, "Global rank start", 1), "Global rank stride", 1))},
       e1 + "\"Process Group Ranks\" disagrees with \"Global rank start\" and \"Global rank stride\""},
      {{OneEvent(With(With(forty, "Global rank start", 0), "Global rank stride", 0))},
       e1 + "\"Global rank stride\" is not a whole number from 1 to 65535"},
      {{OneEvent(With(With(forty, "Global rank start", 0), "Global rank stride", 2000))},
       e1 + "\"Global rank start\" and \"Global rank stride\" reach past rank 65535"},
      {{OneEvent(With(ar, "Process Group Ranks", "[]"),
                 {{"rank", 0}, {"pg_config", json::array({{{"pg_name", "0"}, {"ranks", {0, 1, 2}}}})}})},
       e1 + "the distributedInfo's pg_config for group '0' gives 3 ranks, but \"Group size\" is 2"},
      {{OneEvent(With(ar, "Process Group Ranks", "[]"),
                 {{"rank", 0}, {"pg_config", json::array({{{"pg_name", "0"}, {"ranks", "[1, 1]"}}})}})},
       e1 + "the distributedInfo's pg_config for group '0' names rank 1 twice"},
      {{OneEvent(With(ar, "Rank", 2))}, e1 + "\"Rank\" is not a whole number from 0 to 1"},
      {{OneEvent(ar, rank5)}, e1 + "\"Rank\" 0 is the group's global rank 0, but the trace is rank 5"},
      {{OneEvent(With(ar, "Collective name", "broadcast"), rank5)}, e1 + "the group does not hold the trace's rank 5"},
      {{OneEvent(With(ar, "Rank", nullptr))},
       "profiler trace 1: does not say its rank (no distributedInfo \"rank\", and no collective whose \"Rank\" is "
       "its own)"},
      {{OneEvent(With(send, "Rank", nullptr), rank0)}, e1 + "has no \"Dst Rank\""},
      {{OneEvent(With(With(send, "Rank", 0), "Dst Rank", 0), rank0)},
       e1 + "a send whose other end is the trace's own rank"},
      {{OneEvent(With(send, "Dst Rank", 0), rank0)},
       e1 + "\"Dst Rank\" 0 is not \"Rank\" 1, the group's global rank 1"},
      {{OneEvent(With(send, "Dst Rank", 7), rank0)}, e1 + "\"Dst Rank\" 7 is not in the group"},
      {{OneEvent(With(With(With(ar, "Collective name", "recv"), "Rank", nullptr), "Src Rank", 9), rank0)},
       e1 + "\"Src Rank\" 9 is not in the group"},
      {{OneEvent(With(With(ar, "Collective name", "broadcast"), "Rank", nullptr), rank0, "kernel")},
       e1 + "has no \"Rank\" (the broadcast's root)"},
      {{OneEvent(With(ar, "Rank", nullptr), nullptr, "kernel")},
       "profiler trace 1: does not say its rank (no distributedInfo \"rank\", and no collective whose \"Rank\" is "
       "its own)"},
      {{R"({"traceEvents": [{"cat": "cpu_op", "name": "record_param_comms", "args": {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 1, "Out msg nelems": 1, "Group size": 1, "Process Group Ranks": [0], "Rank": 0}}]})"},
       e1 + "has no \"ts\""},
      {{R"({"traceEvents": [{"cat": "cpu_op", "name": "record_param_comms", "ts": "1", "args": {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 1, "Out msg nelems": 1, "Group size": 1, "Process Group Ranks": [0], "Rank": 0}}]})"},
       e1 + "\"ts\" is not a number"},
      {{OneEvent(ar), OneEvent(ar)}, "profiler traces 1 and 2 are both rank 0"},
      {{OneEvent(ar), OneEvent(With(ar, "dtype", "Fp8"))},
       "profiler trace 2 event 1: \"dtype\": 'Fp8' is not one of BFloat16, Half, Float, Double, Float8_e4m3fn, "
       "Float8_e5m2, Char, Byte, Int, Long, Bool"},
  };
  for (const auto& [texts, message] : cases) {
    EXPECT_EQ(Refusal(texts), message) << (texts.empty() ? "" : texts[0].substr(0, 300));
  }
}

TEST(TorchTrace, HostileTracesAreRefusedWithoutHarm) {
  const json ar = AllReduceArgs();
  const std::string e1 = "profiler trace 1 event 1: ";
  const std::string counts = "\"In msg nelems\" is not a whole number from 0 to 1099511627776";
  std::string deep_args = OneEvent(With(ar, "Input Dims", "@"));
  deep_args.replace(deep_args.find("\"@\""), 3, std::string(100000, '[') + std::string(100000, ']'));
  std::string huge_count = OneEvent(With(ar, "In msg nelems", "@"));
  huge_count.replace(huge_count.find("\"@\""), 3, "1e308");
  std::string past_float = OneEvent(With(ar, "In msg nelems", "@"));
  past_float.replace(past_float.find("\"@\""), 3, "1e400");
  std::string past_uint64 = OneEvent(With(ar, "In msg nelems", "@"));
  past_uint64.replace(past_uint64.find("\"@\""), 3, "123456789012345678901234567890");
  std::string many_ranks = "[";
  for (int i = 0; i < 200000; ++i) many_ranks += "0, ";
  many_ranks += "0]";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string(1000000, '['), "profiler trace 1: nests deeper than 64 levels"},
      {deep_args, "profiler trace 1: nests deeper than 64 levels"},
      {huge_count, e1 + counts},
      {past_float, "profiler trace 1: is not JSON (at byte 109)"},  // past a double: nlohmann refuses it
      {past_uint64, e1 + counts},
      {OneEvent(With(ar, "In msg nelems", std::numeric_limits<uint64_t>::max())), e1 + counts},
      {OneEvent(With(ar, "In msg nelems", std::numeric_limits<int64_t>::min())), e1 + counts},
      {OneEvent(With(ar, "Collective name", std::string(10000000, 'a'))),
       e1 + "\"Collective name\" is not a string of at most 256 characters"},
      {OneEvent(With(ar, "Collective name", "all\x1b[2Jreduce")),
       e1 + "\"Collective name\": 'all\\x1b[2Jreduce' is not one of allreduce, allreduce_coalesced, all_gather, "
            "_allgather_base, allgather_into_tensor_coalesced, reduce_scatter, _reduce_scatter_base, "
            "reduce_scatter_tensor_coalesced, all_to_all, all_to_allv, broadcast, reduce, send, recv (nor init, "
            "wait, barrier, which move no data)"},
      {OneEvent(With(ar, "Process Group Ranks", many_ranks)),
       e1 + "\"Process Group Ranks\" is not a list of ranks from 0 to 65535"},
      {OneEvent(With(ar, "Process Group Ranks", "[" + std::string(10000000, ' ') + "99999999999999999999]")),
       e1 + "\"Process Group Ranks\" is not a list of ranks from 0 to 65535"},
      {OneEvent(With(ar, "Group size", 1e308)), e1 + "\"Group size\" is not a whole number from 1 to 65536"},
      {R"({"traceEvents": [], "a\u001b": 1, "a\u001b": 2})",
       "profiler trace 1: key \"a\\x1b\" appears twice in one object"},
      {"{\"" + std::string(100000, 'k') + "\": 1, \"" + std::string(100000, 'k') + "\": 2}",
       "profiler trace 1: key \"" + std::string(64, 'k') + "\" appears twice in one object"},
      {OneEvent(With(ar, "Rank", -1)), e1 + "\"Rank\" is not a whole number from 0 to 1"},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_EQ(Refusal({text}), message) << text.substr(0, 300);
  }
  // "Input Dims" that do not hold the event's elements give way to [elements].
  for (const json& dims : {json::parse("[[1e308]]"), json::parse("[[-4, -2]]"), json::parse("[[3, 3]]"),
                           json::parse("[[1,1,1,1,1,1,1,1,8]]"), json::parse("[\"x\"]"), json::parse("{}"),
                           json::parse("[[4294967296, 4294967296]]")}) {
    const Expected<std::vector<RankTrace>> t =
        ReadTorchTraces(std::vector<std::string>{OneEvent(With(ar, "Input Dims", dims))});
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ((*t)[0].events[0].shape, (std::vector<int64_t>{8})) << dims.dump();
  }
}

}  // namespace
}  // namespace seam
