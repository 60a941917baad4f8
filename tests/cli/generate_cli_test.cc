// `seam run --generate`: requests prefilled and decoded on threads, every
// token fed checked against the teacher-forced reference; the request flags'
// refusals; the matrix generating over every configuration.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process_testing.h"

namespace seam {
namespace {

using testing::Result;

class GenerateCli : public testing::InTempDir {
 protected:
  Result Run(const std::vector<std::string>& args) const { return Shell(testing::Quote(SEAM_CLI), args); }
};

TEST_F(GenerateCli, AChunkedMixedGenerationUnderAttentionDpIsBitIdenticalAndSaysHowItWasServed) {
  const Result r = Run({"run", "llama", "--tp", "2", "--attn-dp", "2", "--requests", "5:6,9:4@1,3", "--generate", "5",
                        "--chunk", "4", "--mixed"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("3 requests, 17 prompt tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("serving: chunks of 4 tokens, prefill and decode mixed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("7 steps: 1 prefill, 3 decode, 3 mixed; a DP group idle in 2 of them"), std::string::npos)
      << r.out;
  // Request 1 arrives last, so round robin by arrival puts it on group 0 after request 2 on group 1.
  EXPECT_NE(r.out.find("request 1: prompt 9, arrives at step 1, DP group 0:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("request 2: prompt 3, arrives at step 0, DP group 1:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("every token fed (29)"), std::string::npos) << r.out;  // 4 + 11 + 7 + 7
  EXPECT_NE(r.out.find("bit-identical: yes"), std::string::npos) << r.out;
}

TEST_F(GenerateCli, ADecodeWhereMostDpGroupsHoldNoRequestRunsEveryStep) {
  const Result r = Run({"run", "deepseek-v2-lite", "--tp", "4", "--attn-dp", "4", "--moe", "a2a", "--tokens", "6",
                        "--requests", "1", "--generate", "4", "--dtype", "bf16"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4 steps: 1 prefill, 3 decode, 0 mixed; a DP group idle in 12 of them"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bit-identical: yes"), std::string::npos) << r.out;
}

TEST_F(GenerateCli, TheRequestAndGenerationFlagsRefuseWhatTheyCannotMeanTogether) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--requests", "3:2", "--tokens", "8", "--generate", "1"},
       "seam: --requests P[:O][@A],... gives each prompt's length: drop --tokens"},
      {{"--requests", "3:2"}, "seam: --requests gives output lengths or arrivals only with --generate N"},
      {{"--requests", "3,x", "--generate", "2"},
       "seam: --requests: '3,x': each request is PROMPT[:OUTPUT][@ARRIVAL], e.g. 12:4@2 ('x' is not an integer "
       "from 1 to 1048576)"},
      {{"--requests", "0:2", "--generate", "1"},
       "seam: --requests: '0:2': each request is PROMPT[:OUTPUT][@ARRIVAL], e.g. 12:4@2 ('0' is not an integer "
       "from 1 to 1048576)"},
      {{"--requests", "4@-1", "--generate", "1"},
       "seam: --requests: '4@-1': each request is PROMPT[:OUTPUT][@ARRIVAL], e.g. 12:4@2 ('-1' is not an integer "
       "from 0 to 1048576)"},
      {{"--requests", "1000000:100000", "--generate", "1"},
       "seam: --requests: '1000000:100000': each request is PROMPT[:OUTPUT][@ARRIVAL], e.g. 12:4@2 (more than "
       "1048576 tokens in all)"},
      {{"--generate", "2", "--backend", "record"},
       "seam: --generate picks each token from the logits a step computes; --backend record computes none"},
      {{"--matrix", "--requests", "3,4"},
       "seam: --matrix splits --tokens into --requests N: give a count, not each request's lengths"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = {"run", "llama"};
    args.insert(args.end(), flags.begin(), flags.end());
    const Result r = Run(args);
    EXPECT_EQ(r.code, 2) << message;
    EXPECT_EQ(r.err, message + "\n");
  }
  for (const std::string flag : {"--chunk", "--mixed"}) {
    std::vector<std::string> args = {"run", "llama", flag};
    if (flag == "--chunk") args.push_back("3");
    const Result r = Run(args);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err.rfind("seam: " + flag + " requires --generate", 0), 0u) << r.err;
  }
}

TEST_F(GenerateCli, AGenerationPastTheMemoryLimitIsRefusedCountingItsCaches) {
  // 2999 tokens fed, each 1 KiB of cache (4 layers, K and V of 2 heads of 16, fp32).
  const Result r = Run({"run", "llama", "--requests", "2000:1000", "--generate", "1", "--max-memory", "30M"});
  EXPECT_EQ(r.code, 2);
  // And every token's hidden state (64 floats) and logits (256): 3.7 MiB.
  EXPECT_NE(r.err.find("the generation's caches and outputs 6.6 MiB"), std::string::npos) << r.err;
}

TEST_F(GenerateCli, TheMatrixGeneratesOverEveryConfigurationAndSaysSoInJson) {
  const Result r = Run({"run", "llama", "--matrix", "--generate", "3", "--chunk", "2", "--mixed", "--tokens", "6",
                        "--requests", "2", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["generation"], nlohmann::json({{"tokens", 3}, {"chunk", 2}, {"mixed", true}}));
  EXPECT_EQ(doc["totals"]["differs"], 0);
  EXPECT_GT(doc["totals"]["identical"], 200);
}

}  // namespace
}  // namespace seam
