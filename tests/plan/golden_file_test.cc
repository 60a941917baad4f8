// The corpus's own machinery: a subject file reads back to the outcomes it was
// written from (back-references included), every malformed file is an error
// naming file:line, configuration names read back strictly, and the leaf
// comparison names the path of every differing leaf.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "corpus.h"

namespace seam::golden {
namespace {

const Subject& SubjectNamed(const std::string& name) {
  for (const Subject& s : Subjects()) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no subject " + name);
}

Scenario Named(const std::string& subject, const std::string& config) {
  Expected<ParallelConfig> cfg = ParseConfigName(config);
  if (!cfg) throw std::runtime_error(cfg.error().message);
  return {subject + " " + config, *cfg};
}

std::vector<Recorded> BindAll(const Subject& s, const std::vector<std::string>& configs) {
  const Model m = s.make();
  std::vector<Recorded> out;
  for (const std::string& c : configs) {
    const Scenario sc = Named(s.name, c);
    out.push_back({sc.name, BindScenario(m, sc)});
  }
  return out;
}

// Four scenarios: a plan, the same plans under another reduction, a rejection, a pipeline.
const std::vector<std::string> kConfigs = {"tp2 ar pp1", "tp2 rs pp1", "tp4 dense-tp1 input-scattered ar pp1",
                                           "tp4 attn-dp2 rs pp2 1+3"};

TEST(GoldenFile, ASubjectFileReadsBackToTheOutcomesItWasWrittenFrom) {
  const Subject& llama = SubjectNamed("llama");
  const std::vector<Recorded> bound = BindAll(llama, kConfigs);
  ASSERT_FALSE(bound[2].outcome.ok());
  const std::string text = WriteSubjectFile(llama, bound);
  EXPECT_NE(text.find("scenario llama tp2 rs pp1\nsame-as llama tp2 ar pp1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("scenario llama tp4 dense-tp1 input-scattered ar pp1\nrejected stage 1 (dense-ffn, layer 0): "),
            std::string::npos);
  Expected<std::vector<Recorded>> back = ReadSubjectFile(text, "llama.plans");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), bound.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    EXPECT_EQ((*back)[i].name, bound[i].name);
    EXPECT_EQ(LeafDifferences((*back)[i].outcome, bound[i].outcome, 10), std::vector<std::string>{}) << bound[i].name;
  }
  // The back-reference takes its own configuration, not the one it names.
  EXPECT_EQ((*back)[1].outcome->front().config().reduction, Reduction::kRs);
}

TEST(GoldenFile, RejectionsKeepNewlinesAndBackslashes) {
  const Subject& llama = SubjectNamed("llama");
  const std::vector<Recorded> recorded = {{"llama tp2 ar pp1", Unsupported("two\nlines \\ and \\n")}};
  const std::string text = WriteSubjectFile(llama, recorded);
  EXPECT_NE(text.find("rejected two\\nlines \\\\ and \\\\n\n"), std::string::npos) << text;
  Expected<std::vector<Recorded>> back = ReadSubjectFile(text, "f");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ((*back)[0].outcome.error().message, "two\nlines \\ and \\n");
}

struct BadFile {
  std::string name;
  std::string text;
  std::string message;
};

TEST(GoldenFile, EveryMalformedFileIsAnErrorNamingTheLine) {
  const std::string plan =
      "plan llama hidden=64 streams=1 vocab=0 act=bf16 dispatch=bf16 tp=2 attn_dp=1 dense_tp=2 moe=tp ep=2 "
      "dp_lm_head=no reduction=ar "
      "scattered=no pp=1 split=- pp_rank=0 layers=0..4\n";
  const std::vector<BadFile> bad = {
      {"empty", "", "f:1: expected 'subject NAME' first"},
      {"no subject", "scenario llama tp2 ar pp1\n", "f:1: expected 'subject NAME' first"},
      {"stray line", "subject llama\nplan llama\n", "f:2: expected 'scenario NAME', got 'plan llama'"},
      {"other subject", "subject llama\nscenario qwen3 tp2 ar pp1\nrejected x\n",
       "f:2: scenario 'qwen3 tp2 ar pp1' is not one of subject 'llama'"},
      {"twice", "subject llama\nscenario llama tp2 ar pp1\nrejected x\nscenario llama tp2 ar pp1\nrejected x\n",
       "f:4: scenario 'llama tp2 ar pp1' is here twice"},
      {"bad config", "subject llama\nscenario llama tp2 xx ar pp1\nrejected x\n",
       "f:2: configuration 'tp2 xx ar pp1': expected a reduction (ar, rs, rsv or rs+rsv), got 'xx'"},
      {"not canonical", "subject llama\nscenario llama tp2 dense-tp2 ar pp1\nrejected x\n",
       "f:2: configuration 'tp2 dense-tp2 ar pp1' is not written as 'tp2 ar pp1'"},
      {"nothing recorded", "subject llama\nscenario llama tp2 ar pp1\n# only a comment\n",
       "f:2: scenario 'llama tp2 ar pp1' records nothing"},
      {"unknown same-as", "subject llama\nscenario llama tp2 ar pp1\nsame-as llama tp2 rs pp1\n",
       "f:3: same-as 'llama tp2 rs pp1' names no earlier scenario with plans"},
      {"same-as a rejection",
       "subject llama\nscenario llama tp2 ar pp1\nrejected x\nscenario llama tp2 rs pp1\nsame-as llama tp2 ar pp1\n",
       "f:5: same-as 'llama tp2 ar pp1' names no earlier scenario with plans"},
      {"same-as other axes",
       "subject llama\nscenario llama tp2 ar pp1\n" + plan +
           "line ordinary\n  end final\n    arrives value=full residual=full\n"
           "scenario llama tp4 attn-dp2 ar pp1\nsame-as llama tp2 ar pp1\n",
       "f:8: same-as 'llama tp2 ar pp1' names a scenario whose rows are sharded over other axes"},
      {"more after same-as", "subject llama\nscenario llama tp2 ar pp1\nrejected x\nrejected y\n",
       "f:4: expected one line after 'same-as' or 'rejected'"},
      {"bad escape", "subject llama\nscenario llama tp2 ar pp1\nrejected a\\tb\n",
       "f:3: a rejection escapes only \\\\ and \\n"},
      {"bad plan", "subject llama\n# a comment\nscenario llama tp2 ar pp1\n" + plan + "line nonsense\n",
       "f:5: unknown batch variant 'nonsense'; expected one of: ordinary, input-scattered"},
  };
  for (const BadFile& b : bad) {
    Expected<std::vector<Recorded>> r = ReadSubjectFile(b.text, "f");
    ASSERT_FALSE(r.ok()) << b.name;
    EXPECT_EQ(r.error().code, ErrorCode::kMalformed) << b.name;
    EXPECT_EQ(r.error().message, b.message) << b.name;
  }
}

TEST(GoldenFile, ConfigurationNamesAreReadStrictly) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "configuration '': expected tpN, got 'the end'"},
      {"tp0 ar pp1", "configuration 'tp0 ar pp1': expected tpN, got 'tp0'"},
      {"tp2 ar", "configuration 'tp2 ar': expected ppN, got 'the end'"},
      {"tp2 ar pp2", "configuration 'tp2 ar pp2': expected a layer split like 1+3, got 'the end'"},
      {"tp2 ar pp2 1+x", "configuration 'tp2 ar pp2 1+x': expected a layer split like 1+3, got '1+x'"},
      {"tp2 ar pp1 extra", "configuration 'tp2 ar pp1 extra': expected nothing more, got 'extra'"},
      {"tp2 input-scattered a2a ar pp1",
       "configuration 'tp2 input-scattered a2a ar pp1': expected a reduction (ar, rs, rsv or rs+rsv), got 'a2a'"},
  };
  for (const auto& [name, message] : bad) {
    Expected<ParallelConfig> cfg = ParseConfigName(name);
    ASSERT_FALSE(cfg.ok()) << name;
    EXPECT_EQ(cfg.error().message, message);
  }
  Expected<ParallelConfig> cfg = ParseConfigName("tp8 attn-dp2 dense-tp1 a2a rs+rsv pp2 1+3");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(*cfg, (ParallelConfig{.tp = 8,
                                  .attn_dp = 2,
                                  .dense_tp = 1,
                                  .moe = MoeMode::kA2a,
                                  .reduction = Reduction::kRsRsv,
                                  .pp = 2,
                                  .pp_split = {1, 3}}));
}

// A copy of `p` with rank `rank`'s stage at position `pos` of its ordinary line edited.
template <class F>
Pipeline Edited(const Pipeline& p, size_t rank, size_t pos, F edit) {
  Pipeline out = p;
  std::vector<LinePlan> lines = p[rank].lines();
  edit(lines[0].stages[pos]);
  out[rank] = Plan(p[rank].header(), lines);
  return out;
}

TEST(GoldenFile, LeafDifferencesNameThePathAndBothValues) {
  const Subject& llama = SubjectNamed("llama");
  const Expected<Pipeline> bound = BindAll(llama, {"tp4 attn-dp2 rs pp2 1+3"})[0].outcome;
  ASSERT_TRUE(bound.ok());
  ASSERT_EQ((*bound)[1].lines()[0].stages[1].index, 3);
  const Pipeline stored = Edited(*bound, 1, 1, [](StagePlan& s) {
    s.entry[0].rows_out = Rows::FromAxes(true, true);
    s.decl.top_k = 9;
    s.exit.push_back(s.entry[0]);
    s.departs.residual.reset();
  });
  EXPECT_EQ(
      LeafDifferences(stored, bound, 10),
      (std::vector<std::string>{
          "rank 1 / ordinary / stage 3 / decl.top_k: stored 9, bound 0",
          fmt::format("rank 1 / ordinary / stage 3 / entry[0].rows_out: stored slice, bound {}",
                      Name(bound->at(1).lines()[0].stages[1].entry[0].rows_out)),
          fmt::format("rank 1 / ordinary / stage 3 / exit.size: stored {}, bound {}",
                      bound->at(1).lines()[0].stages[1].exit.size() + 1, bound->at(1).lines()[0].stages[1].exit.size()),
          "rank 1 / ordinary / stage 3 / departs.residual: stored none, bound attn",
      }));
  EXPECT_EQ(LeafDifferences(stored, bound, 2).size(), 2u);  // the limit
  EXPECT_EQ(LeafDifferences(bound, bound, 10), std::vector<std::string>{});
}

TEST(GoldenFile, LeafDifferencesOfRejections) {
  const Subject& llama = SubjectNamed("llama");
  const Expected<Pipeline> bound = BindAll(llama, {"tp2 ar pp1"})[0].outcome;
  const Expected<Pipeline> no = Unsupported("no");
  EXPECT_EQ(LeafDifferences(no, bound, 10),
            std::vector<std::string>{"outcome: stored rejected 'no', bound plans of 1 ranks"});
  EXPECT_EQ(LeafDifferences(bound, no, 10),
            std::vector<std::string>{"outcome: stored plans of 1 ranks, bound rejected 'no'"});
  EXPECT_EQ(LeafDifferences(no, Expected<Pipeline>(Unsupported("other")), 10),
            std::vector<std::string>{"outcome: stored rejected 'no', bound rejected 'other'"});
  EXPECT_EQ(LeafDifferences(no, Expected<Pipeline>(InvalidArgument("no")), 10), std::vector<std::string>{});
}

}  // namespace
}  // namespace seam::golden
