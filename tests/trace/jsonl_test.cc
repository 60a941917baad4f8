// seam.trace's JSON lines: read into each rank's collectives in order, and
// every malformed line refused naming its line and what is wrong with it.
#include <gtest/gtest.h>

#include "seam/trace.h"

namespace seam {
namespace {

TEST(JsonlTrace, EachRanksCollectivesInTheOrderItCalledThem) {
  const std::string text =
      R"({"rank": 1, "op": "all_reduce", "group": [0, 1], "shape": [4, 8], "dtype": "bfloat16", "reduce": "sum", "tag": "layer 0 exit"}
{"rank": 0, "op": "all_gather", "group": [0, 1], "shape": [2, 8], "dtype": "bfloat16"}

{"rank": 1, "op": "send", "group": [1, 3], "shape": [4, 8], "dtype": "bfloat16", "peer": 3}
{"rank": 0, "op": "reduce_scatter", "group": [1, 0], "shape": [4, 8], "dtype": "float32", "reduce": "avg"}
)";
  const Expected<std::vector<RankTrace>> t = ReadJsonlTrace(text);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 2U);
  const RankTrace& zero = (*t)[0];
  const RankTrace& one = (*t)[1];
  EXPECT_EQ(zero.rank, 0);
  ASSERT_EQ(zero.events.size(), 2U);
  EXPECT_EQ(zero.events[0].op, TraceOp::kAllGather);
  EXPECT_EQ(zero.events[0].elements, 16);
  EXPECT_EQ(zero.events[0].line, 2);
  EXPECT_EQ(zero.events[1].op, TraceOp::kReduceScatter);
  EXPECT_EQ(zero.events[1].group, (std::vector<int>{1, 0}));  // the group's own order, kept
  EXPECT_EQ(zero.events[1].reduce, "avg");
  EXPECT_EQ(zero.events[1].line, 5);
  ASSERT_EQ(one.events.size(), 2U);
  EXPECT_EQ(one.events[0].tag, "layer 0 exit");
  EXPECT_EQ(one.events[0].elements, 32);
  EXPECT_EQ(one.events[1].op, TraceOp::kSend);
  EXPECT_EQ(one.events[1].peer, 3);
  EXPECT_EQ(Name(one.events[1].op), "send");
}

// Written lines read back to the same events (but the line each came from:
// the writer puts each rank's lines together).
TEST(JsonlTrace, WrittenLinesReadBackToTheSameEvents) {
  std::vector<RankTrace> ranks(2);
  ranks[0].rank = 0;
  ranks[0].events = {{.op = TraceOp::kReduce,
                      .group = {2, 0},
                      .shape = {3, 5},
                      .elements = 15,
                      .dtype = "float32",
                      .reduce = "sum",
                      .peer = 2,
                      .tag = "end"},
                     {.op = TraceOp::kAllToAll, .group = {0, 2}, .shape = {7, 4}, .elements = 28, .dtype = "bfloat16"}};
  ranks[1].rank = 2;
  ranks[1].events = {{.op = TraceOp::kRecv, .group = {0, 2}, .shape = {1}, .elements = 1, .dtype = "int64", .peer = 0}};
  const Expected<std::vector<RankTrace>> back = ReadJsonlTrace(WriteJsonlTrace(ranks));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 2U);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ((*back)[r].rank, ranks[r].rank);
    ASSERT_EQ((*back)[r].events.size(), ranks[r].events.size());
    for (size_t i = 0; i < ranks[r].events.size(); ++i) {
      TraceEvent e = (*back)[r].events[i];
      e.line = 0;
      EXPECT_EQ(e, ranks[r].events[i]) << r << " " << i;
    }
  }
}

TEST(JsonlTrace, EveryMalformedLineIsRefusedNamingItsLineAndWhy) {
  const std::string ok =
      R"({"rank": 0, "op": "all_reduce", "group": [0, 1], "shape": [4], "dtype": "bfloat16", "reduce": "sum"})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "seam.trace line 1: is not JSON"},
      {"[1, 2]", "seam.trace line 1: is not a JSON object"},
      {R"({"rank": 0, "op": "all_reduce", "group": [0], "shape": [4], "dtype": "bfloat16", "reduce": "sum", "when": 1})",
       "seam.trace line 1: unknown key \"when\"; the keys are rank, op, group, shape, dtype, reduce, peer, tag, "
       "splits"},
      {R"({"op": "all_reduce", "group": [0], "shape": [4], "dtype": "bfloat16"})",
       "seam.trace line 1: has no \"rank\""},
      {R"({"rank": -1, "op": "all_reduce", "group": [0], "shape": [4], "dtype": "bfloat16", "reduce": "sum"})",
       "seam.trace line 1: \"rank\" is not a rank from 0 to 65535"},
      {R"({"rank": 0, "op": "allreduce", "group": [0], "shape": [4], "dtype": "bfloat16"})",
       "seam.trace line 1: \"op\": 'allreduce' is not one of all_reduce, all_gather, reduce_scatter, all_to_all, "
       "broadcast, reduce, send, recv"},
      {R"({"rank": 2, "op": "all_gather", "group": [0, 1], "shape": [4], "dtype": "bfloat16"})",
       "seam.trace line 1: \"group\" does not hold the line's rank 2"},
      {R"({"rank": 0, "op": "all_gather", "group": [0, 0], "shape": [4], "dtype": "bfloat16"})",
       "seam.trace line 1: \"group\" names rank 0 twice"},
      {R"({"rank": 0, "op": "all_gather", "group": [], "shape": [4], "dtype": "bfloat16"})",
       "seam.trace line 1: \"group\" is not a list of 1 to 65536 ranks"},
      {R"({"rank": 0, "op": "all_gather", "group": [0], "shape": [4, -1], "dtype": "bfloat16"})",
       "seam.trace line 1: \"shape\" holds a size that is not a whole number from 0 to 1099511627776"},
      {R"({"rank": 0, "op": "all_gather", "group": [0], "shape": [1099511627776, 2], "dtype": "bfloat16"})",
       "seam.trace line 1: \"shape\" has more than 1099511627776 elements"},
      {R"({"rank": 0, "op": "all_gather", "group": [0], "shape": [1,1,1,1,1,1,1,1,1], "dtype": "bfloat16"})",
       "seam.trace line 1: \"shape\" is not a list of at most 8 sizes"},
      {R"({"rank": 0, "op": "all_gather", "group": [0], "shape": [4], "dtype": "bf16"})",
       "seam.trace line 1: \"dtype\": 'bf16' is not one of bfloat16, float16, float32, float64, float8_e4m3fn, "
       "float8_e5m2, int8, uint8, int32, int64, bool"},
      {R"({"rank": 0, "op": "all_reduce", "group": [0], "shape": [4], "dtype": "bfloat16"})",
       "seam.trace line 1: all_reduce needs a \"reduce\""},
      {R"({"rank": 0, "op": "all_gather", "group": [0], "shape": [4], "dtype": "bfloat16", "reduce": "sum"})",
       "seam.trace line 1: all_gather takes no \"reduce\""},
      {R"({"rank": 0, "op": "all_reduce", "group": [0], "shape": [4], "dtype": "bfloat16", "reduce": "mean"})",
       "seam.trace line 1: \"reduce\": 'mean' is not one of sum, avg, max, min, prod"},
      {R"({"rank": 0, "op": "send", "group": [0, 1], "shape": [4], "dtype": "bfloat16"})",
       "seam.trace line 1: send needs a \"peer\""},
      {R"({"rank": 0, "op": "send", "group": [0, 1], "shape": [4], "dtype": "bfloat16", "peer": 2})",
       "seam.trace line 1: \"peer\" 2 is not in the group"},
      {R"({"rank": 0, "op": "recv", "group": [0, 1], "shape": [4], "dtype": "bfloat16", "peer": 0})",
       "seam.trace line 1: a recv to the line's own rank"},
      {R"({"rank": 0, "op": "all_gather", "group": [0], "shape": [4], "dtype": "bfloat16", "peer": 0})",
       "seam.trace line 1: all_gather takes no \"peer\""},
      {R"({"rank": 0, "op": "all_gather", "group": [0], "shape": [4], "dtype": "bfloat16", "tag": 7})",
       "seam.trace line 1: \"tag\" is not a string of at most 256 characters"},
      {"", "the seam.trace file holds no collective"},
      {"\n  \n", "the seam.trace file holds no collective"},
      {ok + "\n" + std::string(70000, ' ') + "x", "seam.trace line 2: longer than 65536 bytes"},
  };
  for (const auto& [text, message] : cases) {
    const Expected<std::vector<RankTrace>> t = ReadJsonlTrace(text);
    ASSERT_FALSE(t.ok()) << text.substr(0, 200);
    EXPECT_EQ(t.error().message, message) << text.substr(0, 200);
    EXPECT_EQ(t.error().code, ErrorCode::kMalformed);
  }
  // A tag is made printable: a control sequence cannot reach a terminal.
  const std::string tagged =
      R"({"rank": 0, "op": "all_gather", "group": [0], "shape": [4], "dtype": "bfloat16", "tag": "a\u001b[2Jb"})";
  const Expected<std::vector<RankTrace>> t = ReadJsonlTrace(tagged);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->front().events.front().tag.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace seam
