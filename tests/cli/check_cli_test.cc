// `seam check --trace`: a run's own traces, written by `seam run
// --write-trace` in each format, check clean (exit 0); a trace with a
// defect written in exits 1 naming the rank, place and defect; the engine's
// own launch line names the configuration.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process_testing.h"

namespace seam {
namespace {

using testing::ReadText;
using testing::Result;
using testing::WriteText;

class CheckCli : public testing::InTempDir {
 protected:
  Result Run(const std::vector<std::string>& args) const { return Shell(testing::Quote(SEAM_CLI), args); }

  // The files a --write-trace directory holds, in name order.
  std::vector<std::string> Files(const std::string& dir) const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(PathOf(dir))) out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  Result Check(const std::vector<std::string>& config, const std::string& dir,
               const std::vector<std::string>& more = {}) const {
    std::vector<std::string> args = {"check"};
    args.insert(args.end(), config.begin(), config.end());
    args.push_back("--trace");
    for (const std::string& f : Files(dir)) args.push_back(f);
    args.insert(args.end(), more.begin(), more.end());
    return Run(args);
  }
};

const std::vector<std::string> kDeepseek = {"deepseek-v2-lite", "--tp", "4", "--attn-dp", "2", "--moe", "a2a"};

TEST_F(CheckCli, ARunsOwnTraceInEachFormatChecksCleanOnEveryRank) {
  for (const std::string format : {"seam", "nccl", "torch"}) {
    std::vector<std::string> run = {"run"};
    run.insert(run.end(), kDeepseek.begin(), kDeepseek.end());
    for (const std::string& a : {std::string("--write-trace"), PathOf(format), std::string("--trace-format"), format}) {
      run.push_back(a);
    }
    const Result wrote = Run(run);
    ASSERT_EQ(wrote.code, 0) << wrote.err;
    EXPECT_NE(wrote.err.find("every rank's calls written to"), std::string::npos) << wrote.err;
    ASSERT_EQ(Files(format).size(), 4U) << format;
    const Result r = Check(kDeepseek, format);
    EXPECT_EQ(r.code, 0) << format << ": " << r.out << r.err;
    for (int rank = 0; rank < 4; ++rank) {
      EXPECT_NE(r.out.find(fmt::format("rank {}: matches its plan (17 collectives", rank)), std::string::npos)
          << format << ":\n"
          << r.out;
    }
    // The batch: 32 tokens in 4 requests, round robin over the DP groups.
    EXPECT_NE(r.out.find("batch: 20, 12 rows per DP group (read from the trace's sizes"), std::string::npos) << r.out;
  }
}

TEST_F(CheckCli, ASumCompletedTwiceExitsOneNamingTheRankThePlaceAndTheDefect) {
  ASSERT_EQ(Run({"run", "llama", "--tp", "2", "--pp", "2", "--write-trace", PathOf("t")}).code, 0);
  // Rank 2 (the second pipeline rank) completes again what it received:
  // an all-reduce over its TP group between the handoff's receives and its
  // gather of the slices.
  const std::string file = PathOf("t/seam-trace.2.jsonl");
  std::string text = ReadText(file);
  const size_t second = text.find('\n', text.find('\n') + 1) + 1;
  text.insert(
      second,
      R"({"rank": 2, "op": "all_reduce", "group": [2, 3], "shape": [32, 64], "dtype": "bfloat16", "reduce": "sum"})"
      "\n");
  WriteText(file, text);
  const Result r = Check({"llama", "--tp", "2", "--pp", "2"}, "t");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("rank 2: diverges at collective 3 of 9\n"
                       "  where:       the handoff from pipeline rank 0\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  engine:      the engine ran all_reduce over 2 ranks (2,3) (2048 elements of bfloat16, 4.00 "
                       "KiB) at trace line 3\n  looks like:  a sum completed twice\n"),
            std::string::npos)
      << r.out;
  for (int rank : {0, 1, 3}) EXPECT_NE(r.out.find(fmt::format("rank {}: matches its plan", rank)), std::string::npos);

  const Result json = Check({"llama", "--tp", "2", "--pp", "2"}, "t", {"--format", "json"});
  EXPECT_EQ(json.code, 1);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["ok"], false);
  EXPECT_EQ(doc["ranks"][2]["divergence"]["defect"], "a sum completed twice");
  EXPECT_EQ(doc["ranks"][2]["divergence"]["trace_line"], 3);
  EXPECT_EQ(doc["ranks"][0]["divergence"], nullptr);
  EXPECT_EQ(doc["group_rows"], nlohmann::json::array({32}));
}

TEST_F(CheckCli, ARankMissingFromTheTraceIsNamedAndTheOthersChecked) {
  ASSERT_EQ(Run({"run", "llama", "--tp", "4", "--write-trace", PathOf("t")}).code, 0);
  std::filesystem::remove(PathOf("t/seam-trace.3.jsonl"));
  const Result r = Check({"llama", "--tp", "4"}, "t");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("not in the trace: ranks 3\n"), std::string::npos) << r.out;
}

TEST_F(CheckCli, TheEnginesLaunchLineNamesTheConfigurationChecked) {
  const std::vector<std::string> line = {"--model-path", std::string(SEAM_HF_CONFIGS) + "/llama-3.1-8b.json",
                                         "--tp-size", "2"};
  std::vector<std::string> run = {"run",       "--backend",      "record", "--layers", "2",      "--write-trace",
                                  PathOf("t"), "--trace-format", "nccl",   "--engine", "sglang", "--"};
  run.insert(run.end(), line.begin(), line.end());
  const Result wrote = Run(run);
  ASSERT_EQ(wrote.code, 0) << wrote.err;
  std::vector<std::string> check = {"--layers", "2", "--engine", "sglang"};
  std::vector<std::string> args = {"check"};
  args.insert(args.end(), check.begin(), check.end());
  args.push_back("--trace");
  for (const std::string& f : Files("t")) args.push_back(f);
  args.push_back("--");
  args.insert(args.end(), line.begin(), line.end());
  const Result r = Run(args);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("rank 1: matches its plan"), std::string::npos) << r.out;
  // Checked as TP 4: the engine's sums are over two ranks, and two ranks
  // ran nothing.
  args.back() = "4";
  const Result other = Run(args);
  EXPECT_EQ(other.code, 1) << other.out << other.err;
  EXPECT_NE(other.out.find("  engine:      the engine ran all_reduce over 2 ranks (0,1)"), std::string::npos)
      << other.out;
  EXPECT_NE(other.out.find("  looks like:  the wrong group\n"), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("not in the trace: ranks 2-3\n"), std::string::npos) << other.out;
}

}  // namespace
}  // namespace seam
