// The seam command line, run as a program: what it prints, where, and its
// exit code (0 ok, 1 a failed check or differing plans, 2 bad input).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include <filesystem>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "process_testing.h"

#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/plan_io.h"
#include "seam/runtime/safetensors.h"
#include "seam/subprocess.h"

namespace seam {
namespace {

using testing::Quote;
using testing::ReadText;
using testing::Result;
using testing::WriteText;

struct BadInput {
  std::vector<std::string> args;
  std::string message;
};

class Cli : public testing::InTempDir {
 protected:
  Result Run(const std::vector<std::string>& args) const { return Shell(Quote(SEAM_CLI), args); }

  // `seam plan ARGS --format json` written to a file; returns its path.
  std::string PlanFile(const std::string& name, std::vector<std::string> args) const {
    args.insert(args.begin(), "plan");
    args.insert(args.end(), {"--format", "json"});
    const Result r = Run(args);
    EXPECT_EQ(r.code, 0) << r.err;
    const std::string path = PathOf(name);
    WriteText(path, r.out);
    return path;
  }

  // Each case exits 2 with its message somewhere on stderr and nothing on stdout.
  void ExpectRefused(const std::vector<BadInput>& cases) const {
    for (const BadInput& c : cases) {
      const Result r = Run(c.args);
      std::string line;
      for (const std::string& a : c.args) line += a + " ";
      EXPECT_EQ(r.code, 2) << line;
      EXPECT_NE(r.err.find(c.message), std::string::npos) << line << "\n" << r.err;
      EXPECT_EQ(r.out, "") << line;
    }
  }
};

Plan Bound(const std::string& model, const ParallelConfig& cfg) {
  Expected<Model> m = CatalogueModel(model);
  if (!m) throw std::runtime_error(m.error().message);
  Expected<Plan> p = BindChecked(*m, cfg, 0);
  if (!p) throw std::runtime_error(p.error().message);
  return *std::move(p);
}

const ParallelConfig kDeepseekCfg{.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a};
const std::vector<std::string> kDeepseekArgs = {"deepseek-v2-lite", "--tp", "4",     "--attn-dp", "2",
                                                "--dense-tp",       "1",    "--moe", "a2a"};

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// ---- success ----

// Configured with SEAM_STATIC_CLI (the default where libstdc++ and libc have
// static libraries), seam starts with no loader and no shared library to
// map: the planner's commands spend about 2 ms less CPU than when linked
// against libstdc++ and libfmt.
TEST_F(Cli, TheCommandLoadsNoSharedLibraryWhenLinkedStatically) {
  if (!SEAM_STATIC_CLI) GTEST_SKIP() << "configured with SEAM_STATIC_CLI=OFF";
  const Result ldd = Shell("ldd " + Quote(SEAM_CLI), {});
  EXPECT_NE(ldd.out.find("statically linked"), std::string::npos) << ldd.out << ldd.err;
  EXPECT_EQ(ldd.out.find(".so"), std::string::npos) << ldd.out;
  const Result version = Run({"--version"});
  EXPECT_EQ(version.code, 0) << version.err;
  EXPECT_EQ(version.out.rfind("seam ", 0), 0u) << version.out;
}

// The help offers only what the flags take: a size flag's value is a number
// (--dense-tp once listed the word attn_tp, which it refuses).
TEST_F(Cli, HelpNamesEachSizeFlagsValueAsANumber) {
  const Result r = Run({"run", "--help"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* flag : {"--tp N=1", "--attn-dp N=1", "--dense-tp N", "--pp N", "--tokens N=32"}) {
    EXPECT_NE(r.out.find(std::string("  ") + flag), std::string::npos) << flag << " in:\n" << r.out;
  }
  EXPECT_EQ(r.out.find("tp, attn_tp or 1"), std::string::npos) << r.out;
  const Result words = Run({"plan", "llama", "--dense-tp", "attn_tp"});
  EXPECT_EQ(words.code, 2);
  EXPECT_EQ(words.err, "seam: --dense-tp: 'attn_tp' is not an integer from 1 to 65536\n");
}

// Every option of every command names its value (N, SECONDS, tp|a2a), never
// CLI11's TEXT; every command gives examples.
TEST_F(Cli, HelpNamesEveryValueAndGivesExamples) {
  for (const char* command : {"models", "plan", "show", "run", "sweep", "diff", "compare"}) {
    const Result r = Run({command, "--help"});
    ASSERT_EQ(r.code, 0) << command << r.err;
    EXPECT_EQ(r.out.find("TEXT"), std::string::npos) << command << ":\n" << r.out;
    EXPECT_EQ(r.out.find("INT"), std::string::npos) << command << ":\n" << r.out;
    EXPECT_NE(r.out.find("\nExamples:\n  seam "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("seam " + std::string(command) + " "), std::string::npos) << r.out;
  }
  const Result plan = Run({"plan", "--help"});
  for (const char* flag : {"--moe tp|a2a=tp", "--reduction ar|rs|rsv|rs+rsv=ar", "--emit sglang|vllm",
                           "--format table|json|text|dot|svg=table", "--nodes N=1 (with --emit)"}) {
    EXPECT_NE(plan.out.find(std::string("  ") + flag), std::string::npos) << flag << " in:\n" << plan.out;
  }
  EXPECT_EQ(plan.out.find("Excludes"), std::string::npos) << plan.out;
}

// A flag seam does not have is answered with the one meant: seam's own
// name for it, the nearest spelling, or the engine whose flag it is.
TEST_F(Cli, AnUnknownFlagIsAnsweredWithTheFlagMeant) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"plan", "llama", "--dp", "2"}, "plan has no flag --dp: did you mean --attn-dp?"},
      {{"plan", "llama", "--atn-dp", "2"}, "plan has no flag --atn-dp: did you mean --attn-dp?"},
      {{"plan", "llama", "--ep-size", "2"},
       "plan has no flag --ep-size: did you mean --ep? (--ep-size is SGLang's flag: seam plan --engine sglang -- ... "
       "--ep-size ... reads SGLang's whole line)"},
      {{"compare", "llama", "--gpu-memory-utilization=0.9"},
       "compare has no flag --gpu-memory-utilization: --gpu-memory-utilization is vLLM's flag: seam compare --engine "
       "vllm -- ... --gpu-memory-utilization=0.9 ... reads vLLM's whole line"},
      {{"run", "llama", "--zzz"}, "run has no flag --zzz"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = Run(args);
    EXPECT_EQ(r.code, 2) << args[2];
    EXPECT_EQ(r.err, "seam: " + message + "\nRun with --help for more information.\n");
    EXPECT_EQ(r.out, "");
  }
  // A path where a catalogue name goes: the flag that reads it.
  const Result dir = Run({"plan", SEAM_HF_CONFIGS});
  EXPECT_EQ(dir.code, 2);
  EXPECT_EQ(dir.err, "seam: '" + std::string(SEAM_HF_CONFIGS) +
                         "' is a path, not a catalogue model: give --hf-config " + SEAM_HF_CONFIGS +
                         "/config.json for a Hugging Face config.json, or an engine's launch line "
                         "with --engine sglang|vllm -- ... (see `seam models` for the catalogue)\n");
}

// Each example --help prints runs as written (from the repository's root,
// whose configs/ it names).
TEST_F(Cli, EveryHelpExampleRuns) {
  for (const char* command : {"models", "plan", "show", "run", "sweep", "diff", "compare"}) {
    const Result help = Run({command, "--help"});
    const std::string examples = help.out.substr(help.out.find("\nExamples:\n") + 11);
    std::istringstream lines(examples);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) continue;
      ASSERT_EQ(line.rfind("  seam ", 0), 0U) << line;
      std::string shell = line.substr(2);
      for (size_t at = 0; (at = shell.find("seam ", at)) != std::string::npos;) {
        if (at > 0 && shell[at - 1] != ' ') {
          at += 5;
          continue;
        }
        shell.replace(at, 4, Quote(SEAM_CLI));
        at += Quote(SEAM_CLI).size();
      }
      const Result r =
          Shell("cd " + Quote(PathOf("")) + " && ln -sfn " + Quote(SEAM_HF_CONFIGS) + " configs && " + shell, {});
      // diff finds the two plans different: exit 1, as it says.
      EXPECT_EQ(r.code, std::string(command) == "diff" ? 1 : 0) << line << "\n" << r.err;
    }
  }
}

TEST_F(Cli, ModelsListsEveryFamilyWithItsStagesFeaturesAndConfig) {
  const Result r = Run({"models"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // A paragraph in plain words first; then each name starts a line, and the
  // lines under it say its tiny size, family and stages.
  ASSERT_NE(r.out.find("\n\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.rfind("Each model is a tiny shape of a real family", 0), 0U) << r.out;
  EXPECT_NE(r.out.find("Stages: A attention"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nllama             tiny shape: hidden 64, 4 layers\n"), std::string::npos) << r.out;
  const std::string text = "\n" + r.out.substr(r.out.find("\n\n") + 2);
  for (const CatalogueEntry& e : Catalogue()) {
    EXPECT_NE(text.find("\n" + e.name + " "), std::string::npos) << e.name << " missing from:\n" << r.out;
  }
  size_t names = 0;
  for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; ++at) {
    names += at + 1 < text.size() && text[at + 1] != ' ' ? 1 : 0;
  }
  EXPECT_EQ(names, Catalogue().size()) << r.out;
  EXPECT_NE(r.out.find("stages:   [A F][A E][A E]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("runs on:  TP, attention DP, TP-MoE (no a2a), input-scattered, CP, DCP, PP"), std::string::npos);
  EXPECT_NE(r.out.find("real config: "), std::string::npos) << r.out;
}

TEST_F(Cli, PlanPrintsTheSameTableAsTheLibrary) {
  const Result r = Run(With({"plan"}, kDeepseekArgs));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, ToTable(Bound("deepseek-v2-lite", kDeepseekCfg)));
  EXPECT_EQ(r.out.rfind("deepseek-v2-lite (tiny shape, hidden 64) on pipeline rank 0 of 1 (layers 0..3)\n", 0), 0U)
      << r.out;
  EXPECT_NE(r.out.find("\nbytes per token per rank: layer 0: 32, layers 1..2: 208 each, layer 3: 240, final "
                       "norm: 0, lm head: 448; total 1136\n"),
            std::string::npos)
      << r.out;
}

TEST_F(Cli, PlanPrintsJsonAndDotOnRequest) {
  const Plan p = Bound("deepseek-v2-lite", kDeepseekCfg);
  const Result json = Run(With({"plan"}, With(kDeepseekArgs, {"--format", "json"})));
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_EQ(json.out, ToJson(Pipeline{p}));
  const Result dot = Run(With({"plan"}, With(kDeepseekArgs, {"--format", "dot"})));
  ASSERT_EQ(dot.code, 0) << dot.err;
  EXPECT_EQ(dot.out, ToDot(p));
}

TEST_F(Cli, ShowReprintsAJsonPlanByteIdentical) {
  const std::string file = PlanFile("plan.json", kDeepseekArgs);
  const Result r = Run({"show", file, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, ReadText(file));
}

TEST_F(Cli, ShowPrintsTheSameTableAsPlan) {
  const std::string file = PlanFile("plan.json", {"llama", "--tp", "2", "--input-scattered"});
  const Result shown = Run({"show", file});
  const Result planned = Run({"plan", "llama", "--tp", "2", "--input-scattered"});
  ASSERT_EQ(shown.code, 0) << shown.err;
  ASSERT_EQ(planned.code, 0) << planned.err;
  EXPECT_EQ(shown.out, planned.out);
}

TEST_F(Cli, DiffOfAFileWithItselfSaysEqualAndExitsZero) {
  const std::string file = PlanFile("plan.json", kDeepseekArgs);
  const Result r = Run({"diff", file, file});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "the plans are equal\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(Cli, DiffOfDifferentPlansListsTheDifferencesAndExitsOne) {
  const std::string ar = PlanFile("ar.json", {"llama", "--tp", "2"});
  const std::string scattered = PlanFile("scattered.json", {"llama", "--tp", "2", "--input-scattered"});
  const Result r = Run({"diff", ar, scattered});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "config: tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar pp=1 != "
            "tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar input-scattered pp=1\n"
            "only the second plan has input-scattered batches\n"
            "bytes/token (ordinary): 1408 -> 1408 (no change)\n"
            "estimated on h100 (batch 64): decode step 100.2 -> 100.2 us (+0.0), prefill 27.41 -> 27.41 ns a token "
            "(+0.00)\n");
}

// A diff of text plans names an inserted step once, not every step after it.
TEST_F(Cli, DiffOfATextPlanWithAnInsertedStepListsThatStepOnce) {
  const std::string a = PathOf("a.txt");
  const Result text = Run({"plan", "llama", "--tp", "2", "--format", "text"});
  ASSERT_EQ(text.code, 0) << text.err;
  WriteText(a, text.out);
  const std::string entry = "    entry ar+add+norm(tp) value full owes=tp->- w=64\n";
  const size_t at = text.out.find(entry);
  ASSERT_NE(at, std::string::npos) << text.out;
  const std::string b = PathOf("b.txt");
  WriteText(b, text.out.substr(0, at) + "    entry ag(tp) input full w=64\n" + text.out.substr(at));
  const Result r = Run({"diff", a, b});
  EXPECT_EQ(r.code, 1) << r.err;
  // The inserted gather costs its latency, 10 us on an H100 node, and 1/2 x 128
  // bytes a token of 64 tokens over 470 GB/s (0.009 us).
  EXPECT_EQ(r.out,
            "+ ordinary stage 2 entry[0]: ag(tp) input full -> full, owes - -> -, width 64\n"
            "bytes/token (ordinary): 1408 -> 1472 (+64)\n"
            "estimated on h100 (batch 64): decode step 100.2 -> 110.2 us (+10.0), prefill 27.41 -> 29.99 ns a "
            "token (+2.58)\n");
  const Result pcie = Run({"diff", a, b, "--hardware", "pcie"});
  EXPECT_NE(pcie.out.find("estimated on pcie (batch 64): decode step "), std::string::npos) << pcie.out;
}

// `dot` is found on PATH; the tests pass with Graphviz and without it.
TEST_F(Cli, SvgIsTheDotGraphDrawnByGraphviz) {
  if (!FindOnPath("dot")) GTEST_SKIP() << "Graphviz's dot is not on PATH";
  const Result r = Run(With({"plan"}, With(kDeepseekArgs, {"--format", "svg"})));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("<svg"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("</svg>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layers 1..2 (x2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rs(attn_tp) 32 B/token"), std::string::npos) << r.out;
  const Result shown = Run({"show", PlanFile("plan.json", kDeepseekArgs), "--format", "svg"});
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_EQ(shown.out, r.out);
}

// ---- bad input: exit 2, "seam: " and the message on stderr, nothing on stdout ----

TEST_F(Cli, BadFlagsExitTwoWithTheExactMessage) {
  const std::vector<BadInput> cases = {
      {{"plan", "llama", "--tp", "6", "--attn-dp", "4"},
       "tp=6 is not divisible by attn_dp=4; attn_dp must divide tp (divisors of 6: 1, 2, 3, 6)"},
      {{"plan", "llama", "--moe", "foo"}, "--moe: unknown MoE mode 'foo'; expected one of: tp, a2a"},
      {{"plan", "llama", "--reduction", "xx"},
       "--reduction: unknown boundary reduction 'xx'; expected one of: ar, rs, rsv, rs+rsv"},
      {{"plan", "gpt2"},
       "unknown model 'gpt2'; the catalogue has: llama, llama3, qwen3, qwen3-moe, gpt-oss, deepseek-v2-lite, "
       "deepseek-qlora, kimi-k2, nemotron-h, nemotron-3-nano, zaya1, qwen3-next, nemotron-nas, mhc (see `seam "
       "models`)"},
      {{"plan", "llama", "--pp", "5"},
       "pp=5 is more than the model's 4 layers; every pipeline rank needs at least one layer"},
      {{"plan", "llama", "--pp", "2", "--pp-split", "1+2"},
       "the layer split 1+2 covers 3 layers but the model has 4; the counts must add up to the model's layers"},
      {{"plan", "llama", "--pp-split", "1+x"},
       "--pp-split: '1+x' is not a list of layer counts like 1+3 or 2,2 (each from 1 to 100000)"},
      {{"plan", "llama", "--format", "yaml"},
       "--format: unknown format 'yaml'; expected one of: table, json, text, dot, svg"},
      {{"plan", "llama", "--pp-split", ""},
       "--pp-split: '' is not a list of layer counts like 1+3 or 2,2 (each from 1 to 100000)"},
      {{"run", "llama", "--backend", "gpu"}, "--backend: unknown backend 'gpu'; expected one of: threads, record, mpi"},
      {{"run", "llama", "--mpi-mode", "fast"},
       "--mpi-mode: unknown MPI mode 'fast'; expected one of: canonical, native"},
      {{"run", "llama", "--fault", "1-kill"},
       "--fault: '1-kill' is not RANK:KIND or RANK:KIND@CALL (KIND: throw, kill, hang, input)"},
      {{"run", "llama", "--mpi-mode", "canonical"}, "--fault and --mpi-mode go with --backend mpi"},
      {{"plan", "llama", "--tp", "0"}, "--tp: '0' is not an integer from 1 to 65536"},
      {{"plan", "llama", "--act-dtype", "fp8"},
       "--act-dtype: the activation dtype is bf16, fp16 or fp32: fp8 applies only to the all-to-all dispatch (as "
       "DeepEP sends it)"},
      {{"plan", "llama", "--dispatch-dtype", "fp4"},
       "--dispatch-dtype: unknown wire dtype 'fp4'; expected one of: fp32, bf16, fp16, fp8"},
      {{"plan", "nemotron-h", "--tp", "2", "--input-scattered"},
       "stage 0 (mixer, layer 0): a mixer cannot gather its own input from the slice on input-scattered batches "
       "(rule: input-scattered eligibility); drop --input-scattered"},
      {{"plan", "llama", "--tp", "4", "--attn-dp", "2", "--input-scattered"},
       "input-scattered batches need attn_dp=1 (attn_dp=2): the reduce-scatter at each attention entry runs over "
       "the whole TP group, which spans other DP groups' requests; drop --attn-dp or --input-scattered"},
  };
  for (const BadInput& c : cases) {
    const Result r = Run(c.args);
    std::string line;
    for (const std::string& a : c.args) line += a + " ";
    EXPECT_EQ(r.code, 2) << line;
    EXPECT_EQ(r.err, "seam: " + c.message + "\n") << line;
    EXPECT_EQ(r.out, "") << line;
  }
}

// What the sharding check refuses, `plan` and `run` alike: the model's field,
// its value, the group and the flags the group comes from.
TEST_F(Cli, ShardingsAModelCannotTakeExitTwoFromPlanAndRun) {
  const std::string config = PathOf("config.json");
  WriteText(config, R"({"model_type": "qwen3", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 24,
                        "num_key_value_heads": 8, "head_dim": 8, "intermediate_size": 384, "vocab_size": 256})");
  const std::string llama8b = std::string(SEAM_HF_CONFIGS) + "/llama-3.1-8b.json";
  const std::vector<BadInput> cases = {
      {{"--hf-config", llama8b, "--tp", "3"},
       "num_attention_heads = 32 does not split over attn_tp = 3 (tp 3 / attn_dp 1); attn_tp must divide 32: 1, 2, "
       "4, 8, 16, 32"},
      {{"--hf-config", config, "--tp", "12"},
       "num_key_value_heads = 8 does not split over attn_tp = 12 (tp 12 / attn_dp 1), nor is attn_tp a multiple of "
       "it to replicate them; attn_tp must divide 8 (1, 2, 4, 8) or be a multiple of it"},
      {{"llama", "--tp", "6", "--attn-dp", "3"},
       "intermediate_size = 128 does not split over dense_tp = 6 (the default, tp); dense_tp must divide 128: 1, 2, "
       "4, 8, 16, 32, 64, 128"},
      {{"qwen3-moe", "--tp", "6", "--attn-dp", "3"},
       "moe_intermediate_size = 32 does not split over tp = 6 (--tp); tp must divide 32: 1, 2, 4, 8, 16, 32"},
      {{"llama", "--tp", "6", "--attn-dp", "3", "--dense-tp", "1"},
       "tp=6 cannot run with the canonical reduction: every group that completes a sum must be a power of two (the "
       "canonical sum is a binary tree over K-blocks); use tp 4 or 8"},
      {{"deepseek-v2-lite", "--tp", "4", "--moe", "a2a", "--ep", "3"},
       "ep=3 does not divide tp=4; the expert groups split the TP group (divisors of 4: 1, 2, 4)"},
      {{"deepseek-v2-lite", "--tp", "4", "--ep", "2"},
       "ep=2 needs --moe a2a: a TP MoE splits every expert over the whole TP group and completes its sum there, so "
       "no expert group of its own exists"},
  };
  for (const BadInput& c : cases) {
    for (const char* command : {"plan", "run"}) {
      const Result r = Run(With({command}, c.args));
      EXPECT_EQ(r.code, 2) << command << " " << c.args[1];
      EXPECT_EQ(r.err, "seam: " + c.message + "\n") << command;
      EXPECT_EQ(r.out, "") << command;
    }
  }
}

// One check decides for both commands: at tp 3, 6, 12 and 16 `plan` and
// `run` exit alike, with the same message when they refuse. tp 16 (two
// nodes of eight) runs where the model's sizes split, on 16 K-blocks.
TEST_F(Cli, PlanAndRunAgreeOnEveryTpSize) {
  const std::string config = PathOf("config.json");
  WriteText(config, R"({"model_type": "qwen3", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 32,
                        "num_key_value_heads": 8, "head_dim": 4, "intermediate_size": 128, "vocab_size": 256})");
  for (const std::vector<std::string>& model : {std::vector<std::string>{"llama"}, {"--hf-config", config}}) {
    for (const char* tp : {"3", "6", "12", "16"}) {
      const Result plan = Run(With(With({"plan"}, model), {"--tp", tp}));
      const Result run = Run(With(With({"run"}, model), {"--tp", tp, "--tokens", "20"}));
      EXPECT_EQ(plan.code, run.code) << model.back() << " tp " << tp << ": " << plan.err << run.err;
      if (plan.code != 0) {
        EXPECT_EQ(plan.err, run.err) << model.back() << " tp " << tp;
      }
    }
  }
  EXPECT_EQ(Run({"plan", "llama", "--tp", "3"}).code, 2);
  const Result sixteen = Run({"run", "--hf-config", config, "--tp", "16", "--tokens", "20"});
  ASSERT_EQ(sixteen.code, 0) << sixteen.err;
  EXPECT_NE(sixteen.out.find("bit-identical: yes\n"), std::string::npos) << sixteen.out;
}

// --layers keeps the first N layers; a model has no layer past its last to
// repeat, so asking for more is an error naming the model and its depth.
TEST_F(Cli, MoreLayersThanAModelDeclaresExitTwo) {
  for (const CatalogueEntry& e : Catalogue()) {
    const int declared = e.make().num_layers;
    const Result r = Run({"plan", e.name, "--layers", std::to_string(declared + 1)});
    EXPECT_EQ(r.code, 2) << e.name;
    EXPECT_EQ(r.err, fmt::format("seam: --layers {} is more than the {} layers {} declares\n", declared + 1, declared,
                                 e.name));
    EXPECT_EQ(Run({"plan", e.name, "--layers", std::to_string(declared)}).code, 0) << e.name;
  }
  const Result nas = Run({"run", "nemotron-nas", "--layers", "9"});
  EXPECT_EQ(nas.code, 2);
  EXPECT_EQ(nas.err, "seam: --layers 9 is more than the 6 layers nemotron-nas declares\n");
  const Result llama = Run({"run", "llama", "--layers", "9"});
  EXPECT_EQ(llama.code, 2);
  EXPECT_EQ(llama.err, "seam: --layers 9 is more than the 4 layers llama declares\n");
  const std::string llama8b = std::string(SEAM_HF_CONFIGS) + "/llama-3.1-8b.json";
  EXPECT_EQ(Run({"plan", "--hf-config", llama8b, "--layers", "40"}).err,
            "seam: --layers 40 is more than the 32 layers " + llama8b + " declares\n");
}

// Errors found by the flag parser itself (CLI11) exit 2 and name the flag or
// argument, with a pointer to --help.
TEST_F(Cli, UnknownFlagExitsTwoAndNamesTheFlag) {
  const Result r = Run({"plan", "llama", "--frob"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--frob"), std::string::npos) << r.err;
}

TEST_F(Cli, MissingModelArgumentExitsTwoAndNamesBothWaysToGiveOne) {
  const Result r = Run({"plan", "--tp", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "seam: name a catalogue model (see `seam models`) or give --hf-config PATH\n");
}

TEST_F(Cli, PlanOfAnHfConfigBindsTheRealSizedModel) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/deepseek-v2-lite.json";
  const Result r = Run(
      {"plan", "--hf-config", config, "--tp", "8", "--attn-dp", "4", "--dense-tp", "1", "--moe", "a2a", "--pp", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("deepseek-v2 on pipeline rank 0 of 2 (layers 0..12)\n", 0), 0U) << r.out.substr(0, 200);
}

TEST_F(Cli, PlanWithBothAModelAndAnHfConfigExitsTwo) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/llama-3.1-8b.json";
  const Result r = Run({"plan", "llama", "--hf-config", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "seam: give a catalogue model or --hf-config, not both (got 'llama' and --hf-config " + config + ")\n");
}

TEST_F(Cli, AMalformedHfConfigExitsTwoNamingTheFileAndTheKey) {
  const std::string config = PathOf("config.json");
  WriteText(config, R"({"model_type": "llama", "hidden_size": "big"})");
  const Result r = Run({"plan", "--hf-config", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "seam: " + config + ": key 'hidden_size' must be an integer from 1 to 10000000; found \"big\"\n");
}

TEST_F(Cli, RunOfAnHfConfigMatchesTheReference) {
  const std::string config = PathOf("config.json");
  WriteText(config, R"({"model_type": "qwen3", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
                        "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 256})");
  const Result r = Run({"run", "--hf-config", config, "--tp", "2", "--attn-dp", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("qwen3 (tiny shape, hidden 64)  tp=2 attn_dp=2", 0), 0U) << r.out;
  EXPECT_NE(r.out.find("bit-identical: yes\n"), std::string::npos) << r.out;
}

TEST_F(Cli, RunAcceptsAnHfConfigAndRejectsItWithACatalogueModel) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/qwen3-8b.json";
  const Result both = Run({"run", "qwen3", "--hf-config", config});
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
  const Result missing = Run({"run", "--hf-config", PathOf("none.json")});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "seam: cannot read " + PathOf("none.json") + ": no such file\n");
}

TEST_F(Cli, MissingSubcommandExitsTwo) {
  const Result r = Run({});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("A subcommand is required"), std::string::npos) << r.err;
}

TEST_F(Cli, ShowOfMalformedJsonExitsTwoNamingTheFile) {
  const std::string file = PathOf("broken.json");
  WriteText(file, "{\"seam_plan\": 1, ");
  const Result r = Run({"show", file});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "seam: " + file + ": the plan is not valid JSON\n");
}

TEST_F(Cli, ShowOfABadFieldExitsTwoNamingTheFileAndThePath) {
  const std::string good = PlanFile("plan.json", {"llama", "--tp", "2"});
  std::string text = ReadText(good);
  const std::string from = "\"step\": \"start-residual\"";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "\"step\": \"frobnicate\"");
  const std::string file = PathOf("bad-step.json");
  WriteText(file, text);
  const Result r = Run({"show", file});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "seam: " + file +
                ": ranks[0].lines[0].stages[0].entry[1].step: unknown step 'frobnicate'; expected one of: ar, rs, "
                "rsv, ag, a2a-dispatch, a2a-combine, slice, start-residual, add, norm, ar+add+norm, "
                "compute, embed, lm-head, ag-vocab, leave, send, recv, ag-kv, ag-q, a2a-lse\n");
}

TEST_F(Cli, ShowOfANonexistentFileExitsTwo) {
  const std::string file = PathOf("no-such-plan.json");
  const Result r = Run({"show", file});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "seam: cannot read " + file + ": no such file\n");
}

TEST_F(Cli, SvgWithoutGraphvizOnPathExitsTwoSayingHowToGetIt) {
  const std::string empty = PathOf("empty-path");
  std::filesystem::create_directory(empty);
  const std::string file = PlanFile("plan.json", {"llama", "--tp", "2"});
  const std::string seam_without_dot = "PATH=" + Quote(empty) + " " + Quote(SEAM_CLI);
  const std::vector<std::vector<std::string>> commands = {{"plan", "llama", "--tp", "2", "--format", "svg"},
                                                          {"show", file, "--format", "svg"}};
  for (const std::vector<std::string>& args : commands) {
    const Result r = Shell(seam_without_dot, args);
    EXPECT_EQ(r.code, 2) << args[0];
    EXPECT_EQ(r.out, "") << args[0];
    EXPECT_EQ(r.err,
              "seam: --format svg needs Graphviz's `dot` on PATH (apt-get install graphviz); --format dot "
              "writes the graph text\n")
        << args[0];
  }
}

TEST_F(Cli, DiffWithAMalformedFileExitsTwo) {
  const std::string good = PlanFile("plan.json", {"llama", "--tp", "2"});
  const std::string bad = PathOf("broken.json");
  WriteText(bad, "{not json");
  const Result r = Run({"diff", good, bad});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "seam: " + bad + ": the plan is not valid JSON\n");
  // Without a leading '{' the file is read as the text form.
  WriteText(bad, "not json");
  const Result text = Run({"diff", good, bad});
  EXPECT_EQ(text.code, 2);
  EXPECT_EQ(text.err, "seam: " + bad + ":1: expected a line 'plan MODEL ...', got 'not'\n");
}

// ---- failed checks: exit 1 ----

// The plan of llama tp=2 with its final fused all-reduce+add+norm replaced
// by a bare norm: the stack ends reading a residual that still has a value
// owing a tp sum pending.
TEST_F(Cli, ShowOfAPlanThatBreaksAnInvariantExitsOneNamingIt) {
  const Plan p = Bound("llama", {.tp = 2});
  std::vector<LinePlan> lines = p.lines();
  lines[0].end.steps = {Step{.kind = StepKind::kNorm,
                             .operand = Operand::kResidual,
                             .rows_in = Rows::Full(),
                             .rows_out = Rows::Full(),
                             .width = 64}};
  const std::string file = PathOf("unsummed.json");
  WriteText(file, ToJson(Plan(p.header(), lines)));
  const Result r = Run({"show", file});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("seam: " + file + " breaks its invariants:\n", 0), 0U) << r.err;
  EXPECT_NE(r.err.find("rank 0 ordinary final[0]: invariant 2 (every owed sum completes once, over its group, "
                       "before any read): reads the residual while a value is still pending\n"),
            std::string::npos)
      << r.err;
}

// Under attention DP the attention's sum is owed over attn_tp; completing it
// over the whole TP group would sum other DP groups' rows.
TEST_F(Cli, ShowOfASumOverTheWrongGroupExitsOneNamingInvariantsTwoAndSeven) {
  const Plan p = Bound("llama", {.tp = 4, .attn_dp = 2});
  std::vector<LinePlan> lines = p.lines();
  Step& fused = lines[0].stages[1].entry[0];
  ASSERT_EQ(fused.kind, StepKind::kAllReduceAddNorm);
  ASSERT_EQ(fused.group, Group::kAttnTp);
  fused.group = Group::kTp;
  const std::string file = PathOf("wrong-group.json");
  WriteText(file, ToJson(Plan(p.header(), lines)));
  const Result r = Run({"show", file});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("rank 0 ordinary stage 1 entry[0]: invariant 2 "), std::string::npos) << r.err;
  EXPECT_NE(
      r.err.find("rank 0 ordinary stage 1 entry[0]: invariant 7 (collectives name the right group for their rows): "
                 "ar+add+norm(tp) on attn rows: the ranks of tp hold different rows\n"),
      std::string::npos)
      << r.err;
}

// ---- pipelines ----

TEST_F(Cli, PlanWithAPipelineSplitPrintsEveryRankAndTheHandoff) {
  const Result r = Run(
      {"plan", "deepseek-v2-lite", "--tp", "4", "--attn-dp", "2", "--dense-tp", "1", "--pp", "2", "--pp-split", "1+3"});
  ASSERT_EQ(r.code, 0) << r.err;
  Expected<Pipeline> p = BindPipelineChecked(CatalogueModel("deepseek-v2-lite").value(),
                                             {.tp = 4, .attn_dp = 2, .dense_tp = 1, .pp = 2, .pp_split = {1, 3}});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(r.out, ToTable(*p));
  EXPECT_NE(r.out.find("deepseek-v2-lite (tiny shape, hidden 64) on pipeline rank 0 of 2 (layers 0..0)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("deepseek-v2-lite (tiny shape, hidden 64) on pipeline rank 1 of 2 (layers 1..3)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" to_pp "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" from_pp "), std::string::npos) << r.out;
}

TEST_F(Cli, APipelineSplitAloneNamesThePipelineRanks) {
  const Result r = Run({"plan", "llama", "--tp", "2", "--pp-split", "1,3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("llama (tiny shape, hidden 64) on pipeline rank 1 of 2 (layers 1..3)\n"), std::string::npos)
      << r.out;
}

TEST_F(Cli, APipelineJsonReadsBackEqualThroughShowAndDiff) {
  const std::vector<std::string> args = {
      "deepseek-v2-lite", "--tp", "4", "--attn-dp", "2", "--dense-tp", "1", "--moe", "a2a", "--pp", "3"};
  const std::string file = PlanFile("pipeline.json", args);
  EXPECT_NE(ReadText(file).find("\"seam_pipeline\": 3"), std::string::npos);
  const Result shown = Run({"show", file, "--format", "json"});
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_EQ(shown.out, ReadText(file));
  const Result same = Run({"diff", file, file});
  EXPECT_EQ(same.code, 0) << same.err;
  const std::string other = PlanFile("other.json", With(args, {"--reduction", "rs"}));
  const Result differ = Run({"diff", file, other});
  EXPECT_EQ(differ.code, 1) << differ.out;
  EXPECT_EQ(differ.out.rfind("rank 0: config: ", 0), 0U) << differ.out;
}

TEST_F(Cli, SweepChecksEveryCutAndExitsZero) {
  const Result r = Run({"sweep", "--max-stages", "2", "--jobs", "2"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_EQ(r.out.rfind("seam sweep: 20 stacks of 1..2 stages", 0), 0U) << r.out;
  EXPECT_NE(r.out.find("\ntotal                                 1440         936             248           0\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nwhat each invariant compared\n  1-3, 6-10 (replay, structure, policy, bytes): "),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err, "");  // no progress bar when stderr is not a terminal
}

TEST_F(Cli, SweepRejectsBadOptionsWithExitTwo) {
  const Result r = Run({"sweep", "--max-stages", "9"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "seam: --max-stages 9 must be between 1 and 8\n");
}

// ---- running ----

TEST_F(Cli, RunPrintsBitIdenticalAgainstTheReference) {
  const Result r = Run({"run", "deepseek-v2-lite", "--tp", "4", "--attn-dp", "2", "--dense-tp", "1", "--moe", "a2a",
                        "--pp", "2", "--pp-split", "1+3", "--dtype", "bf16"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("\nbit-identical: yes\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nmax |diff|: 0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  rank 7: "), std::string::npos) << r.out;
}

TEST_F(Cli, RunOnTheRecordBackendCountsWithoutData) {
  const Result r = Run({"run", "llama", "--tp", "2", "--backend", "record"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("bit-identical: n/a (the record backend moves no data)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  rank 1: 19 collectives"), std::string::npos) << r.out;
}

TEST_F(Cli, RunRejectsWhatTheCanonicalReductionCannotServe) {
  const Result r = Run({"run", "llama", "--tp", "6", "--attn-dp", "3"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "seam: intermediate_size = 128 does not split over dense_tp = 6 (the default, tp); dense_tp must divide "
            "128: 1, 2, 4, 8, 16, 32, 64, 128\n");
  EXPECT_EQ(Run({"run", "llama", "--dtype", "fp8"}).err,
            "seam: --dtype: unknown dtype 'fp8'; expected one of: fp32, bf16\n");
  EXPECT_EQ(Run({"run", "llama", "--tokens", "2", "--requests", "3"}).err,
            "seam: --tokens 2 cannot fill 3 requests of at least one token each\n");
}

TEST_F(Cli, ADumpedLlamaCheckpointRunsAgainWithTheSameOutput) {
  const std::string dir = PathOf("dump");
  const Result first = Run({"run", "llama", "--tp", "2", "--dtype", "bf16", "--dump", dir});
  ASSERT_EQ(first.code, 0) << first.err;
  for (const char* file : {"config.json", "model.safetensors", "inputs.safetensors", "outputs.safetensors"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + file)) << file;
  }
  const std::string again = PathOf("again");
  const Result second = Run({"run", "--weights", dir, "--tp", "4", "--attn-dp", "2", "--dump", again});
  ASSERT_EQ(second.code, 0) << second.err << second.out;
  EXPECT_NE(second.out.find("dtype=bf16"), std::string::npos) << second.out;  // the checkpoint's dtype
  EXPECT_EQ(ReadText(dir + "/outputs.safetensors"), ReadText(again + "/outputs.safetensors"));
  EXPECT_EQ(ReadText(dir + "/model.safetensors"), ReadText(again + "/model.safetensors"));
}

// Finite weights that overflow: the output is not finite, and two runs that
// hold the same NaN bits are not "bit-identical".
// Record generates no weights: Kimi-K2's 61 layers at their real size (about
// a trillion parameters) are counted in about a second.
TEST_F(Cli, TheRecordBackendRunsARealSizeModelWithoutItsWeights) {
  const Result r = Run({"run", "--hf-config", std::string(SEAM_HF_CONFIGS) + "/kimi-k2.json", "--tp", "8", "--pp", "4",
                        "--backend", "record", "--tokens", "8", "--requests", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  rank 31: "), std::string::npos) << r.out;
}

// A real-size run is refused before any weight is generated, with the
// estimate (measured peaks were 0.94 to 0.97 of it) and what would fit.
TEST_F(Cli, ARunThatWouldNotFitInMemoryIsRefusedWithItsEstimate) {
  const Result r = Run(
      {"run", "--hf-config", std::string(SEAM_HF_CONFIGS) + "/llama-3.1-8b.json", "--tp", "8", "--max-memory", "8G"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "seam: the run needs about 32.0 GiB (weights 29.9 GiB, working buffers 252.0 MiB, allocator 1.9 GiB) but "
            "the memory limit is 8.0 GiB (--max-memory); --layers 4 fits, and --backend record counts the plan without "
            "weights\n");
  for (const char* bad : {"0", "12Q", "-1G", "", "G"}) {
    const Result b = Run({"run", "llama", "--max-memory", bad});
    EXPECT_EQ(b.code, 2) << bad;
    EXPECT_EQ(b.err,
              fmt::format("seam: --max-memory: '{}' is not a memory size like 24G, 512M or 1000000 (bytes)\n", bad));
  }
}

TEST_F(Cli, TheRecordBackendRefusesToDumpValuesItNeverComputed) {
  const Result r = Run({"run", "llama", "--backend", "record", "--dump", PathOf("nothing")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "seam: --dump writes a run's values; the record backend computes none\n");
  EXPECT_FALSE(std::filesystem::exists(PathOf("nothing")));
}

TEST_F(Cli, ARunWhoseOutputIsNotFiniteIsAFailedCheck) {
  const std::string dir = PathOf("overflow");
  ASSERT_EQ(Run({"run", "llama", "--dump", dir}).code, 0);
  const std::string weights = dir + "/model.safetensors";
  Expected<std::vector<StTensor>> read = ReadSafetensors(weights);
  ASSERT_TRUE(read.ok()) << read.error().message;
  std::vector<StTensor> tensors = *read;
  for (StTensor& t : tensors) {
    if (t.name.starts_with("model.layers.0.mlp.")) std::fill(t.floats.begin(), t.floats.end(), 3e38f);
  }
  ASSERT_TRUE(WriteSafetensors(weights, tensors, {{"format", "pt"}}).ok());
  const Result r = Run({"run", "--weights", dir, "--tp", "2"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("seam: the run's output holds a", 0), 0u) << r.err;
  EXPECT_EQ(r.out.find("bit-identical"), std::string::npos) << r.out;
}

TEST_F(Cli, AMalformedCheckpointIsAClearError) {
  const std::string dir = PathOf("bad");
  std::filesystem::create_directories(dir);
  WriteText(dir + "/config.json", "{\"model_type\": \"gpt2\"}");
  const Result r = Run({"run", "--weights", dir});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("model_type"), std::string::npos) << r.err;
}

TEST_F(Cli, TheMatrixPrintsOneLinePerConfigurationAndASummary) {
  const Result r = Run({"run", "zaya1", "--matrix", "--tokens", "8", "--requests", "2"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("configurations: "), std::string::npos);
  EXPECT_NE(r.out.find(" bit-identical to the reference, 0 differ, 0 skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a2a MoE vs TP-MoE bf16"), std::string::npos) << r.out;
}

// ---- engine front doors ----

// The issue's SGLang command line plans exactly what the same seam flags
// plan; so does vLLM's (its --tensor-parallel-size per data-parallel rank).
TEST_F(Cli, AnEngineCommandLinePlansWhatTheEquivalentSeamFlagsPlan) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/deepseek-v2-lite.json";
  // DeepEP dispatches fp8 (SGLang's default).
  const Result seam = Run({"plan", "--hf-config", config, "--tp", "8", "--attn-dp", "4", "--dense-tp", "1", "--moe",
                           "a2a", "--pp", "2", "--dispatch-dtype", "fp8"});
  ASSERT_EQ(seam.code, 0) << seam.err;
  const Result sglang =
      Run({"plan", "--engine", "sglang", "--", "--model-path", config, "--tp-size", "8", "--dp-size", "4",
           "--enable-dp-attention", "--moe-dense-tp-size", "1", "--moe-a2a-backend", "deepep", "--pp-size", "2"});
  ASSERT_EQ(sglang.code, 0) << sglang.err;
  EXPECT_EQ(sglang.out, seam.out);
  EXPECT_NE(sglang.err.find("seam: SGLang flags read as: --tp 8 --attn-dp 4 --dense-tp 1 --moe a2a --pp 2 "
                            "--dispatch-dtype fp8 (model " +
                            config + ")\n"),
            std::string::npos)
      << sglang.err;
  const Result vllm =
      Run({"plan", "--engine", "vllm", "--", config, "--tensor-parallel-size", "2", "--data-parallel-size", "4",
           "--enable-expert-parallel", "--all2all-backend", "deepep_high_throughput", "--pipeline-parallel-size", "2"});
  ASSERT_EQ(vllm.code, 0) << vllm.err;
  // vLLM's get_pp_indices: the extra layer on the first rank.
  const Result seam_vllm = Run({"plan", "--hf-config", config, "--tp", "8", "--attn-dp", "4", "--dense-tp", "2",
                                "--moe", "a2a", "--dp-lm-head", "--pp", "2", "--pp-split", "14+13"});
  EXPECT_EQ(vllm.out, seam_vllm.out);
  // The same through a model directory, as engines take it.
  const std::string dir = PathOf("model");
  std::filesystem::create_directory(dir);
  std::filesystem::copy_file(config, dir + "/config.json");
  const Result from_dir =
      Run({"plan", "--engine", "sglang", "--", "--model-path", dir, "--tp-size", "8", "--dp-size", "4",
           "--enable-dp-attention", "--moe-dense-tp-size", "1", "--moe-a2a-backend", "deepep", "--pp-size", "2"});
  EXPECT_EQ(from_dir.out, seam.out) << from_dir.err;
}

TEST_F(Cli, EngineFlagsThatContradictOrStrayExitTwo) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/llama-3.1-8b.json";
  const std::vector<BadInput> cases = {
      {{"plan", "--engine", "sglang", "--tp", "2", "--", "--model-path", config}, "--tp excludes --engine"},
      {{"plan", "llama", "--engine", "sglang", "--", "--model-path", config}, "model excludes --engine"},
      {{"plan", "--engine", "sglang", "--act-dtype", "fp32", "--", "--model-path", config},
       "--act-dtype excludes --engine"},
      {{"plan", "--engine", "sglang"},
       "--engine sglang reads the engine's own flags after --, e.g. seam plan --engine sglang -- --model-path DIR "
       "--tp-size 8"},
      {{"plan", "llama", "--", "--tp-size", "2"},
       "the arguments after -- are an engine's flags: give --engine sglang or --engine vllm"},
      {{"plan", "--engine", "trt", "--", "--model-path", config},
       "--engine: unknown engine 'trt'; expected one of: sglang, vllm"},
      {{"plan", "--engine", "sglang", "--", "--model-path", config, "--tp-size", "3"},
       "SGLang refuses this at start-up: num_attention_heads = 32 does not split over attn_tp = 3 (tp 3 / attn_dp "
       "1); attn_tp must divide 32: 1, 2, 4, 8, 16, 32"},
      {{"run", "--engine", "vllm", "--", config, "-tp", "2", "--bogus"},
       "vLLM refuses this at start-up: unrecognized arguments: --bogus"},
      {{"sweep", "--", "--tp-size", "2"}, "only plan, run, compare and check read an engine's flags after --"},
  };
  ExpectRefused(cases);
}

// `run` takes the same front door and runs the plan it implies.
TEST_F(Cli, RunTakesAnEngineCommandLine) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/qwen3-30b-a3b.json";
  const Result r = Run({"run",
                        "--layers",
                        "1",
                        "--tokens",
                        "8",
                        "--requests",
                        "2",
                        "--backend",
                        "record",
                        "--engine",
                        "sglang",
                        "--",
                        "--model-path",
                        config,
                        "--tp-size",
                        "4",
                        "--ep-size",
                        "4",
                        "--moe-a2a-backend",
                        "deepep"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("SGLang flags read as: --tp 4 --moe a2a"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("tp=4"), std::string::npos) << r.out;
}

// A printed plan without its configuration lines ("tp=2 attn_dp=1 ..."): its steps.
std::string WithoutConfigLines(const std::string& plan) {
  std::istringstream in(plan);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("tp=")) out += line + "\n";
  }
  return out;
}

// --emit: the engine's launch line, which plans what seam's flags plan.
TEST_F(Cli, EmitWritesTheLaunchLineThatPlansTheSamePlan) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/deepseek-v2-lite.json";
  const std::vector<std::string> flags = {"--hf-config", config, "--tp", "8", "--attn-dp",   "4", "--dense-tp", "1",
                                          "--moe",       "a2a",  "--pp", "2", "--dp-lm-head"};
  const Result seam = Run(With({"plan"}, flags));
  ASSERT_EQ(seam.code, 0) << seam.err;
  const Result sglang = Run(With({"plan"}, With(flags, {"--emit", "sglang"})));
  ASSERT_EQ(sglang.code, 0) << sglang.err;
  EXPECT_EQ(sglang.out, "python3 -m sglang.launch_server --model-path " + config +
                            " --tp-size 8 --pp-size 2 --dp-size 4 --enable-dp-attention --enable-dp-lm-head "
                            "--moe-dense-tp-size 1 --moe-a2a-backend deepep --deepep-dispatcher-output-dtype bf16\n");
  // The line read back plans the same plan.
  const Result back = Run({"plan", "--engine", "sglang", "--", sglang.out.substr(0, sglang.out.size() - 1)});
  ASSERT_EQ(back.code, 0) << back.err;
  EXPECT_EQ(back.out, seam.out);
  // An engine's line written as the other engine's, which reads it back alike.
  const Result vllm = Run({"plan",
                           "--engine",
                           "sglang",
                           "--emit",
                           "vllm",
                           "--",
                           "--model-path",
                           config,
                           "--tp-size",
                           "8",
                           "--dp-size",
                           "8",
                           "--enable-dp-attention",
                           "--enable-dp-lm-head",
                           "--moe-dense-tp-size",
                           "1",
                           "--moe-a2a-backend",
                           "deepep",
                           "--deepep-dispatcher-output-dtype",
                           "bf16"});
  ASSERT_EQ(vllm.code, 0) << vllm.err;
  EXPECT_EQ(vllm.out, "vllm serve " + config +
                          " --tensor-parallel-size 1 --data-parallel-size 8 --enable-expert-parallel "
                          "--all2all-backend deepep_high_throughput\n");
  // One line per node, each said.
  const Result nodes = Run({"plan", "--hf-config", config, "--tp", "16", "--emit", "sglang", "--nodes", "2"});
  ASSERT_EQ(nodes.code, 0) << nodes.err;
  EXPECT_EQ(nodes.out.rfind("# node 0 of 2\npython3 -m sglang.launch_server", 0), 0U) << nodes.out;
  EXPECT_NE(nodes.out.find("\n# node 1 of 2\n"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.err.find("seam: node 0's address is $NODE0_ADDR"), std::string::npos) << nodes.err;
}

TEST_F(Cli, EmitRefusesWhatNoLaunchLineSaysWithWhy) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/llama-3.1-8b.json";
  const std::vector<BadInput> cases = {
      {{"plan", "llama", "--tp", "2", "--emit", "sglang"},
       "--emit names the model's config in the launch line; catalogue model 'llama' is a tiny shape: give "
       "--hf-config (see `seam models` for its real config)"},
      {{"plan", "--hf-config", config, "--layers", "2", "--emit", "vllm"}, "--layers excludes --emit"},
      {{"plan", "--hf-config", config, "--nodes", "2"}, "--nodes requires --emit"},
      {{"plan", "--hf-config", config, "--emit", "trt"}, "--emit: unknown engine 'trt'; expected one of: sglang, vllm"},
      {{"plan", "--hf-config", config, "--emit", "vllm", "--format", "json"}, "--format excludes --emit"},
      {{"plan", "--hf-config", config, "--tp", "4", "--attn-dp", "2", "--emit", "vllm"},
       "vLLM cannot run this configuration: vLLM's data parallelism of a model without MoE runs whole replicas; "
       "attention DP inside one TP group (--attn-dp 2) is SGLang's --enable-dp-attention"},
      {{"compare", "llama", "--emit", "sglang"}, "catalogue model 'llama' is a tiny shape"},
      {{"compare", "--hf-config", config, "--weight-dtype", "fp32", "--emit", "sglang"},
       "the engines load unquantized weights in the activations' dtype (bf16): --weight-dtype fp32 has no launch "
       "flag"},
  };
  ExpectRefused(cases);
}

TEST_F(Cli, CompareWritesEachPrintedConfigurationsLaunchLineOrWhyNot) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/qwen3-30b-a3b.json";
  const std::vector<std::string> args = {"compare", "--hf-config", config,   "--gpus", "8",
                                         "--top",   "60",          "--emit", "vllm"};
  const Result table = Run(args);
  ASSERT_EQ(table.code, 0) << table.err;
  const Result j = Run(With(args, {"--format", "json"}));
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["ranked"].size(), 60U);
  EXPECT_NE(table.out.find("\nvLLM launch lines:\n"), std::string::npos) << table.out;
  int written = 0;
  for (const nlohmann::json& k : doc["ranked"]) {
    const nlohmann::json& l = k["launch"];
    EXPECT_EQ(l["engine"], "vllm");
    if (l.contains("refused")) {
      EXPECT_NE(table.out.find("  none: " + l["refused"].get<std::string>() + "\n"), std::string::npos);
      continue;
    }
    ++written;
    const std::string line = l["lines"][0].get<std::string>();
    EXPECT_NE(table.out.find("  " + line + "\n"), std::string::npos) << line;
    // Each line read back plans the candidate's steps (a knob that makes
    // no difference to the model, noted, may differ in the plan's header).
    const Result back = Run({"plan", "--engine", "vllm", "--", line});
    ASSERT_EQ(back.code, 0) << back.err;
    std::vector<std::string> flags = {"plan", "--hf-config", config};
    std::istringstream words(k["flags"].get<std::string>());
    for (std::string w; words >> w;) flags.push_back(w);
    EXPECT_EQ(WithoutConfigLines(back.out), WithoutConfigLines(Run(flags).out)) << line;
  }
  EXPECT_EQ(written, 9) << table.out;
  // Without --emit every candidate's launch is null.
  const Result plain = Run({"compare", "--hf-config", config, "--gpus", "8", "--top", "2", "--format", "json"});
  const nlohmann::json plain_doc = nlohmann::json::parse(plain.out);
  for (const nlohmann::json& k : plain_doc["ranked"]) EXPECT_TRUE(k["launch"].is_null());
}

// ---- seam compare ----

TEST_F(Cli, CompareRanksTheConfigurationsOfAModelOnItsGpus) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/qwen3-30b-a3b.json";
  const Result r =
      Run({"compare", "--hf-config", config, "--gpus", "8", "--nodes", "2", "--hardware", "h200", "--top", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("qwen3-moe on 8 GPUs (2 nodes of 4, h200: 8 x H200 141 GB per node", 0), 0U) << r.out;
  EXPECT_NE(
      r.out.find("\nrank  tok/s/GPU  tok/s/user   batch   TTFT ms   TPOT ms  decode us  bytes/token  network B/t  "
                 " GB/GPU  fits  configuration\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n   3  "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\n   4  "), std::string::npos) << r.out;
  const Result j = Run({"compare", "--hf-config", config, "--gpus", "8", "--nodes", "2", "--hardware", "h200", "--top",
                        "3", "--format", "json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["ranked"].size(), 3U);
  int rejected = 0;
  for (const auto& [reason, n] : doc["rejected"].items()) rejected += n.get<int>();
  EXPECT_EQ(doc["considered"].get<int>(), doc["bound"].get<int>() + doc["merged"].get<int>() + rejected);
  // The table's first configuration is the JSON's.
  EXPECT_NE(r.out.find(doc["ranked"][0]["flags"].get<std::string>()), std::string::npos);
  // From an engine's command line: its model, every configuration of it.
  const Result e = Run(
      {"compare", "--gpus", "8", "--top", "1", "--engine", "sglang", "--", "--model-path", config, "--tp-size", "8"});
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_EQ(e.out.rfind("qwen3-moe on 8 GPUs", 0), 0U) << e.out;
  // ... and where the engine's own configuration ranks among them.
  EXPECT_NE(e.out.find("\nthe SGLang configuration (--tp 8) ranks "), std::string::npos) << e.out;
  const Result dp = Run({"compare", "--top", "1", "--engine", "sglang", "--", "--model-path", config, "--tp-size", "4",
                         "--dp-size", "2"});
  ASSERT_EQ(dp.code, 0) << dp.err;
  EXPECT_EQ(dp.out.rfind("qwen3-moe on 8 GPUs", 0), 0U) << "--gpus defaults to the engine's: " << dp.out;
  EXPECT_NE(dp.out.find("\nthe SGLang configuration (--tp 4, x2 replicas) ranks "), std::string::npos) << dp.out;
}

// A request's lengths say the prefill and the cache, and a batch given is
// not searched: the flags that would contradict them are refused.
TEST_F(Cli, CompareRefusesTargetsWithAFixedBatchAndLengthsWithTheirOldFlags) {
  ExpectRefused({
      {{"compare", "llama", "--tpot", "50", "--batch", "8"}, "--batch excludes --tpot"},
      {{"compare", "llama", "--ttft", "500", "--batch", "8"}, "--batch excludes --ttft"},
      {{"compare", "llama", "--isl", "1000", "--prefill", "8"}, "--prefill excludes --isl"},
      {{"compare", "llama", "--osl", "1000", "--context", "8"}, "--osl excludes --context"},
      {{"compare", "llama", "--tpot", "0"}, "--tpot: '0' is not a number of milliseconds above 0 and at most a day"},
      {{"compare", "llama", "--ttft", "fast"}, "--ttft: 'fast' is not a number of milliseconds above 0"},
  });
  // With them: each candidate's best batch, said in the header.
  const Result r = Run({"compare", "--hf-config", std::string(SEAM_HF_CONFIGS) + "/llama-3.1-8b.json", "--gpus", "2",
                        "--isl", "500", "--osl", "200", "--tpot", "30", "--top", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("decode: batch: the best within the targets and memory; prefill: 500 tokens; cache: 600 tokens "
                       "a sequence; 200 output tokens a request; TPOT <= 30.0 ms;"),
            std::string::npos)
      << r.out;
}

// --explain K: candidate K's decode step taken apart; its work and its
// collectives add up to the step the ranking printed.
TEST_F(Cli, ExplainTakesACandidatesDecodeStepApartIntoWhatTheRankingSums) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/llama-3.1-70b.json";
  const Result r =
      Run({"compare", "--hf-config", config, "--gpus", "8", "--top", "3", "--explain", "1", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  const nlohmann::json& e = doc["explain"];
  ASSERT_EQ(e["rank"], 1);
  double step = 0;
  for (const nlohmann::json& rank : e["ranks"]) {
    double work = 0;
    for (const nlohmann::json& p : rank["work"]) work += p["seconds"].get<double>();
    EXPECT_NEAR(work, rank["work_seconds"].get<double>(), 1e-12);
    step += rank["work_seconds"].get<double>() + rank["collective_seconds"].get<double>();
  }
  // TP8's ranks are alike: the first TP rank's step is the busiest's.
  EXPECT_NEAR(step, doc["ranked"][0]["step_seconds"].get<double>(), 1e-9);
  // 80 attention and 80 dense FFN stages, the LM head; 160 boundary all-reduces.
  std::map<std::string, int> counts;
  for (const nlohmann::json& p : e["ranks"][0]["work"]) counts[p["what"]] = p["count"];
  EXPECT_EQ(counts, (std::map<std::string, int>{{"attention", 80}, {"dense-ffn", 80}, {"lm-head", 1}}));
  ExpectRefused({{{"compare", "--hf-config", config, "--gpus", "8", "--explain", "1000"},
                  "--explain 1000: only 113 configurations bind"}});
}

// A pipeline's step in --explain: each rank's pass of one of its
// micro-batches, the step the longer of one pass through every rank and the
// slowest rank's passes of all, each rank idle for the rest.
TEST_F(Cli, ExplainShowsAPipelinesMicroBatchesAndEachRanksIdleTime) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/llama-3.1-70b.json";
  const std::vector<std::string> base = {"compare", "--hf-config", config, "--gpus", "8", "--batch", "256"};
  std::vector<std::string> all = base;
  all.insert(all.end(), {"--top", "1000", "--format", "json"});
  const Result r = Run(all);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  size_t k = 0;
  while (k < doc["ranked"].size() && doc["ranked"][k]["flags"] != "--tp 4 --pp 2") ++k;
  ASSERT_LT(k, doc["ranked"].size());
  std::vector<std::string> explain = base;
  explain.insert(explain.end(), {"--explain", std::to_string(k + 1), "--format", "json"});
  const Result e = Run(explain);
  ASSERT_EQ(e.code, 0) << e.err;
  const nlohmann::json x = nlohmann::json::parse(e.out)["explain"];
  ASSERT_EQ(x["micro_batches"], 2);
  ASSERT_EQ(x["ranks"].size(), 2U);
  double sum = 0, slowest = 0;
  for (const nlohmann::json& rank : x["ranks"]) {
    const double pass = rank["pass_seconds"].get<double>();
    EXPECT_NEAR(pass, rank["work_seconds"].get<double>() + rank["collective_seconds"].get<double>(), 1e-12);
    sum += pass;
    slowest = std::max(slowest, pass);
  }
  const double step = x["step_seconds"].get<double>();
  EXPECT_DOUBLE_EQ(step, std::max(sum, 2 * slowest));
  EXPECT_DOUBLE_EQ(step, doc["ranked"][k]["step_seconds"].get<double>());
  for (const nlohmann::json& rank : x["ranks"]) {
    EXPECT_NEAR(rank["idle_seconds"].get<double>(), step - 2 * rank["pass_seconds"].get<double>(), 1e-12);
  }
  const Result table = Run({"compare", "--hf-config", config, "--gpus", "8", "--batch", "256", "--top", "1",
                            "--explain", std::to_string(k + 1)});
  EXPECT_NE(table.out.find("(--tp 4 --pp 2) at batch 256, a decode step of"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(", 2 micro-batches through the pipeline:\npipeline rank 0: work "), std::string::npos)
      << table.out;
}

// Published deployments (tests/compare/rankings.json, each an entry of
// published.json) under their published workloads: where the published
// layout ranks among seam's distinct layouts (a layout is its TP,
// attention DP, dense-FFN width, MoE mode, expert group, pipeline and
// replicas: the boundary reduction, input scattering and the LM head's
// place are seam's own choices within it). Each is in the top 3, or ranks
// below it for the reason its entry gives and must still (a model that
// comes closer moves it to "top3").
TEST_F(Cli, EachPublishedLayoutRanksInSeamsTopThreeOrItsEntrySaysWhyNot) {
  std::ifstream in(std::string(SEAM_ROOT) + "/tests/compare/rankings.json");
  const nlohmann::json checks = nlohmann::json::parse(in);
  ASSERT_GE(checks.size(), 7U);
  std::string table;
  for (const nlohmann::json& check : checks) {
    std::vector<std::string> args = {"compare", "--format", "json", "--top", "100000"};
    for (std::string a : check["args"]) {
      if (a.starts_with("configs/") || a.starts_with("tests/")) a = fmt::format("{}/{}", SEAM_ROOT, a);
      args.push_back(a);
    }
    const Result r = Run(args);
    ASSERT_EQ(r.code, 0) << check["id"] << ": " << r.err;
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    std::vector<std::string> layouts;  // distinct, best first
    int rank = 0;
    for (const nlohmann::json& k : doc["ranked"]) {
      const nlohmann::json& c = k["config"];
      const std::string layout =
          fmt::format("{} {} {} {} {} {} x{}", c["tp"].dump(), c["attn_dp"].dump(), c["dense_tp"].dump(),
                      c["moe"].dump(), c["ep"].dump(), c["pp"].dump(), k["replicas"].dump());
      if (std::find(layouts.begin(), layouts.end(), layout) == layouts.end()) layouts.push_back(layout);
      std::string flags = k["flags"];
      for (const std::string own : {" --reduction rsv", " --reduction rs+rsv", " --reduction rs", " --input-scattered",
                                    " --dp-lm-head", " --dense-tp 1"}) {
        if (const size_t at = flags.find(own); at != std::string::npos) flags.erase(at, own.size());
      }
      if (rank == 0 && flags == check["layout"] && k["replicas"] == check["replicas"]) {
        rank = static_cast<int>(layouts.size());
        EXPECT_TRUE(k["fits"].get<bool>()) << check["id"];
      }
    }
    ASSERT_GT(rank, 0) << check["id"] << ": " << check["layout"] << " is not among the ranked";
    table += fmt::format("{:<40} {:<24} x{:<3} rank {}\n", check["id"].get<std::string>(),
                         check["layout"].get<std::string>(), check["replicas"].get<int>(), rank);
    if (check["expect"] == "top3") {
      EXPECT_LE(rank, 3) << check["id"] << ": " << check["why"];
    } else {
      EXPECT_GT(rank, 3) << check["id"] << " now ranks in the top 3: move it to \"top3\"";
    }
  }
  std::cout << table;
}

// An engine line fills the memory as that engine does, at its own share
// where it gives one; without a line, as vLLM does.
TEST_F(Cli, CompareFillsTheMemoryAsTheEngineLineSays) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/llama-3.1-8b.json";
  const Result own = Run({"compare", "--hf-config", config, "--gpus", "2", "--top", "1"});
  ASSERT_EQ(own.code, 0) << own.err;
  EXPECT_NE(own.out.find("\nmemory: as vLLM fills it (0.9 of the GPU, less activations and all-to-all buffers)\n"),
            std::string::npos)
      << own.out;
  const Result sglang = Run({"compare", "--top", "1", "--format", "json", "--engine", "sglang", "--", "--model-path",
                             config, "--tp", "2", "--mem-fraction-static", "0.5", "--chunked-prefill-size", "4096"});
  ASSERT_EQ(sglang.code, 0) << sglang.err;
  const nlohmann::json doc = nlohmann::json::parse(sglang.out);
  EXPECT_EQ(doc["memory_fill"], "sglang");
  EXPECT_DOUBLE_EQ(doc["ranked"][0]["usable_bytes_per_gpu"].get<double>(), 0.5 * 81559.0 * 1048576);
  const Result text = Run({"compare", "--top", "1", "--engine", "sglang", "--", "--model-path", config, "--tp", "2",
                           "--mem-fraction-static", "0.5", "--chunked-prefill-size", "4096"});
  EXPECT_NE(text.out.find("memory: as SGLang fills it (0.5 of the GPU for weights and caches, prefill chunks of "
                          "4096)"),
            std::string::npos)
      << text.out;
}

// compare does not rank context-parallel layouts: an engine line with CP is
// said to be outside its grid, with why, never priced as something else.
TEST_F(Cli, CompareSaysAContextParallelEngineLineIsOutsideItsGrid) {
  const std::string config = std::string(SEAM_HF_CONFIGS) + "/llama-3.1-8b.json";
  const Result r = Run({"compare", "--top", "1", "--engine", "sglang", "--", "--model-path", config, "--tp", "8",
                        "--attn-cp-size", "2", "--enable-prefill-cp", "--cp-strategy", "zigzag"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("the SGLang configuration (--tp 8 --cp 2) is not among the configurations of these GPUs: "
                       "compare does not rank context-parallel layouts yet"),
            std::string::npos)
      << r.out;
}

TEST_F(Cli, DisaggregateNeedsRequestsLengths) {
  ExpectRefused({{{"compare", "llama", "--disaggregate"},
                  "disaggregated serving is priced for requests: give their lengths (--isl and --osl)"}});
}

TEST_F(Cli, CompareRefusesAnUnknownObjective) {
  ExpectRefused({{{"compare", "llama", "--objective", "cheap"},
                  "--objective: 'cheap' is not an objective: throughput (output tokens a second per GPU), latency "
                  "(per user) or ttft (time to the first token)"}});
}

TEST_F(Cli, CompareRefusesBadHardwareAndGpus) {
  const std::vector<BadInput> cases = {
      {{"compare", "llama", "--hardware", "gb300"},
       "unknown hardware 'gb300'; the built-in ones are h100, h200, b200, gb200, pcie, or give a JSON file"},
      {{"compare", "llama", "--gpus", "12", "--nodes", "5"}, "--gpus 12 does not split over --nodes 5"},
      {{"compare", "llama", "--gpus", "16"}, "16 GPUs on 1 node(s) is 16 a node, more than the 8 a h100 node has"},
      {{"compare", "llama", "--gpus", "2048"}, "--gpus: '2048' is not an integer from 1 to 1024"},
      {{"compare", "llama", "--hardware", "missing.json"}, "missing.json"},
      {{"compare", "llama", "--weight-dtype", "int4"},
       "--weight-dtype: 'int4' is not a weight dtype: bf16, fp16, "
       "fp8 or fp32"},
  };
  for (const BadInput& c : cases) {
    const Result r = Run(c.args);
    EXPECT_EQ(r.code, 2) << c.args[1] << " " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace
}  // namespace seam
