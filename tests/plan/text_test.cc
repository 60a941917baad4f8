// Plans as compact text: every bound plan and pipeline reads back to an equal
// value, a hand-written plan reads as written, and every malformed input is a
// Malformed error naming file:line and what was expected there.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seam/bind.h"
#include "seam/plan_io.h"
#include "testing.h"

namespace seam {
namespace {

const std::vector<ParallelConfig> kConfigs = {
    {.tp = 1},
    {.tp = 2},
    {.tp = 4, .attn_dp = 2},
    {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .reduction = Reduction::kRs},
    {.tp = 8, .attn_dp = 8, .moe = MoeMode::kA2a, .reduction = Reduction::kRsv},
    {.tp = 4, .input_scattered = true, .reduction = Reduction::kRsRsv},
    {.tp = 4, .attn_dp = 2, .dense_tp = 2, .reduction = Reduction::kRsRsv, .pp = 2, .pp_split = {1, 3}},
    {.tp = 2, .moe = MoeMode::kA2a, .pp = 2},
};

// Every catalogue model under every configuration above that binds.
TEST(PlanText, EveryCataloguePipelineReadsBackToAnEqualPipeline) {
  int compared = 0;
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    for (const ParallelConfig& cfg : kConfigs) {
      Expected<Pipeline> p = BindPipeline(m, cfg);
      if (!p) continue;
      const std::string text = ToText(*p);
      Expected<Pipeline> back = PipelineFromText(text);
      ASSERT_TRUE(back.ok()) << e.name << " " << Describe(cfg) << ": " << back.error().message;
      EXPECT_TRUE(*back == *p) << e.name << " " << Describe(cfg) << "\n"
                               << fmt::format("{}", fmt::join(Diff(*p, *back), "\n"));
      EXPECT_EQ(ToText(*back), text) << e.name;  // the writer is a fixed point
      ++compared;
    }
  }
  EXPECT_GE(compared, 90);  // 14 models x 8 configurations, less the rejections
}

TEST(PlanText, OnePlanReadsBackThroughPlanFromText) {
  const Plan p = testing::MustBind(LlamaModel(2), {.tp = 4, .attn_dp = 2, .dense_tp = 1});
  Expected<Plan> back = PlanFromText(ToText(p));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(*back == p);
}

// Facts no bound plan has (a quoted model name, every declared field, a
// hyper-connection value) read back too.
TEST(PlanText, UnusualFactsReadBack) {
  const StageDecl every{.kind = StageKind::kAttention,
                        .attention_sum = AttentionSum::kReducesItself,
                        .gathers_input = true,
                        .update = UpdateKind::kHyperConnection,
                        .read = ReadKind::kAllRows,
                        .gather_width = 3,
                        .top_k = 4,
                        .a2a = false,
                        .window = 5,
                        .kv_heads = 6,
                        .ffn_width = 7};
  StagePlan s{.index = 2, .layer = 1, .decl = every};
  s.arrives = {.value = ValueFacts{Rows::Full(), Owed::kTp, UpdateKind::kHyperConnection}, .residual = std::nullopt};
  s.departs = {.value = std::nullopt, .residual = Rows::Full()};
  s.exit = {{.kind = StepKind::kAllGather,
             .operand = Operand::kResidual,
             .group = Group::kDp,
             .rows_in = Rows::Full(),
             .rows_out = Rows::Full(),
             .owed_before = Owed::kTp,
             .owed_after = Owed::kTp,
             .width = 9}};
  LinePlan line{.variant = Variant::kInputScattered, .stages = {s}};
  line.end.kind = EndKind::kSend;
  const Plan p({.model = "a \"quoted\"\\ name=1\n\xc3\xa9", .hidden = 8, .config = {.tp = 2, .dense_tp = 0}}, {line});
  const std::string text = ToText(p);
  EXPECT_NE(text.find("plan \"a\\x20\\x22quoted\\x22\\x5c\\x20name\\x3d1\\x0a\\xc3\\xa9\" hidden=8"), std::string::npos)
      << text;
  Expected<Plan> back = PlanFromText(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(*back == p) << text << "\n" << ToText(*back);
}

constexpr std::string_view kHandWritten = R"(# a plan written by hand
plan tiny hidden=8 streams=1 vocab=0 act=bf16 dispatch=bf16 tp=2 attn_dp=1 dense_tp=2 moe=tp ep=2 dp_lm_head=no reduction=ar scattered=no pp=1 split=- pp_rank=0 layers=0..1
line ordinary
  stage 0 layer 0 attention
    arrives value=full residual=none
    runs input=full residual=full
    entry start-residual value full w=8
    entry norm residual full w=8

    compute compute input full owes=-->attn_tp w=8
    departs value=full owes=attn_tp residual=full
  end final
    arrives value=full owes=attn_tp residual=full
    step ar+add+norm(attn_tp) value full owes=attn_tp->- w=8
)";

TEST(PlanText, AHandWrittenPlanReadsAsWritten) {
  Expected<Plan> p = PlanFromText(kHandWritten, "tiny.plan");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->header().model, "tiny");
  EXPECT_EQ(p->config().tp, 2);
  ASSERT_EQ(p->lines().size(), 1u);
  const LinePlan& line = p->lines()[0];
  ASSERT_EQ(line.stages.size(), 1u);
  const StagePlan& s = line.stages[0];
  EXPECT_EQ(s.decl, StageDecl{.kind = StageKind::kAttention});
  EXPECT_EQ(s.arrives, (Boundary{.value = ValueFacts{Rows::Full()}, .residual = std::nullopt}));
  ASSERT_EQ(s.entry.size(), 2u);
  EXPECT_EQ(s.entry[0], (Step{.kind = StepKind::kStartResidual, .operand = Operand::kValue, .width = 8}));
  ASSERT_EQ(s.compute.size(), 1u);
  EXPECT_EQ(s.compute[0].owed_before, Owed::kNothing);
  EXPECT_EQ(s.compute[0].owed_after, Owed::kAttnTp);
  EXPECT_EQ(s.departs.value->owed, Owed::kAttnTp);
  ASSERT_EQ(line.end.steps.size(), 1u);
  EXPECT_EQ(line.end.steps[0], (Step{.kind = StepKind::kAllReduceAddNorm,
                                     .operand = Operand::kValue,
                                     .group = Group::kAttnTp,
                                     .owed_before = Owed::kAttnTp,
                                     .width = 8}));
}

// kHandWritten with line `number` (1-based) replaced by `line`.
std::string WithLine(int number, std::string_view line) {
  std::string text(kHandWritten);
  size_t begin = 0;
  for (int i = 1; i < number; ++i) begin = text.find('\n', begin) + 1;
  const size_t end = text.find('\n', begin);
  return text.replace(begin, end - begin, line);
}

struct BadText {
  std::string name;
  std::string text;
  std::string message;
};

std::vector<BadText> BadTexts() {
  const std::string h =
      "plan tiny hidden=8 streams=1 vocab=0 act=bf16 dispatch=bf16 tp=2 attn_dp=1 dense_tp=2 moe=tp ep=2 dp_lm_head=no "
      "reduction=ar scattered=no pp=1 split=- "
      "pp_rank=0";
  return {
      {"empty", "", "t:1: no plan here; expected a line 'plan MODEL ...'"},
      {"only comments", "# nothing\n\n", "t:1: no plan here; expected a line 'plan MODEL ...'"},
      {"not a plan", "line ordinary\n", "t:1: expected a line 'plan MODEL ...', got 'line'"},
      {"huge number", WithLine(2, h + " layers=0..99999999999999999999"),
       "t:2: last layer 99999999999999999999 is out of range (0..1000000000)"},
      {"just over the cap", WithLine(2, h + " layers=0..1000000001"),
       "t:2: last layer 1000000001 is out of range (0..1000000000)"},
      {"negative", WithLine(7, "    entry start-residual value full w=-8"), "t:7: width '-8' is not a number"},
      {"not a number", WithLine(7, "    entry start-residual value full w=8x"), "t:7: width '8x' is not a number"},
      {"zero tp",
       WithLine(2,
                "plan tiny hidden=8 streams=1 vocab=0 act=bf16 dispatch=bf16 tp=0 attn_dp=1 dense_tp=2 moe=tp ep=0 "
                "dp_lm_head=no reduction=ar scattered=no pp=1 "
                "split=- pp_rank=0 layers=0..1"),
       "t:2: tp 0 is out of range (1..1000000000)"},
      {"unknown key", WithLine(7, "    entry start-residual value full w=8 colour=red"),
       "t:7: unknown key 'colour'; expected: owes, w"},
      {"duplicated key", WithLine(7, "    entry start-residual value full w=8 w=8"), "t:7: 'w' given twice"},
      {"duplicated header key", WithLine(2, h + " layers=0..1 tp=2"), "t:2: 'tp' given twice"},
      {"missing key", WithLine(7, "    entry start-residual value full"), "t:7: missing 'w='"},
      {"missing header key", WithLine(2, h), "t:2: missing 'layers='"},
      {"truncated step", WithLine(7, "    entry start-residual value"),
       "t:7: truncated line; expected 'SECTION KIND[(GROUP)] OPERAND ROWS[->ROWS] [owes=O[->O]] w=WIDTH'"},
      {"truncated stage", WithLine(4, "  stage 0 layer"),
       "t:4: truncated line; expected 'stage INDEX layer LAYER KIND [key=value ...]'"},
      {"not key=value", WithLine(5, "    arrives value=full residual"), "t:5: expected key=value, got 'residual'"},
      {"unknown step", WithLine(7, "    entry frobnicate value full w=8"),
       "t:7: unknown step 'frobnicate'; expected one of: ar, rs, rsv, ag, a2a-dispatch, a2a-combine, slice, "
       "start-residual, add, norm, ar+add+norm, compute, embed, lm-head, ag-vocab, leave, send, recv, ag-kv, ag-q, "
       "a2a-lse"},
      {"unknown group", WithLine(14, "    step ar+add+norm(world) value full owes=attn_tp->- w=8"),
       "t:14: unknown group 'world'; expected one of: attn_tp, dp, tp, pp, ep, cp, dcp"},
      {"unclosed group", WithLine(14, "    step ar+add+norm(attn_tp value full owes=attn_tp->- w=8"),
       "t:14: step 'ar+add+norm(attn_tp' has no closing ')'"},
      {"unknown rows", WithLine(7, "    entry start-residual value half w=8"),
       "t:7: unknown row layout 'half'; expected one of: full, attn, slice"},
      {"unknown owed", WithLine(10, "    compute compute input full owes=-->dp w=8"),
       "t:10: unknown owed sum 'dp'; expected one of: -, attn_tp, tp"},
      {"unknown kind", WithLine(4, "  stage 0 layer 0 transformer"),
       "t:4: unknown stage kind 'transformer'; expected one of: attention, mixer, dense-ffn, sparse-ffn, no-op, "
       "linear"},
      {"bad yes/no", WithLine(4, "  stage 0 layer 0 attention gathers_input=maybe"),
       "t:4: gathers_input=maybe must be yes or no"},
      {"owes without value", WithLine(5, "    arrives value=none owes=tp residual=none"),
       "t:5: owes= and update= need a value (value=none)"},
      {"missing runs", WithLine(6, "# no runs line"), "t:7: expected 'runs', got 'entry'"},
      {"steps out of order", WithLine(7, "    exit start-residual value full w=8"),
       "t:8: expected 'entry', 'compute', 'exit' or 'departs' (in this order), got 'entry'"},
      {"after departs", WithLine(12, "    entry norm residual full w=8"),
       "t:12: expected nothing after 'departs' in a stage, got 'entry'"},
      {"no end", std::string(kHandWritten.substr(0, kHandWritten.find("  end final"))),
       "t:11: expected 'stage' or 'end' under the 'line' of line 3"},
      {"wrong indent", WithLine(5, "   arrives value=full residual=none"),
       "t:5: expected 'arrives' under the 'stage' of line 4"},
      {"deep indent", WithLine(5, "      arrives value=full residual=none"),
       "t:5: expected 4 spaces of indentation, got 6"},
      {"tab", WithLine(5, "\tarrives value=full residual=none"),
       "t:5: a tab or carriage return at column 1; use spaces and \\n line ends"},
      {"carriage return", WithLine(3, "line ordinary\r"),
       "t:3: a tab or carriage return at column 14; use spaces and \\n line ends"},
      {"variant twice",
       std::string(kHandWritten) + std::string(kHandWritten.substr(kHandWritten.find("line ordinary"))),
       "t:15: the plan has this batch variant twice"},
      {"model missing",
       WithLine(2,
                "plan hidden=8 streams=1 vocab=0 act=bf16 dispatch=bf16 tp=2 attn_dp=1 dense_tp=2 moe=tp ep=2 "
                "dp_lm_head=no reduction=ar scattered=no pp=1 "
                "split=- pp_rank=0 layers=0..1"),
       "t:2: expected the model name after 'plan', got 'hidden=8'"},
      {"unclosed quote", WithLine(2, "plan \"tiny " + h.substr(10) + " layers=0..1"),
       "t:2: the model name \"tiny has no closing quote"},
      {"bad escape", WithLine(2, "plan \"ti\\q\" " + h.substr(10) + " layers=0..1"),
       "t:2: the model name \"ti\\q\" has a bad escape; write a byte as \\xHH"},
      {"bad layers", WithLine(2, h + " layers=4"), "t:2: layers=4 must be FIRST..LAST"},
      {"backwards layers", WithLine(2, h + " layers=4..1"), "t:2: layers=4..1 ends before it starts"},
      {"bad split",
       WithLine(2,
                "plan tiny hidden=8 streams=1 vocab=0 act=bf16 dispatch=bf16 tp=2 attn_dp=1 dense_tp=2 moe=tp ep=2 "
                "dp_lm_head=no reduction=ar scattered=no pp=2 "
                "split=1+ pp_rank=0 layers=0..1"),
       "t:2: split '' is not a number"},
      {"invalid config",
       WithLine(2,
                "plan tiny hidden=8 streams=1 vocab=0 act=bf16 dispatch=bf16 tp=4 attn_dp=3 dense_tp=2 moe=tp ep=4 "
                "dp_lm_head=no reduction=ar scattered=no pp=1 "
                "split=- pp_rank=0 layers=0..1"),
       "t:2: tp=4 is not divisible by attn_dp=3; attn_dp must divide tp (divisors of 4: 1, 2, 4)"},
      {"line without variant", WithLine(3, "line"), "t:3: expected 'line VARIANT' (ordinary or input-scattered)"},
      {"unknown variant", WithLine(3, "line special"),
       "t:3: unknown batch variant 'special'; expected one of: ordinary, input-scattered"},
      {"misspelt layer", WithLine(4, "  stage 0 lair 0 attention"),
       "t:4: expected 'layer' as word 3 of 'stage INDEX layer LAYER KIND [key=value ...]'"},
      {"unquoted odd name", WithLine(2, "plan ti\x01ny " + h.substr(10) + " layers=0..1"),
       R"(t:2: model name 'ti\x01ny' needs quotes)"},
      {"unescaped in quotes", WithLine(2, "plan \"ti\\x41\"\"\" " + h.substr(10) + " layers=0..1"),
       "t:2: the model name \"ti\\x41\"\"\" holds an unescaped '\"'"},
      {"end without kind", WithLine(12, "  end"), "t:12: expected 'end KIND' (final or send)"},
      {"unknown end", WithLine(12, "  end later"), "t:12: unknown rank end 'later'; expected one of: final, send"},
      {"stray under end", WithLine(14, "    entry norm residual full w=8"),
       "t:14: expected 'step' or 'head', got 'entry'"},
      {"extra end step word", WithLine(13, "    arrives value=full owes=attn_tp residual=full extra"),
       "t:13: expected key=value, got 'extra'"},
  };
}

TEST(PlanText, EveryMalformedInputIsAnErrorNamingTheLine) {
  for (const BadText& b : BadTexts()) {
    Expected<Pipeline> p = PipelineFromText(b.text, "t");
    ASSERT_FALSE(p.ok()) << b.name;
    EXPECT_EQ(p.error().code, ErrorCode::kMalformed) << b.name;
    EXPECT_EQ(p.error().message, b.message) << b.name;
  }
}

TEST(PlanText, StepCountsAreCapped) {
  std::string text(kHandWritten);
  std::string norms;
  for (int i = 0; i < 65; ++i) norms += "    entry norm residual full w=8\n";
  text.insert(text.find("    compute"), norms);
  Expected<Pipeline> p = PipelineFromText(text, "t");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "t:72: more than 64 entry steps");
}

// Counts are capped before anything grows without bound.
TEST(PlanText, StageRankAndSplitCountsAreCapped) {
  std::string stages;
  for (int i = 0; i <= 10'000; ++i) {
    stages +=
        "  stage 0 layer 0 no-op\n    arrives value=none residual=full\n    runs input=none residual=full\n"
        "    departs value=none residual=full\n";
  }
  std::string text(kHandWritten);
  text.insert(text.find("  stage 0"), stages);
  Expected<Pipeline> p = PipelineFromText(text, "t");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "t:40004: more than 10000 stages");

  std::string ranks;
  for (int i = 0; i <= 1024; ++i) ranks += kHandWritten;
  p = PipelineFromText(ranks, "t");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "t:14338: more than 1024 plans");

  std::string split = "1";
  for (int i = 0; i < 1024; ++i) split += "+1";
  p = PipelineFromText(WithLine(2,
                                "plan tiny hidden=8 streams=1 vocab=0 act=bf16 dispatch=bf16 tp=2 attn_dp=1 dense_tp=2 "
                                "moe=tp ep=2 dp_lm_head=no reduction=ar "
                                "scattered=no pp=2 split=" +
                                    split + " pp_rank=0 layers=0..1"),
                       "t");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "t:2: split= names more than 1024 ranks");
}

// Hostile input: every prefix of a real plan and the plan with any one line
// dropped reads back, or is a Malformed error naming a line; never a crash.
TEST(PlanText, EveryTruncationAndDroppedLineIsAnErrorOrAPlan) {
  Expected<Pipeline> bound = BindPipeline(CatalogueModel("deepseek-v2-lite").value(),
                                          {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .pp = 2});
  ASSERT_TRUE(bound.ok());
  const std::string text = ToText(*bound);
  auto check = [](std::string_view t, std::string_view what) {
    Expected<Pipeline> p = PipelineFromText(t, "t");
    if (!p.ok()) {
      EXPECT_EQ(p.error().code, ErrorCode::kMalformed) << what;
      EXPECT_TRUE(p.error().message.starts_with("t:")) << what << ": " << p.error().message;
    }
  };
  for (size_t n = 0; n < text.size(); n += 7) check(std::string_view(text).substr(0, n), fmt::format("prefix {}", n));
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = text.find('\n', begin) + 1;
    check(text.substr(0, begin) + text.substr(end), fmt::format("without offset {}", begin));
    begin = end;
  }
}

TEST(PlanText, PlanFromTextWantsExactlyOnePlan) {
  Expected<Plan> p = PlanFromText(std::string(kHandWritten) + std::string(kHandWritten), "two.plan");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "two.plan: holds 2 plans; expected one");
}

TEST(PlanText, FirstLineNumbersAnEmbeddedPlan) {
  Expected<Pipeline> p = PipelineFromText(WithLine(7, "    entry start-residual value full w=x"), "corpus", 100);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "corpus:106: width 'x' is not a number");
}

}  // namespace
}  // namespace seam
