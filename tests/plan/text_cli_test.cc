// The command line with plans in the text form (`seam plan --format text`,
// `seam show` and `seam diff` of text files) and the corpus's rewrite
// program (`golden`): what they print and their exit codes.
#include <gtest/gtest.h>

#include <filesystem>

#include "process_testing.h"

namespace seam::testing {
namespace {

namespace fs = std::filesystem;

class TextCli : public InTempDir {
 protected:
  Result Seam(const std::vector<std::string>& args) const { return Shell(Quote(SEAM_CLI), args); }
  Result Golden(const std::vector<std::string>& args) const { return Shell(Quote(SEAM_GOLDEN), args); }

  // `seam plan ARGS --format FORMAT` written to a file; returns its path.
  std::string PlanFile(const std::string& name, std::vector<std::string> args, const std::string& format) const {
    args.insert(args.begin(), "plan");
    args.insert(args.end(), {"--format", format});
    const Result r = Seam(args);
    EXPECT_EQ(r.code, 0) << r.err;
    const std::string path = PathOf(name);
    WriteText(path, r.out);
    return path;
  }
};

const std::vector<std::string> kArgs = {
    "deepseek-v2-lite", "--tp", "4", "--attn-dp", "2", "--dense-tp", "1", "--moe", "a2a", "--pp", "2",
    "--pp-split",       "1+3"};

TEST_F(TextCli, ShowReprintsATextPlanByteIdenticalAndAsTheSameJson) {
  const std::string text = PlanFile("plan.txt", kArgs, "text");
  const std::string json = PlanFile("plan.json", kArgs, "json");
  EXPECT_TRUE(ReadText(text).starts_with(
      "plan deepseek-v2-lite hidden=64 streams=1 vocab=256 act=bf16 dispatch=bf16 tp=4 attn_dp=2 dense_tp=1 "
      "moe=a2a ep=4 dp_lm_head=no reduction=ar scattered=no pp=2 split=1+3 pp_rank=0 layers=0..1\n"));
  Result r = Seam({"show", text, "--format", "text"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, ReadText(text));
  r = Seam({"show", text, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, ReadText(json));
  r = Seam({"show", json, "--format", "text"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, ReadText(text));
}

TEST_F(TextCli, DiffComparesATextPlanWithAJsonPlan) {
  const std::string text = PlanFile("plan.txt", kArgs, "text");
  const std::string json = PlanFile("plan.json", kArgs, "json");
  Result r = Seam({"diff", text, json});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "the plans are equal\n");
  const std::string other = PlanFile("other.txt", {"llama", "--tp", "2"}, "text");
  const std::string rs = PlanFile("rs.txt", {"llama", "--tp", "2", "--reduction", "rs"}, "text");
  r = Seam({"diff", other, rs});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(r.out.starts_with("config: ")) << r.out;
}

TEST_F(TextCli, AMalformedTextPlanExitsTwoNamingFileAndLine) {
  std::string text = ReadText(PlanFile("plan.txt", {"llama", "--tp", "2"}, "text"));
  const size_t at = text.find("entry start-residual");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 20, "entry frobnicate");
  const std::string file = PathOf("bad.txt");
  WriteText(file, text);
  const Result r = Seam({"show", file});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "seam: " + file +
                ":8: unknown step 'frobnicate'; expected one of: ar, rs, rsv, ag, a2a-dispatch, "
                "a2a-combine, slice, start-residual, add, norm, ar+add+norm, compute, embed, lm-head, ag-vocab, leave, "
                "send, recv, ag-kv, ag-q, a2a-lse\n");
}

TEST_F(TextCli, AnEmptyFileIsATextPlanWithNothingInIt) {
  const std::string file = PathOf("empty.txt");
  WriteText(file, "\n  \n");
  const Result r = Seam({"diff", file, file});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "seam: " + file + ":1: no plan here; expected a line 'plan MODEL ...'\n");
}

TEST_F(TextCli, AShownTextPlanIsVerified) {
  std::string text = ReadText(PlanFile("plan.txt", {"llama", "--tp", "2"}, "text"));
  const std::string from = "ar+add+norm(attn_tp)";  // the first fused completion of the attention's sum
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, from.size(), "add");
  const std::string file = PathOf("broken.txt");
  WriteText(file, text);
  const Result r = Seam({"show", file});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(r.err.starts_with("seam: " + file + " breaks its invariants:")) << r.err;
}

// The rewrite program writes a corpus that its own check accepts, removes
// files of subjects that no longer exist, and reports a changed plan leaf by leaf.
TEST_F(TextCli, GoldenRewritesChecksAndReportsADifference) {
  const std::string dir = PathOf("corpus");
  fs::create_directory(dir);
  WriteText(dir + "/gone.plans", "subject gone\n");
  Result r = Golden({"--dir", dir});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("wrote ")) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/gone.plans"));
  EXPECT_EQ(ReadText(dir + "/llama.plans"), ReadText(std::string(SEAM_GOLDEN_DIR) + "/llama.plans"));

  const std::string path = dir + "/llama.plans";
  std::string text = ReadText(path);
  const std::string from = "scenario llama tp2 ar pp1\nplan ";
  const size_t scenario = text.find(from);
  ASSERT_NE(scenario, std::string::npos);
  const size_t at = text.find("entry norm residual full w=64", scenario);
  text.replace(at, 29, "entry norm residual full w=65");
  WriteText(path, text);
  r = Golden({"--dir", dir, "--check"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(
      r.out.starts_with("llama tp2 ar pp1 / rank 0 / ordinary / stage 0 / entry[2].width: stored 65, bound 64\n"))
      << r.out;
}

TEST_F(TextCli, GoldenRejectsAMissingFolderAndUnknownFlags) {
  Result r = Golden({"--dir", PathOf("nowhere")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "golden: --dir " + PathOf("nowhere") + " is not a folder\n");
  r = Golden({"--frobnicate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "golden: The following argument was not expected: --frobnicate\nRun with --help for more information.\n");
  r = Golden({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--check"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace seam::testing
