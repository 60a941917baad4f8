// NCCL's debug log: real lines from public issues read into the fields NCCL
// defines, the writer's lines in the form of those real lines and of NCCL's
// format strings, every version's lines read back to the events written,
// and every malformed log refused naming its file, line and what is wrong.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <regex>

#include "seam/trace.h"

namespace seam {
namespace {

Expected<std::vector<RankTrace>> Read(const std::vector<std::string>& texts) { return ReadNcclLogs(texts); }

std::vector<int> Iota(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// Init lines of the members an excerpt does not show, so that its
// communicator is whole: a made-up process a rank ("peer:<50000 + rank>"),
// each rank's comm at `comm_base` + rank, in NCCL 2.18.3's form (with
// `function` first from 2.21 on).
std::string OtherMembers(int nranks, std::vector<int> shown, std::string_view comm_id, uint64_t comm_base = 0x5000,
                         std::string_view function = "") {
  std::string out;
  for (int r = 0; r < nranks; ++r) {
    if (std::find(shown.begin(), shown.end(), r) != shown.end()) continue;
    out += fmt::format(
        "peer:{}:{} [0] NCCL INFO {}comm 0x{:x} rank {} nranks {} cudaDev 0 nvmlDev 0 busId 18000 commId {} - "
        "Init COMPLETE\n",
        50000 + r, 50001 + r, function, comm_base + static_cast<uint64_t>(r), r, nranks, comm_id);
  }
  return out;
}

TraceEvent Only(const Expected<std::vector<RankTrace>>& t, int rank) {
  EXPECT_TRUE(t.ok()) << t.error().message;
  if (!t.ok() || static_cast<int>(t->size()) <= rank || (*t)[static_cast<size_t>(rank)].events.size() != 1) {
    ADD_FAILURE() << "rank " << rank << " has not one event";
    return {};
  }
  return (*t)[static_cast<size_t>(rank)].events[0];
}

// ---------------------------------------------------------------------------
// Real COLL lines (verbatim). None of these excerpts holds its init lines:
// each test adds the least init lines in the form of the NCCL the issue ran
// (2.18.3's where it names none), and says which.

// https://github.com/NVIDIA/nccl/issues/1193 (Ray Train, 128 ranks).
const std::string kRay =
    "(RayTrainWorker pid=615, ip=10.72.7.6) r24-02-22-23-29-0066-raycluster-lv52c-worker-l4-8-fqztx:615:18953 [2] "
    "NCCL INFO AllReduce: opCount 139d sendbuff 0x78d056200000 recvbuff 0x78d056200000 count 7382228 datatype 7 op "
    "0 root 0 comm 0x78cfda045840 [nranks=128] stream 0x78d07125e5e0\n"
    "(RayTrainWorker pid=619, ip=10.72.2.6) r24-02-22-23-29-0066-raycluster-lv52c-worker-l4-8-hzhzd:619:19049 [3] "
    "NCCL INFO AllReduce: opCount 139e sendbuff 0x796eee000000 recvbuff 0x796eee000000 count 7066572 datatype 7 op "
    "0 root 0 comm 0x796f1a16eff0 [nranks=128] stream 0x796fe3e3eb70\n";
// https://github.com/pytorch/torchtitan/issues/1369 (TP=2, H100).
const std::string kTorchtitan =
    "hopper01:191370:191425 [1] NCCL INFO AllGather: opCount d sendbuff 0x7fa921200000 recvbuff 0x7fa915800000 "
    "count 2097152 datatype 7 op 0 root 0 comm 0x55fca23fc0f0 [nranks=2] stream 0x55fca193e8e0\n"
    "hopper01:191369:191420 [0] NCCL INFO ReduceScatter: opCount e sendbuff 0x7fdf57c00000 recvbuff 0x7fdf61a00000 "
    "count 2097152 datatype 7 op 0 root 0 comm 0x55e290bd32d0 [nranks=2] stream 0x55e29067e430\n"
    "hopper01:191369:191369 [0] NCCL INFO AllReduce: opCount 10 sendbuff 0x7fdf541ff800 recvbuff 0x7fdf541ff800 "
    "count 1 datatype 7 op 0 root 0 comm 0x55e290bd32d0 [nranks=2] stream 0x55e29067e430\n";
// https://github.com/NVIDIA/nccl/issues/584 (an NCCL of about 2021).
const std::string kSendRecv =
    "ubuntu:199574:201142 [1] NCCL INFO Send: opCount 12 sendbuff 0x7f505e93c000 recvbuff (nil) count 2420736 "
    "datatype 7 op 0 root 1 comm 0x7f5128002e10 [nranks=2] stream 0x55f1de727ae0\n"
    "ubuntu:199574:201142 [1] NCCL INFO Recv: opCount d60 sendbuff (nil) recvbuff 0x7f5176000000 count 2420736 "
    "datatype 7 op 0 root 1 comm 0x7f5128002e10 [nranks=2] stream 0x55f1de727ae0\n";
// https://github.com/cvg/pixloc/issues/29
const std::string kBroadcast =
    "mlcv3:30429:30429 [1] NCCL INFO Broadcast: opCount 0 sendbuff 0x7fe9a31ff000 recvbuff 0x7fe9a31ff000 count 3584 "
    "datatype 0 op 0 root 0 comm 0x7febdc001200 [nranks=2] stream 0x55f851b1a060\n";
// https://github.com/NVIDIA/nccl/issues/1238 (a 1-rank communicator).
const std::string kOneRank =
    "ip-172-31-54-74:30125:30125 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7fc9c4000000 recvbuff 0x7fc9bc000000 "
    "count 33554432 datatype 7 op 0 root 0 comm 0x5631f0816b40 [nranks=1] stream 0x5631f0021140\n";
// https://github.com/NVIDIA/nccl/issues/203 (TensorFlow, an old NCCL).
const std::string kTensorflow =
    "gpu1:13135:13922 [0] NCCL INFO AllReduce: opCount 1a sendbuff 0x10048f82700 recvbuff 0x10048f82800 count 64 "
    "datatype 7 op 0 root 0 comm 0x7f0c741162f0 [nranks=2] stream 0x7f0c74002f00\n";

// Real init lines (verbatim).
// https://github.com/NVIDIA/nccl/issues/1038 (NCCL 2.18.3).
const std::string kInit218 =
    "host-2:38610:38610 [0] NCCL INFO comm 0x1277bf60 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 65000 commId "
    "0xbd10cc2bcb56e132 - Init START\n";
// https://github.com/NVIDIA/nccl/issues/1029 (16 ranks, a launcher's prefix).
const std::string kInitShared =
    "rdma-gpu-train-worker-0: rdma-gpu-train-worker-0:19484:21054 [0] NCCL INFO comm 0x557e83314500 rank 0 nranks 16 "
    "cudaDev 0 nvmlDev 0 busId 4f000 commId 0x9ad9b5e4ab2566da - Init START\n"
    "rdma-gpu-train-worker-0: rdma-gpu-train-worker-0:19485:21058 [1] NCCL INFO comm 0x55d8ac4ad300 rank 1 nranks 16 "
    "cudaDev 1 nvmlDev 1 busId 52000 commId 0x9ad9b5e4ab2566da - Init START\n";
// https://github.com/NVIDIA/nccl/issues/1814 (64 ranks).
const std::string kInitComplete =
    "hostname-test:984:1257 [4] NCCL INFO comm 0x557fe785f7a0 rank 36 nranks 64 cudaDev 4 nvmlDev 4 busId 9b000 "
    "commId 0x5ae77eb5ea4ec1ee - Init COMPLETE\n";
// https://github.com/NVIDIA/nccl/issues/1646 (B200, ncclCommInitRankConfig).
const std::string kInitConfig =
    "d5618706-01:1106799:1106856 [0] NCCL INFO ncclCommInitRankConfig comm 0x5629b5ee7340 rank 0 nranks 8 cudaDev 0 "
    "nvmlDev 0 busId 18000 commId 0x2fb902677fd5202e - Init COMPLETE\n"
    "d5618706-01:1106799:1106856 [0] NCCL INFO Init timings - ncclCommInitRankConfig: rank 0 nranks 8 total 55.17 "
    "(kernels 52.33, alloc 0.42, bootstrap 0.84, allgathers 0.08, topo 1.10, graphs 0.01, connections 0.39, rest "
    "0.00)\n";
// https://github.com/NVIDIA/nccl/issues/1605 (PyTorch's ncclCommSplit, 2.21/2.22).
const std::string kInitSplit =
    "myhost:2261199:2261301 [0] NCCL INFO bootstrapSplit: comm 0x595122703ca0 parent 0x5951213c0f90 rank 0 nranks 2 "
    "color 1684518034 key 0 prev 2 next 2 - DONE\n"
    "myhost:2261199:2261301 [0] NCCL INFO ncclCommSplit comm 0x595122703ca0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId "
    "1a000 parent 0x5951213c0f90 color 1684518034 key 0 commId 0x5a16c3838ce6f1f8 - Init START\n"
    "myhost:2261199:2261301 [0] NCCL INFO comm 0x595122703ca0 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL "
    "0\n"
    "myhost:2261199:2261301 [0] NCCL INFO Channel 00/04 :    0   1\n";
// https://github.com/vllm-project/vllm/issues/5405 (torch's and pynccl's comm in one process).
const std::string kInitTwoComms =
    "mwh-deployment-cp2nvtm93l1ljsuft5kg-0:291:4483 [0] NCCL INFO comm 0x560e1ab19ab0 rank 0 nranks 4 cudaDev 0 "
    "nvmlDev 0 busId 27000 commId 0xfdb9a1387c96bf27 - Init COMPLETE\n"
    "mwh-deployment-cp2nvtm93l1ljsuft5kg-0:291:5595 [0] NCCL INFO comm 0x560e24f599a0 rank 0 nranks 4 cudaDev 0 "
    "nvmlDev 0 busId 27000 commId 0xebcd10afa0bbcee4 - Init START\n";
// https://github.com/NVIDIA/nccl/issues/629 (before 2.18: no nvmlDev, no commId).
const std::string kInitOld =
    "A03-R28-I49-3-9000018:193027:193119 [7] NCCL INFO comm 0x7fdf08000d00 rank 15 nranks 16 cudaDev 7 busId e7000 - "
    "Init COMPLETE\n";
// https://github.com/NVIDIA/nccl/issues/534 (2.22.3's timing line).
const std::string kTimings =
    "myhostname:128794:128851 [0] NCCL INFO Init timings: rank 5 nranks 8 total 2.46 (kernels 0.18, bootstrap 1.60, "
    "allgathers 0.00, topo 0.52, graphs 0.01, connections 0.12, rest 0.02)\n";

TEST(NcclLog, RealAllReducesOf128RanksUnderRaysPrefixReadAsTheWholeBuffer) {
  // Made up (2.18.3's form; the issue names no version): the two workers'
  // init lines, as ranks 2 and 3 of their 128 (their cudaDev).
  const std::string init =
      "(RayTrainWorker pid=615, ip=10.72.7.6) r24-02-22-23-29-0066-raycluster-lv52c-worker-l4-8-fqztx:615:615 [2] "
      "NCCL INFO comm 0x78cfda045840 rank 2 nranks 128 cudaDev 2 nvmlDev 2 busId 3a000 commId 0x1193 - Init "
      "COMPLETE\n"
      "(RayTrainWorker pid=619, ip=10.72.2.6) r24-02-22-23-29-0066-raycluster-lv52c-worker-l4-8-hzhzd:619:619 [3] "
      "NCCL INFO comm 0x796f1a16eff0 rank 3 nranks 128 cudaDev 3 nvmlDev 3 busId 5d000 commId 0x1193 - Init "
      "COMPLETE\n";
  const Expected<std::vector<RankTrace>> t = Read({init + kRay + OtherMembers(128, {2, 3}, "0x1193")});
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 128U);
  const TraceEvent two = Only(t, 2);
  EXPECT_EQ(two.op, TraceOp::kAllReduce);
  EXPECT_EQ(two.group, Iota(128));
  EXPECT_EQ(two.elements, 7382228);
  EXPECT_EQ(two.shape, (std::vector<int64_t>{7382228}));
  EXPECT_EQ(two.dtype, "float32");
  EXPECT_EQ(two.reduce, "sum");
  EXPECT_EQ(two.peer, -1);
  EXPECT_EQ(two.line, 3);
  EXPECT_EQ(Only(t, 3).elements, 7066572);
  EXPECT_EQ(Only(t, 3).line, 4);
  EXPECT_TRUE((*t)[0].events.empty());
}

TEST(NcclLog, RealTensorParallelCallsCountAnAllGathersPartAndAReduceScattersWholeInput) {
  // Made up (2.21's form, as torchtitan's PyTorch ships): each process's
  // comm as rank 0 or 1 (its cudaDev) of the two.
  const std::string init =
      "hopper01:191369:191420 [0] NCCL INFO ncclCommInitRank comm 0x55e290bd32d0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 "
      "busId 18000 commId 0x1369 - Init COMPLETE\n"
      "hopper01:191370:191425 [1] NCCL INFO ncclCommInitRank comm 0x55fca23fc0f0 rank 1 nranks 2 cudaDev 1 nvmlDev 1 "
      "busId 2a000 commId 0x1369 - Init COMPLETE\n";
  const Expected<std::vector<RankTrace>> t = Read({init + kTorchtitan});
  ASSERT_TRUE(t.ok()) << t.error().message;
  // AllGather's count is what each rank sends: the trace counts the same.
  const TraceEvent gather = Only(t, 1);
  EXPECT_EQ(gather.op, TraceOp::kAllGather);
  EXPECT_EQ(gather.elements, 2097152);
  EXPECT_EQ(gather.reduce, "");
  EXPECT_EQ(gather.group, (std::vector<int>{0, 1}));
  // ReduceScatter's count is each rank's output: the trace counts the input.
  const std::vector<TraceEvent>& zero = (*t)[0].events;
  ASSERT_EQ(zero.size(), 2U);
  EXPECT_EQ(zero[0].op, TraceOp::kReduceScatter);
  EXPECT_EQ(zero[0].elements, 2 * 2097152);
  EXPECT_EQ(zero[0].shape, (std::vector<int64_t>{2 * 2097152}));
  EXPECT_EQ(zero[0].reduce, "sum");
  EXPECT_EQ(zero[1].op, TraceOp::kAllReduce);
  EXPECT_EQ(zero[1].elements, 1);
  EXPECT_EQ(zero[1].line, 5);
}

TEST(NcclLog, RealSendAndRecvToOnePeerStaySendAndRecvWithThePeersGlobalRank) {
  // Made up (2.18.3's form; the issue's NCCL prints no commId): the
  // process as rank 0 of its 2 (its root, the peer, is 1), and the peer.
  const std::string init =
      "ubuntu:199574:201142 [1] NCCL INFO comm 0x7f5128002e10 rank 0 nranks 2 cudaDev 1 nvmlDev 1 busId 2a000 commId "
      "0x584 - Init COMPLETE\n";
  const Expected<std::vector<RankTrace>> t = Read({init + kSendRecv + OtherMembers(2, {0}, "0x584")});
  ASSERT_TRUE(t.ok()) << t.error().message;
  const std::vector<TraceEvent>& zero = (*t)[0].events;
  ASSERT_EQ(zero.size(), 2U);
  EXPECT_EQ(zero[0].op, TraceOp::kSend);
  EXPECT_EQ(zero[0].peer, 1);
  EXPECT_EQ(zero[0].elements, 2420736);
  EXPECT_EQ(zero[0].reduce, "");
  EXPECT_EQ(zero[1].op, TraceOp::kRecv);
  EXPECT_EQ(zero[1].peer, 1);
  EXPECT_EQ(zero[1].group, (std::vector<int>{0, 1}));
}

TEST(NcclLog, RealBroadcastNamesItsRootAsAGlobalRank) {
  // Made up (2.18.3's form): the process as rank 1 of 2, and rank 0.
  const std::string init =
      "mlcv3:30429:30429 [1] NCCL INFO comm 0x7febdc001200 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2a000 commId "
      "0x29 - Init COMPLETE\n";
  const TraceEvent e = Only(Read({init + kBroadcast + OtherMembers(2, {1}, "0x29")}), 1);
  EXPECT_EQ(e.op, TraceOp::kBroadcast);
  EXPECT_EQ(e.peer, 0);
  EXPECT_EQ(e.elements, 3584);
  EXPECT_EQ(e.dtype, "int8");
  EXPECT_EQ(e.reduce, "");
}

TEST(NcclLog, RealCallsOnAOneRankCommunicatorAreStillEvents) {
  // Made up (2.18.3's form): the only process's init line.
  const std::string init =
      "ip-172-31-54-74:30125:30125 [0] NCCL INFO comm 0x5631f0816b40 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 18000 "
      "commId 0x1238 - Init COMPLETE\n";
  const TraceEvent e = Only(Read({init + kOneRank}), 0);
  EXPECT_EQ(e.op, TraceOp::kAllReduce);
  EXPECT_EQ(e.group, (std::vector<int>{0}));
  EXPECT_EQ(e.elements, 33554432);
}

TEST(NcclLog, RealLineOfAnOldNcclReadsTheSame) {
  // Made up (2.18.3's form): TensorFlow ran both ranks in one process,
  // which seam does not read, so a second process holds rank 1.
  const std::string init =
      "gpu1:13135:13922 [0] NCCL INFO comm 0x7f0c741162f0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId "
      "0x203 - Init COMPLETE\n";
  const TraceEvent e = Only(Read({init + kTensorflow + OtherMembers(2, {0}, "0x203")}), 0);
  EXPECT_EQ(e.elements, 64);
  EXPECT_EQ(e.dtype, "float32");
}

// A COLL line made up for a real init line's comm (the init excerpts hold none).
std::string AllReduceOn(std::string_view process, std::string_view comm, int nranks) {
  return fmt::format(
      "{} [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f0000000000 recvbuff 0x7f0000000000 count 8 datatype 9 op 0 "
      "root 0 comm {} [nranks={}] stream 0x5555d00005e0\n",
      process, comm, nranks);
}

TEST(NcclLog, RealInitLinesOfEachNcclGiveEachProcessItsRank) {
  {  // 2.18.3's START of a 1-rank communicator.
    const TraceEvent e = Only(Read({kInit218 + AllReduceOn("host-2:38610:38610", "0x1277bf60", 1)}), 0);
    EXPECT_EQ(e.group, (std::vector<int>{0}));
    EXPECT_EQ(e.dtype, "bfloat16");
  }
  {  // Two processes' START lines sharing a commId, behind a launcher's prefix.
    const Expected<std::vector<RankTrace>> t =
        Read({kInitShared + OtherMembers(16, {0, 1}, "0x9ad9b5e4ab2566da") +
              AllReduceOn("rdma-gpu-train-worker-0: rdma-gpu-train-worker-0:19485:19485", "0x55d8ac4ad300", 16)});
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(Only(t, 1).group, Iota(16));
    EXPECT_TRUE((*t)[0].events.empty());
  }
  {  // Rank 36 of 64.
    const Expected<std::vector<RankTrace>> t = Read({kInitComplete + OtherMembers(64, {36}, "0x5ae77eb5ea4ec1ee") +
                                                     AllReduceOn("hostname-test:984:984", "0x557fe785f7a0", 64)});
    EXPECT_EQ(Only(t, 36).line, 65);
  }
  {  // ncclCommInitRankConfig, and its timing line passed over.
    const Expected<std::vector<RankTrace>> t =
        Read({kInitConfig + OtherMembers(8, {0}, "0x2fb902677fd5202e", 0x5000, "ncclCommInitRankConfig ") +
              AllReduceOn("d5618706-01:1106799:1106799", "0x5629b5ee7340", 8)});
    EXPECT_EQ(Only(t, 0).group, Iota(8));
  }
  {  // Two comms in one process, torch's and pynccl's: a call on either.
    const std::string both =
        kInitTwoComms + OtherMembers(4, {0}, "0xfdb9a1387c96bf27") + OtherMembers(4, {0}, "0xebcd10afa0bbcee4", 0x6000);
    const Expected<std::vector<RankTrace>> t =
        Read({both + AllReduceOn("mwh-deployment-cp2nvtm93l1ljsuft5kg-0:291:291", "0x560e24f599a0", 4)});
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->size(), 4U);
    EXPECT_EQ(Only(t, 0).group, Iota(4));
  }
  {  // 2.22.3's timing line is passed over.
    const Expected<std::vector<RankTrace>> t =
        Read({kTimings + kInit218 + AllReduceOn("host-2:38610:38610", "0x1277bf60", 1)});
    EXPECT_EQ(Only(t, 0).line, 3);
  }
}

TEST(NcclLog, RealSplitLineJoinsItsMembersByCommIdInRankOrder) {
  // Made up: the parent (the world of 4, 2.21's form) before the excerpt,
  // and the split's other member, the parent's rank 2 (the excerpt's
  // bootstrapSplit has it as prev and next), on another host.
  const std::string parent =
      "myhost:2261199:2261301 [0] NCCL INFO ncclCommInitRank comm 0x5951213c0f90 rank 0 nranks 4 cudaDev 0 nvmlDev 0 "
      "busId 1a000 commId 0x1605 - Init COMPLETE\n";
  const std::string others =
      OtherMembers(4, {0}, "0x1605", 0x5000, "ncclCommInitRank ") +
      "peer:50002:50003 [0] NCCL INFO ncclCommSplit comm 0x7000 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 "
      "parent 0x5002 color 1684518034 key 1 commId 0x5a16c3838ce6f1f8 - Init START\n";
  const Expected<std::vector<RankTrace>> t =
      Read({parent + kInitSplit + others + AllReduceOn("myhost:2261199:2261199", "0x595122703ca0", 2)});
  const TraceEvent e = Only(t, 0);
  EXPECT_EQ(e.group, (std::vector<int>{0, 2}));
  EXPECT_EQ(e.line, 10);
}

TEST(NcclLog, InitLineOfNcclBefore218IsRefusedSayingWhichLinesAreNeeded) {
  const Expected<std::vector<RankTrace>> t = Read({kInitOld});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(t.error().message,
            "NCCL log 1 line 1: an init line without commId, as NCCL before 2.18 prints it: seam joins a "
            "communicator's processes by the commId of NCCL 2.18 and later ('comm 0x... rank 0 nranks 8 ... commId "
            "0x... - Init START')");
}

// ---------------------------------------------------------------------------
// Forms no real excerpt here shows, made from NCCL's format strings.

TEST(NcclLog, SplitsWithoutCommIdJoinByParentSplitCountAndColor) {
  // 2.25: "parent %p splitCount %d color %d key %d- Init START" and
  // "... key %d - Init COMPLETE"; 2.27 prints childCount for splitCount.
  // Two splits of the world with the same color differ by splitCount.
  std::string log;
  for (int r = 0; r < 4; ++r) {
    log += fmt::format(
        "n:{}:9 [{}] NCCL INFO ncclCommInitRankConfig comm 0x{}00 rank {} nranks 4 cudaDev {} nvmlDev {} busId 18000 "
        "commId 0x77 - Init COMPLETE\n",
        r, r, r + 1, r, r, r);
  }
  const auto split = [](int r, int count, std::string_view word, int rank, int nranks, std::string_view end) {
    return fmt::format(
        "n:{}:9 [{}] NCCL INFO ncclCommSplit comm 0x{}{}0 rank {} nranks {} cudaDev {} nvmlDev {} busId 18000 parent "
        "0x{}00 {} {} color 5 key {}{}\n",
        r, r, r + 1, count, rank, nranks, r, r, r + 1, word, count, rank, end);
  };
  // First split: ranks 3 and 1 (key order 3, 1); second: 0, 2.
  log += split(3, 1, "splitCount", 0, 2, "- Init START") + split(1, 1, "splitCount", 1, 2, " - Init COMPLETE");
  log += split(0, 2, "childCount", 0, 2, "- Init START") + split(2, 2, "childCount", 1, 2, " - Init COMPLETE");
  log += split(3, 1, "splitCount", 0, 2, " - Init COMPLETE");
  log += AllReduceOn("n:1:1", "0x210", 2) + AllReduceOn("n:0:1", "0x120", 2);
  const Expected<std::vector<RankTrace>> t = Read({log});
  EXPECT_EQ(Only(t, 1).group, (std::vector<int>{3, 1}));
  EXPECT_EQ(Only(t, 0).group, (std::vector<int>{0, 2}));
}

TEST(NcclLog, InitLinesOf2181WithoutNvmlDevAreRead) {
  // 2.18.1 prints COMPLETE alone: "comm %p rank %d nranks %d cudaDev %d
  // busId %lx commId 0x%llx - Init COMPLETE".
  const std::string log =
      "h:1:1 [0] NCCL INFO comm 0x10 rank 1 nranks 2 cudaDev 0 busId 18000 commId 0xab - Init COMPLETE\n"
      "h:2:2 [0] NCCL INFO comm 0x20 rank 0 nranks 2 cudaDev 0 busId 18000 commId 0xab - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO AllGather: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 count 8 datatype 9 op 0 root 0 comm "
      "0x10 [nranks=2] stream 0x99\n";
  EXPECT_EQ(Only(Read({log}), 1).group, (std::vector<int>{0, 1}));
}

TEST(NcclLog, ACommPointerMadeAgainNamesTheNewCommunicator) {
  // A communicator destroyed and another made at the same address: the
  // calls after its init line are the new one's.
  const std::string log =
      "h:1:1 [0] NCCL INFO comm 0x10 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1 - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 count 8 datatype 9 op 0 root 0 comm "
      "0x10 [nranks=1] stream 0x99\n"
      "h:1:1 [0] NCCL INFO comm 0x10 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 18000 commId 0x2 - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 count 9 datatype 9 op 0 root 0 comm "
      "0x10 [nranks=1] stream 0x99\n";
  const Expected<std::vector<RankTrace>> t = Read({log});
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ((*t)[0].events.size(), 2U);
  EXPECT_EQ((*t)[0].events[1].elements, 9);
}

TEST(NcclLog, RcclsGlobalRankSuffixIsRead) {
  const std::string log =
      "h:1:1 [0] NCCL INFO comm 0x10 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1 - Init START\n"
      "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 count 8 datatype 6 op 2 root 0 comm "
      "0x10 [nranks=1] stream 0x99 task 0 globalrank 0\n";
  const TraceEvent e = Only(Read({log}), 0);
  EXPECT_EQ(e.dtype, "float16");
  EXPECT_EQ(e.reduce, "max");
}

std::string TwoRanks() {
  return "h:1:1 [0] NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0xabc - Init "
         "COMPLETE\n"
         "h:2:2 [1] NCCL INFO comm 0x20 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2a000 commId 0xabc - Init "
         "COMPLETE\n";
}
std::string Call(std::string_view process, std::string_view function, std::string_view opcount, int64_t count,
                 int datatype, int op, int root, std::string_view comm = "0x10") {
  return fmt::format(
      "{} [0] NCCL INFO {}: opCount {} sendbuff 0x7f00 recvbuff 0x7f00 count {} datatype {} op {} root {} comm {} "
      "[nranks=2] stream 0x99\n",
      process, function, opcount, count, datatype, op, root, comm);
}

TEST(NcclLog, CallsAreInLineOrderNotOpCountOrder) {
  const Expected<std::vector<RankTrace>> t =
      Read({TwoRanks() + Call("h:1:1", "AllReduce", "5", 1, 7, 0, 0) + Call("h:1:1", "Broadcast", "2", 2, 7, 0, 1)});
  ASSERT_TRUE(t.ok()) << t.error().message;
  const std::vector<TraceEvent>& e = (*t)[0].events;
  ASSERT_EQ(e.size(), 2U);
  EXPECT_EQ(e[0].op, TraceOp::kAllReduce);
  EXPECT_EQ(e[1].op, TraceOp::kBroadcast);
  EXPECT_EQ(e[1].peer, 1);
}

TEST(NcclLog, EachDatatypeAndReductionReadsAsTorchNamesIt) {
  const std::vector<std::pair<int, std::string>> dtypes = {
      {0, "int8"},    {1, "uint8"},   {2, "int32"},    {4, "int64"},          {6, "float16"},
      {7, "float32"}, {8, "float64"}, {9, "bfloat16"}, {10, "float8_e4m3fn"}, {11, "float8_e5m2"}};
  for (const auto& [number, name] : dtypes) {
    EXPECT_EQ(Only(Read({TwoRanks() + Call("h:2:2", "AllGather", "0", 3, number, 0, 0, "0x20")}), 1).dtype, name);
  }
  // 5 on is a PreMulSum op (PyTorch's ReduceOp.PREMUL_SUM, FSDP's average).
  const std::vector<std::pair<int, std::string>> ops = {{0, "sum"}, {1, "prod"}, {2, "max"},   {3, "min"},
                                                        {4, "avg"}, {5, "avg"},  {1000, "avg"}};
  for (const auto& [number, name] : ops) {
    EXPECT_EQ(Only(Read({TwoRanks() + Call("h:1:1", "Reduce", "0", 3, 7, number, 1)}), 0).reduce, name);
  }
}

TEST(NcclLog, AllToAllCountsEverythingTheRankSends) {
  // NCCL's own AlltoAll (newer NCCL, RCCL's AllToAll): count is per peer.
  EXPECT_EQ(Only(Read({TwoRanks() + Call("h:1:1", "AlltoAll", "0", 10, 7, 0, 0)}), 0).elements, 20);
  EXPECT_EQ(Only(Read({TwoRanks() + Call("h:1:1", "AllToAll", "0", 10, 7, 0, 0)}), 0).op, TraceOp::kAllToAll);
  // PyTorch's all_to_all_single on NCCL: a send to and a receive from each
  // member, itself included; its all_to_allv sends each peer its own count.
  std::string calls;
  for (int peer : {1, 0}) {
    calls += Call("h:1:1", "Send", "0", 3 + peer, 9, 0, peer) + Call("h:1:1", "Recv", "0", 5, 9, 0, peer);
  }
  const TraceEvent e = Only(Read({TwoRanks() + calls}), 0);
  EXPECT_EQ(e.op, TraceOp::kAllToAll);
  EXPECT_EQ(e.elements, 3 + 4);
  EXPECT_EQ(e.peer, -1);
  EXPECT_EQ(e.group, (std::vector<int>{0, 1}));
  EXPECT_EQ(e.line, 3);
  // A pipeline's send and receive with a peer stay two.
  const Expected<std::vector<RankTrace>> p =
      Read({TwoRanks() + Call("h:1:1", "Send", "0", 3, 9, 0, 1) + Call("h:1:1", "Recv", "0", 3, 9, 0, 1)});
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ((*p)[0].events.size(), 2U);
  EXPECT_EQ((*p)[0].events[0].op, TraceOp::kSend);
}

// ---------------------------------------------------------------------------
// The writer.

// Each member of `group` records the call.
class Members {
 public:
  explicit Members(int world) : ranks_(static_cast<size_t>(world)) {
    for (int r = 0; r < world; ++r) ranks_[static_cast<size_t>(r)].rank = r;
  }
  void Collective(TraceOp op, const std::vector<int>& group, int64_t elements, const std::string& dtype,
                  const std::string& reduce = "", int root = -1) {
    for (int r : group) {
      ranks_[static_cast<size_t>(r)].events.push_back(TraceEvent{.op = op,
                                                                 .group = group,
                                                                 .shape = {elements},
                                                                 .elements = elements,
                                                                 .dtype = dtype,
                                                                 .reduce = reduce,
                                                                 .peer = root});
    }
  }
  void SendRecv(int from, int to, const std::vector<int>& group, int64_t elements, const std::string& dtype) {
    ranks_[static_cast<size_t>(from)].events.push_back(
        {.op = TraceOp::kSend, .group = group, .shape = {elements}, .elements = elements, .dtype = dtype, .peer = to});
    ranks_[static_cast<size_t>(to)].events.push_back({.op = TraceOp::kRecv,
                                                      .group = group,
                                                      .shape = {elements},
                                                      .elements = elements,
                                                      .dtype = dtype,
                                                      .peer = from});
  }
  std::vector<RankTrace>& ranks() { return ranks_; }

 private:
  std::vector<RankTrace> ranks_;
};

// Six ranks: every op, groups of 1 to 6 members, groups whose order is not
// sorted, the world in and out of its own order, a pipeline's sends next
// to an all-to-all on the same pair.
std::vector<RankTrace> EveryOp() {
  Members run(6);
  run.Collective(TraceOp::kAllReduce, Iota(6), 1024, "bfloat16", "sum");
  run.Collective(TraceOp::kAllReduce, {0, 1, 2}, 64, "float32", "avg");
  run.Collective(TraceOp::kAllGather, {3, 4, 5}, 300, "float16");
  run.Collective(TraceOp::kReduceScatter, {0, 1, 2}, 21, "bfloat16", "max");
  run.Collective(TraceOp::kAllToAll, {5, 2, 0, 3}, 36, "float8_e4m3fn");
  run.Collective(TraceOp::kBroadcast, {4, 1}, 5, "uint8", "", 1);
  run.Collective(TraceOp::kReduce, Iota(6), 17, "float64", "min", 3);
  run.Collective(TraceOp::kReduce, {2, 5}, 4, "int32", "prod", 5);
  run.SendRecv(2, 5, {2, 5}, 9, "bfloat16");
  run.SendRecv(0, 3, {0, 3}, 11, "bfloat16");
  run.SendRecv(3, 0, {0, 3}, 11, "bfloat16");
  run.Collective(TraceOp::kAllReduce, {3}, 0, "int8", "sum");
  run.Collective(TraceOp::kAllToAll, Iota(6), 12, "float8_e5m2");
  run.Collective(TraceOp::kAllGather, {1, 0, 2, 3, 4, 5}, 7, "int64");
  run.SendRecv(1, 4, {1, 4}, 2, "float32");
  run.Collective(TraceOp::kAllToAll, {1, 4}, 8, "int64");
  run.SendRecv(4, 1, {1, 4}, 2, "float32");
  run.Collective(TraceOp::kAllToAll, {3}, 5, "float32");
  // A shape and a tag NCCL does not print.
  run.ranks()[0].events[0].shape = {32, 32};
  run.ranks()[0].events[0].tag = "layer 0 exit";
  return run.ranks();
}

// What NCCL's log keeps of a trace: the shape as [elements], no tag, and
// what an all-to-all sends each member (a send each).
std::vector<RankTrace> AsNcclKeepsIt(std::vector<RankTrace> ranks) {
  for (RankTrace& r : ranks) {
    for (TraceEvent& e : r.events) {
      e.shape = {e.elements};
      e.tag.clear();
      if (e.op == TraceOp::kAllToAll && e.splits.empty()) {
        e.splits.assign(e.group.size(), e.elements / static_cast<int64_t>(e.group.size()));
      }
    }
  }
  return ranks;
}

void ExpectSameTraces(const std::vector<RankTrace>& got, const std::vector<RankTrace>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t r = 0; r < got.size(); ++r) {
    EXPECT_EQ(got[r].rank, want[r].rank);
    ASSERT_EQ(got[r].events.size(), want[r].events.size()) << "rank " << r;
    for (size_t i = 0; i < got[r].events.size(); ++i) {
      EXPECT_EQ(got[r].events[i], want[r].events[i]) << "rank " << r << " event " << i;
    }
  }
}

constexpr std::array kVersions = {NcclVersion::k2_18, NcclVersion::k2_21, NcclVersion::k2_25};

TEST(NcclLog, EveryVersionsWrittenLinesReadBackToTheSameEvents) {
  const std::vector<RankTrace> ranks = EveryOp();
  for (NcclVersion v : kVersions) {
    const std::vector<std::string> texts = WriteNcclLogs(ranks, v);
    ASSERT_EQ(texts.size(), 6U);
    const Expected<std::vector<RankTrace>> back = Read(texts);
    ASSERT_TRUE(back.ok()) << back.error().message;
    std::vector<RankTrace> got = *back;
    for (size_t r = 0; r < got.size(); ++r) {
      std::vector<std::string> lines;
      for (size_t at = 0; at < texts[r].size();) {
        const size_t end = texts[r].find('\n', at);
        lines.push_back(texts[r].substr(at, end - at));
        at = end + 1;
      }
      for (TraceEvent& e : got[r].events) {
        // The line an event names is its call's (an all-to-all's first send).
        ASSERT_GE(e.line, 1);
        const std::string& line = lines[static_cast<size_t>(e.line - 1)];
        EXPECT_NE(line.find(e.op == TraceOp::kAllToAll ? "Send:" : ": opCount"), std::string::npos) << line;
        e.line = 0;
      }
    }
    SCOPED_TRACE(static_cast<int>(v));
    ExpectSameTraces(got, AsNcclKeepsIt(ranks));
  }
}

TEST(NcclLog, LogsSplitAcrossFilesInterleavedAndPrefixedReadTheSame) {
  const std::vector<RankTrace> ranks = EveryOp();
  const std::vector<std::string> texts = WriteNcclLogs(ranks, NcclVersion::k2_25);
  const std::vector<std::string> prefixes = {
      "[rank0]:", "(RayTrainWorker pid=1001, ip=10.0.0.2) ", "[2025-01-01 12:00:00] ", "\x1b[36m", "node0: ", ""};
  // Ranks 0 and 1 interleaved in one file, rank 2 over two files, the
  // rest one a file, each line behind its launcher's prefix.
  std::vector<std::vector<std::string>> lines(6);
  for (size_t r = 0; r < 6; ++r) {
    for (size_t at = 0; at < texts[r].size();) {
      const size_t end = texts[r].find('\n', at);
      lines[r].push_back(prefixes[r] + texts[r].substr(at, end - at + 1));
      at = end + 1;
    }
  }
  std::vector<std::string> files(6);
  for (size_t i = 0; i < std::max(lines[0].size(), lines[1].size()); ++i) {
    if (i < lines[0].size()) files[0] += lines[0][i];
    if (i < lines[1].size()) files[0] += "some other output\n" + lines[1][i];
  }
  for (size_t i = 0; i < lines[2].size(); ++i) files[i < 5 ? 1 : 2] += lines[2][i];
  for (size_t r = 3; r < 6; ++r) {
    for (const std::string& l : lines[r]) files[r] += l;
  }
  const Expected<std::vector<RankTrace>> back = Read(files);
  ASSERT_TRUE(back.ok()) << back.error().message;
  std::vector<RankTrace> got = *back;
  for (RankTrace& r : got) {
    for (TraceEvent& e : r.events) e.line = 0;
  }
  ExpectSameTraces(got, AsNcclKeepsIt(ranks));
}

TEST(NcclLog, WritingWhatNcclCannotCountIsABug) {
  Members run(2);
  run.Collective(TraceOp::kAllToAll, {0, 1}, 3, "float32");
  EXPECT_THROW(WriteNcclLogs(run.ranks(), NcclVersion::k2_25), InternalError);
  Members dtype(1);
  dtype.Collective(TraceOp::kAllGather, {0}, 3, "complex64");
  EXPECT_THROW(WriteNcclLogs(dtype.ranks(), NcclVersion::k2_25), InternalError);
  std::vector<RankTrace> gap(1);
  gap[0].rank = 1;
  EXPECT_THROW(WriteNcclLogs(gap, NcclVersion::k2_25), InternalError);
}

// The regular expression of text with each character taken as itself.
std::string Escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// A real line's message as a regular expression: its words kept, each
// value any value of its kind (a pointer, a number; opCount in hex).
std::string PatternOfReal(const std::string& message) {
  static const std::regex value(
      R"(opCount [0-9a-f]+|0x[0-9a-f]+|\(nil\)|\[nranks=[0-9]+\]|\b[0-9a-f]*[0-9][0-9a-f]*(\.[0-9]+)?\b)");
  std::string out;
  size_t at = 0;
  for (auto m = std::sregex_iterator(message.begin(), message.end(), value); m != std::sregex_iterator(); ++m) {
    out += Escaped(std::string_view(message).substr(at, static_cast<size_t>(m->position()) - at));
    const std::string v = m->str();
    if (v.starts_with("opCount"))
      out += "opCount [0-9a-f]+";
    else if (v.starts_with("0x") || v == "(nil)")
      out += R"((0x[0-9a-f]+|\(nil\)))";
    else if (v.starts_with("[nranks="))
      out += R"(\[nranks=[0-9]+\])";
    else if (v.find('.') != std::string::npos)
      out += R"([0-9]+\.[0-9]+)";
    else
      out += "[0-9a-f]+";
    at = static_cast<size_t>(m->position() + m->length());
  }
  return out + Escaped(std::string_view(message).substr(at));
}

// A format string of NCCL's as a regular expression.
std::string PatternOfFormat(std::string_view format) {
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    const std::string_view rest = format.substr(i);
    const auto take = [&](std::string_view spec, std::string_view pattern) {
      if (!rest.starts_with(spec)) return false;
      out += pattern;
      i += spec.size() - 1;
      return true;
    };
    if (take("0x%llx", "0x[0-9a-f]+") || take("%p", R"((0x[0-9a-f]+|\(nil\)))") || take("%lx", "[0-9a-f]+") ||
        take("%zu", "[0-9]+") || take("%d", "-?[0-9]+") || take("%s", "[A-Za-z]+") ||
        take("%.2f", R"([0-9]+\.[0-9]{2})")) {
      continue;
    }
    out += Escaped(format.substr(i, 1));
  }
  return out;
}

// The message of each line of `texts` that starts with `start` (after the
// prefix, which must be NCCL's).
std::vector<std::string> MessagesStarting(const std::vector<std::string>& texts, std::string_view start) {
  static const std::regex prefix(R"(^[A-Za-z0-9-]+:[0-9]+:[0-9]+ \[[0-9]+\] NCCL INFO )");
  std::vector<std::string> out;
  for (const std::string& text : texts) {
    for (size_t at = 0; at < text.size();) {
      const size_t end = text.find('\n', at);
      const std::string line = text.substr(at, end - at);
      at = end + 1;
      std::smatch m;
      EXPECT_TRUE(std::regex_search(line, m, prefix)) << line;
      const std::string message = m.suffix();
      if (message.starts_with(start)) out.push_back(message);
    }
  }
  return out;
}

std::string MessageOf(std::string line) {
  if (line.ends_with('\n')) line.pop_back();
  return line.substr(line.find(" NCCL INFO ") + 11);
}

// A pattern of an init line's START or COMPLETE as either.
std::string EitherPhase(const std::string& pattern) {
  return std::regex_replace(pattern, std::regex("Init (START|COMPLETE)"), "Init (START|COMPLETE)");
}

void ExpectAllMatch(const std::vector<std::string>& messages, const std::string& pattern, std::string_view what) {
  EXPECT_FALSE(messages.empty()) << what;
  const std::regex re(pattern);
  for (const std::string& m : messages) EXPECT_TRUE(std::regex_match(m, re)) << what << "\n" << m << "\n" << pattern;
}

std::string FirstLine(const std::string& text, size_t n = 0) {
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) at = text.find('\n', at) + 1;
  return text.substr(at, text.find('\n', at) - at + 1);
}

TEST(NcclLog, WrittenCollLinesHaveTheFormOfRealOnesAndOfNcclsFormatString) {
  const std::vector<std::pair<std::string, std::string>> real = {{"AllReduce:", FirstLine(kRay)},
                                                                 {"AllGather:", FirstLine(kTorchtitan)},
                                                                 {"ReduceScatter:", FirstLine(kTorchtitan, 1)},
                                                                 {"Broadcast:", kBroadcast},
                                                                 {"Send:", FirstLine(kSendRecv)},
                                                                 {"Recv:", FirstLine(kSendRecv, 1)}};
  const std::string coll = PatternOfFormat(
      "%s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p [nranks=%d] stream %p");
  for (NcclVersion v : kVersions) {
    const std::vector<std::string> texts = WriteNcclLogs(EveryOp(), v);
    for (const auto& [start, line] : real)
      ExpectAllMatch(MessagesStarting(texts, start), PatternOfReal(MessageOf(line)), start);
    ExpectAllMatch(MessagesStarting(texts, "Reduce:"), coll, "Reduce");
    ExpectAllMatch(MessagesStarting(texts, "All"), coll, "All");
  }
}

TEST(NcclLog, WrittenInitLinesHaveTheFormOfRealOnesAndOfNcclsFormatStrings) {
  const std::string init = "comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx";
  const auto written = [](NcclVersion v) { return WriteNcclLogs(EveryOp(), v); };
  {  // 2.18 to 2.20: every communicator's START and COMPLETE as any init's
     // (2.18.3's START, a COMPLETE), and the ranks line (#1605's).
    const std::vector<std::string> t = written(NcclVersion::k2_18);
    ExpectAllMatch(MessagesStarting(t, "comm 0x"),
                   PatternOfReal(MessageOf(kInit218)) + "|" + PatternOfReal(MessageOf(kInitComplete)) + "|" +
                       PatternOfReal(MessageOf(FirstLine(kInitSplit, 2))),
                   "2.18 init");
  }
  {  // 2.21: ncclCommInitRank's world (its format string), ncclCommSplit's
     // groups (#1605's START; its COMPLETE differs in that word alone).
    const std::vector<std::string> t = written(NcclVersion::k2_21);
    ExpectAllMatch(MessagesStarting(t, "ncclCommInitRank "),
                   PatternOfFormat("ncclCommInitRank " + init + " commId 0x%llx - Init %s"), "2.21 world");
    ExpectAllMatch(MessagesStarting(t, "ncclCommSplit"),
                   EitherPhase(PatternOfReal(MessageOf(FirstLine(kInitSplit, 1)))), "2.21 split");
  }
  {  // 2.25: ncclCommInitRankConfig's world (#1646's COMPLETE) and its
     // timing line, splits without commId (the format strings).
    const std::vector<std::string> t = written(NcclVersion::k2_25);
    ExpectAllMatch(MessagesStarting(t, "ncclCommInitRankConfig"),
                   EitherPhase(PatternOfReal(MessageOf(FirstLine(kInitConfig)))), "2.25 world");
    ExpectAllMatch(MessagesStarting(t, "Init timings"), PatternOfReal(MessageOf(FirstLine(kInitConfig, 1))),
                   "2.25 timings");
    ExpectAllMatch(MessagesStarting(t, "ncclCommSplit"),
                   PatternOfFormat("%s " + init + " parent %p splitCount %d color %d key %d- Init START") + "|" +
                       PatternOfFormat("%s " + init + " parent %p splitCount %d color %d key %d - Init COMPLETE"),
                   "2.25 split");
  }
}

// ---------------------------------------------------------------------------
// Refusals.

void ExpectRefused(const std::vector<std::string>& texts, const std::string& message) {
  const Expected<std::vector<RankTrace>> t = Read(texts);
  ASSERT_FALSE(t.ok()) << message;
  EXPECT_EQ(t.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(t.error().message, message);
}

TEST(NcclLog, EveryMalformedCallLineIsRefusedNamingItsLineAndWhy) {
  const std::string ok = Call("h:1:1", "AllReduce", "0", 8, 7, 0, 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Call("h:1:1", "AllReduce", "0", 8, 7, 0, 0, "0x30"),
       "AllReduce on comm 0x30, which no init line of process h:1 names (log with NCCL_DEBUG=INFO "
       "NCCL_DEBUG_SUBSYS=INIT,COLL from the process's start)"},
      {Call("h:3:3", "AllReduce", "0", 8, 7, 0, 0),
       "AllReduce on comm 0x10, which no init line of process h:3 names (log with NCCL_DEBUG=INFO "
       "NCCL_DEBUG_SUBSYS=INIT,COLL from the process's start)"},
      {Call("h:1:1", "AllReduce", "0", 8, 12, 0, 0),
       "datatype 12 is not one of NCCL's (0 ncclInt8 to 11 ncclFloat8e5m2)"},
      {Call("h:1:1", "AllReduce", "0", 8, 3, 0, 0), "datatype 3 is ncclUint32, which no torch dtype maps to"},
      {Call("h:1:1", "AllReduce", "0", 8, 5, 0, 0), "datatype 5 is ncclUint64, which no torch dtype maps to"},
      {Call("h:1:1", "AllReduce", "0", 8, 7, -1, 0), "op -1 is not an NCCL reduction (0 to 4, or a PreMulSum from 5)"},
      {Call("h:1:1", "AllReduce", "0", 1099511627777, 7, 0, 0),
       "count '1099511627777' is not a whole number from 0 to 1099511627776"},
      {Call("h:1:1", "ReduceScatter", "0", 1099511627776, 7, 0, 0),
       "ReduceScatter of count 1099511627776 on 2 ranks moves over 1099511627776 elements"},
      {Call("h:1:1", "AlltoAll", "0", 549755813889, 7, 0, 0),
       "AlltoAll of count 549755813889 on 2 ranks moves over 1099511627776 elements"},
      {Call("h:1:1", "Gather", "0", 8, 7, 0, 0),
       "'Gather' is no NCCL call seam reads (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, Send, Recv, "
       "AlltoAll)"},
      {Call("h:1:1", "Broadcast", "0", 8, 7, 0, 2), "root 2 is not a rank of the communicator's 2"},
      {Call("h:1:1", "Send", "0", 8, 7, 0, -1), "root -1 is not a rank of the communicator's 2"},
      {"h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 count x8 datatype 7 op 0 root 0 "
       "comm 0x10 [nranks=2] stream 0x99",
       "count 'x8' is not a whole number from 0 to 1099511627776"},
      {"h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 cnt 8 datatype 7 op 0 root 0 "
       "comm 0x10 [nranks=2] stream 0x99",
       "has 'cnt' where NCCL prints 'count'"},
      {"h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00", "has the line's end where NCCL prints 'recvbuff'"},
      {"h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 7f00",
       "recvbuff '7f00' is not a pointer as NCCL prints one (0x... or (nil))"},
      {"h:1:1 [0] NCCL INFO AllReduce: opCount 0x0 sendbuff 0x7f00 recvbuff 0x7f00",
       "opCount '0x0' is not a hexadecimal number of at most 16 digits"},
      {"h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 count 8 datatype 7 op 0 root 0 "
       "comm 0x10 [nranks=2] stream 0x99 extra",
       "has 'extra' after the stream, where NCCL ends the line"},
      {"h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 count 8 datatype 7 op 0 root 0 "
       "comm 0x10 [nranks=0] stream 0x99",
       "nranks '0' is not a whole number from 1 to 65536"},
      {"h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 count 8 datatype 7 op 0 root 0 "
       "comm 0x10 nranks=2 stream 0x99",
       "has 'nranks=2' where NCCL prints '[nranks=N]'"},
      {"h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 count 8 datatype 7 op 0 root 0 "
       "comm 0x10 [nranks=4] stream 0x99",
       "[nranks=4] where comm 0x10's init line (NCCL log 1 line 1) says nranks 2"},
  };
  for (const auto& [line, why] : cases) ExpectRefused({TwoRanks() + line + "\n"}, "NCCL log 1 line 3: " + why);
  // The file and line are the bad line's.
  ExpectRefused({TwoRanks() + ok, "\n" + Call("h:1:1", "AllReduce", "0", 8, 12, 0, 0)},
                "NCCL log 2 line 2: datatype 12 is not one of NCCL's (0 ncclInt8 to 11 ncclFloat8e5m2)");
  // An all-to-all of sends each within the bound, together over it.
  std::string a2a;
  for (int peer : {0, 1}) {
    a2a += Call("h:1:1", "Send", "0", 1099511627776, 7, 0, peer) + Call("h:1:1", "Recv", "0", 1, 7, 0, peer);
  }
  ExpectRefused({TwoRanks() + a2a}, "NCCL log 1 line 3: an all-to-all whose sends move over 1099511627776 elements");
}

TEST(NcclLog, EveryMalformedInitLineIsRefusedNamingItsLineAndWhy) {
  const std::string dev = "cudaDev 0 nvmlDev 0 busId 18000";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {fmt::format("h:1:1 [0] NCCL INFO ncclCommSplit comm 0x40 rank 0 nranks 1 {} parent 0x99 splitCount 1 color 5 "
                   "key 0- Init START",
                   dev),
       "a split of comm 0x99, which no earlier init line of process h:1 names"},
      {fmt::format("h:1:1 [0] NCCL INFO ncclCommSplit comm 0x40 rank 0 nranks 1 {} parent 0x10 splitCount 1 key 0 - "
                   "Init COMPLETE",
                   dev),
       "a split's init line without its color"},
      {fmt::format("h:1:1 [0] NCCL INFO comm 0x50 rank 2 nranks 2 {} commId 0x1 - Init START", dev),
       "rank 2 is not below nranks 2"},
      {fmt::format("h:1:1 [0] NCCL INFO comm 0x50 nranks 2 {} commId 0x1 - Init START", dev),
       "an init line without its rank and nranks"},
      {fmt::format("h:1:1 [0] NCCL INFO comm 0x50 rank 0 nranks 2 {} commId - Init START", dev),
       "the init line's 'commId' has no value"},
      {fmt::format("h:1:1 [0] NCCL INFO comm 0x50 rank 0 nranks 2 {} commId 0xzz - Init START", dev),
       "commId '0xzz' is not a hexadecimal number of at most 16 digits"},
      {fmt::format("h:1:1 [0] NCCL INFO comm 0x50 rank 0 nranks 70000 {} commId 0x1 - Init START", dev),
       "nranks '70000' is not a whole number from 1 to 65536"},
      {fmt::format("h:3:3 [0] NCCL INFO comm 0x30 rank 1 nranks 2 {} commId 0xabc - Init COMPLETE", dev),
       "processes h:2 and h:3 both hold rank 1 of one communicator"},
      {fmt::format("h:3:3 [0] NCCL INFO comm 0x30 rank 2 nranks 3 {} commId 0xabc - Init COMPLETE", dev),
       "nranks 3 where another member's init line of the same communicator says 2"},
  };
  for (const auto& [line, why] : cases) ExpectRefused({TwoRanks() + line + "\n"}, "NCCL log 1 line 3: " + why);
  // One process as two ranks of one communicator (ncclCommInitAll's way).
  ExpectRefused({fmt::format("h:1:1 [0] NCCL INFO comm 0x50 rank 0 nranks 2 {0} commId 0xdd - Init START\n"
                             "h:1:1 [1] NCCL INFO comm 0x60 rank 1 nranks 2 {0} commId 0xdd - Init START\n",
                             dev)},
                "NCCL log 1 line 2: process h:1 holds ranks 0 and 1 of one communicator: seam reads one rank a "
                "process");
}

TEST(NcclLog, LogsWithoutCallsOrWorldOrWholeGroupsAreRefused) {
  const std::string none = "no NCCL log holds a COLL line: log with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL";
  ExpectRefused({}, none);
  ExpectRefused({""}, none);
  ExpectRefused({TwoRanks() + kTimings}, none);
  // A third process in no communicator with the other two.
  ExpectRefused({TwoRanks() +
                 "h:3:3 [0] NCCL INFO comm 0x30 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 18000 commId 0xdef - Init "
                 "START\n" +
                 Call("h:1:1", "AllReduce", "0", 8, 7, 0, 0)},
                "no communicator spans all 3 processes: a process's global rank is its rank in the communicator of "
                "every process (PyTorch's default group), and no init lines of one are here (log every process with "
                "NCCL_DEBUG_SUBSYS=INIT,COLL from its start)");
  // A communicator only one of whose two members' init lines are here.
  ExpectRefused({TwoRanks() +
                 "h:1:1 [0] NCCL INFO comm 0x60 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0x777 - Init "
                 "START\n" +
                 Call("h:1:1", "AllReduce", "0", 8, 7, 0, 0, "0x60")},
                "NCCL log 1 line 4: comm 0x60 has 2 ranks, but init lines name only 1 of them (pass every process's "
                "log)");
}

TEST(NcclLog, LongLinesAreRefusedOnlyWhereTheyHoldNcclsMark) {
  const std::string ok = TwoRanks() + Call("h:1:1", "AllReduce", "0", 8, 7, 0, 0);
  // NCCL prints at most 1024 bytes a line: a long one is a launcher's.
  const Expected<std::vector<RankTrace>> t = Read({ok + std::string(70000, '=') + "\n"});
  ASSERT_TRUE(t.ok()) << t.error().message;
  ExpectRefused({ok + "h:1:1 [0] NCCL INFO " + std::string(70000, 'x') + "\n"},
                "NCCL log 1 line 4: longer than 65536 bytes");
}

// Every truncation of every line of a log, and bytes changed at random
// (a fixed seed): each log reads or is refused as malformed, and what reads
// holds events whose groups hold their rank and peer.
TEST(NcclLog, TruncatedAndGarbledLinesAreReadOrRefusedNeverCrash) {
  Members run(2);
  run.Collective(TraceOp::kAllReduce, {0, 1}, 8, "bfloat16", "sum");
  run.Collective(TraceOp::kAllToAll, {1, 0}, 4, "float32");
  run.SendRecv(0, 1, {0, 1}, 3, "int8");
  run.Collective(TraceOp::kReduce, {1}, 3, "int8", "max", 1);
  const auto check = [](const std::vector<std::string>& texts) {
    const Expected<std::vector<RankTrace>> t = Read(texts);
    if (!t.ok()) {
      EXPECT_EQ(t.error().code, ErrorCode::kMalformed);
      return;
    }
    for (const RankTrace& r : *t) {
      for (const TraceEvent& e : r.events) {
        EXPECT_NE(std::find(e.group.begin(), e.group.end(), r.rank), e.group.end());
        EXPECT_TRUE(e.peer == -1 || std::find(e.group.begin(), e.group.end(), e.peer) != e.group.end());
        EXPECT_GE(e.elements, 0);
        EXPECT_LE(e.elements, kMaxTraceElements);
      }
    }
  };
  for (NcclVersion v : kVersions) {
    const std::vector<std::string> texts = WriteNcclLogs(run.ranks(), v);
    for (size_t end = 0; end < texts[0].size(); ++end) {
      const size_t line_end = texts[0].find('\n', end);
      check({texts[0].substr(0, end) + texts[0].substr(line_end), texts[1]});
    }
    std::mt19937 rng(7);
    const std::string bytes(" :0x9f-[]\n\0\xff(nil)", 17);
    for (int i = 0; i < 2000; ++i) {
      std::vector<std::string> garbled = texts;
      for (int k = 0; k < 3; ++k) {
        std::string& t = garbled[rng() % 2];
        t[rng() % t.size()] = bytes[rng() % bytes.size()];
      }
      check(garbled);
    }
  }
}

}  // namespace
}  // namespace seam
