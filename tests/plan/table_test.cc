// The plan for people: a table with one row per step and a bytes summary per
// batch variant, and a Graphviz graph with one node per stage (one per stage
// of a layer for a run of repeated layers) whose edges name the collectives
// that cross them.
//
// Bytes are per token of the whole batch per rank: hidden 64 in fp32 is a
// 256-byte row; an all-reduce over n ranks moves 2 (n-1)/n of its buffer, a
// reduce-scatter or all-gather (n-1)/n.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/plan_io.h"
#include "testing.h"

namespace seam {
namespace {

using testing::kFp32Wire;

// The tables below count 4-byte floats (the same numbers as docs/binding.md).
Plan MustBind(const Model& m, const ParallelConfig& cfg) { return testing::MustBind(m, cfg, {.wire = kFp32Wire}); }
using testing::StackOf;

std::vector<std::string> LinesOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool HasLine(const std::string& text, const std::string& line) {
  for (const std::string& l : LinesOf(text)) {
    if (l == line) return true;
  }
  return false;
}

int CountMatches(const std::string& text, const std::regex& re) {
  int n = 0;
  for (const std::string& l : LinesOf(text)) n += std::regex_match(l, re) ? 1 : 0;
  return n;
}

// llama [A F][A F] on tp=2: every sum is fused into the next entry as an
// all-reduce+add+norm over 2 ranks of 64 floats: 2 x (1/2) x 256 = 256 bytes.
// Layer 0 has one (stage 1), layer 1 two (stages 2, 3), the final norm one.
TEST(PlanTable, LlamaOnTp2IsOneRowPerStepWithItsBytes) {
  const std::string table = ToTable(MustBind(LlamaModel(2), {.tp = 2}));
  const std::string expected =
      "llama (tiny shape, hidden 64) on pipeline rank 0 of 1 (layers 0..1)\n"
      "tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar pp=1\n"
      "wire: fp32 activations\n"
      "rows: full = every row of the batch, attn = this attention-DP group's rows, "
      "slice = this rank's 1/attn_tp share of them\n"
      "\n"
      "ordinary batches\n"
      "stage  layer  kind        residual  side     step            operand   group    rows  owes          bytes/token\n"
      "              embedding             start    embed           value     -        full  - -> tp                 0\n"
      "    0      0  attention   full      entry    ar              value     tp       full  tp -> -               256\n"
      "                                    entry    start-residual  value     -        full  -                       0\n"
      "                                    entry    norm            residual  -        full  -                       0\n"
      "                                    compute  compute         input     -        full  - -> attn_tp            0\n"
      "                                    exit     leave           value     attn_tp  full  attn_tp                 0\n"
      "    1      0  dense-ffn   full      entry    ar+add+norm     value     attn_tp  full  attn_tp -> -          256\n"
      "                                    compute  compute         input     -        full  - -> tp                 0\n"
      "                                    exit     leave           value     tp       full  tp                      0\n"
      "    2      1  attention   full      entry    ar+add+norm     value     tp       full  tp -> -               256\n"
      "                                    compute  compute         input     -        full  - -> attn_tp            0\n"
      "                                    exit     leave           value     attn_tp  full  attn_tp                 0\n"
      "    3      1  dense-ffn   full      entry    ar+add+norm     value     attn_tp  full  attn_tp -> -          256\n"
      "                                    compute  compute         input     -        full  - -> tp                 0\n"
      "                                    exit     leave           value     tp       full  tp                      0\n"
      "              final-norm            final    ar+add+norm     value     tp       full  tp -> -               256\n"
      "              lm-head               head     lm-head         input     -        full  -                       0\n"
      "                                    head     ag-vocab        logits    tp       full  -                     512\n"
      "bytes per token per rank: layers 0..1: 512 each, final norm: 256, lm head: 512; total 1792\n";
  EXPECT_EQ(table, expected);
}

TEST(PlanTable, HeaderRowFinalNormRowAndBytesSummaryAreExact) {
  const std::string table = ToTable(MustBind(LlamaModel(2), {.tp = 2}));
  EXPECT_TRUE(HasLine(table, "stage  layer  kind        residual  side     step            operand   group    rows  "
                             "owes          bytes/token"))
      << table;
  EXPECT_TRUE(HasLine(table, "              final-norm            final    ar+add+norm     value     tp       full  "
                             "tp -> -               256"))
      << table;
  EXPECT_TRUE(HasLine(table, "bytes per token per rank: layers 0..1: 512 each, final norm: 256, lm head: 512; total 1792"))
      << table;
}

TEST(PlanTable, ByteTotalsAgreeWithBytesPerToken) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  EXPECT_EQ(BytesPerToken(*p.line(Variant::kOrdinary), p.header()), 1792.0);
}

// A real model's totals run past a million bytes: printed whole, never in
// exponent form; a fraction (rows that do not divide evenly) to two places.
TEST(PlanTable, BytesArePrintedWhole) {
  EXPECT_EQ(BytesText(1655808.0), "1655808");
  EXPECT_EQ(BytesText(0.0), "0");
  EXPECT_EQ(BytesText(21845.3333), "21845.33");
  const Plan p = MustBind(StackOf("AF", 1 << 16), {.tp = 8});  // 2^16 wide: millions of bytes
  const std::string table = ToTable(p);
  EXPECT_EQ(table.find("e+"), std::string::npos) << table;
  EXPECT_NE(table.find(BytesText(BytesPerToken(*p.line(Variant::kOrdinary), p.header()))), std::string::npos);
}

// Input-scattered llama on tp=2 (ar): each attention reduce-scatters its
// input onto the slice (1/2 x 256 = 128) and gathers its QKV input back (128);
// layer 0's FFN completes its sum with an rs (128), gathers the residual (128)
// and all-reduces at its exit (256): 768. Layer 1: the attention's gather
// (128), the FFN's rs and gather (256): 384. The final norm's fused AR: 256.
TEST(PlanTable, InputScatteredPlanHasOneSectionPerVariant) {
  const std::string table = ToTable(MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true}));
  const size_t ordinary = table.find("\nordinary batches\n");
  const size_t scattered = table.find("\ninput-scattered batches\n");
  ASSERT_NE(ordinary, std::string::npos) << table;
  ASSERT_NE(scattered, std::string::npos) << table;
  EXPECT_LT(ordinary, scattered);
  EXPECT_TRUE(HasLine(table, "tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar input-scattered pp=1"));
  EXPECT_TRUE(HasLine(table, "bytes per token per rank: layers 0..1: 512 each, final norm: 256, lm head: 512; total 1792"));
  EXPECT_TRUE(HasLine(table, "bytes per token per rank: layer 0: 768, layer 1: 384, final norm: 256, lm head: 512; total 1920"))
      << table;
  EXPECT_TRUE(HasLine(table, "    0      0  attention   slice     entry    rs              value     tp       "
                             "full -> slice  tp -> -               128"))
      << table;
}

// deepseek [A F][A E][A E] on tp=4 attn_dp=2 dense_tp=1 a2a: attention rows
// are 1/2 of the batch (128 B), the slice 1/4 (64 B). Each rs/ag over
// attn_tp=2 moves 64; each a2a leg moves 3/4 of 3 experts x 64 B = 144.
TEST(PlanTable, DeepseekA2aSummaryCountsEveryCollective) {
  const std::string table =
      ToTable(MustBind(DeepseekModel(3, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a}));
  EXPECT_TRUE(HasLine(table, "deepseek-v2-lite (tiny shape, hidden 64) on pipeline rank 0 of 1 (layers 0..2)")) << table;
  EXPECT_TRUE(HasLine(table, "bytes per token per rank: layer 0: 64, layer 1: 416, layer 2: 480, final norm: 0, "
                             "lm head: 896; total 1856"))
      << table;
  EXPECT_EQ(CountMatches(table, std::regex(R"( +compute +a2a-dispatch +input +tp +slice +- +144)")), 2) << table;
  EXPECT_EQ(CountMatches(table, std::regex(R"( +compute +a2a-combine +value +tp +slice +- +144)")), 2) << table;
  EXPECT_TRUE(HasLine(table, "              final-norm            final    norm            residual  -        attn  "
                             "         -                       0"))
      << table;
}

TEST(PlanTable, SingleRankPlanMovesNoBytes) {
  const std::string table = ToTable(MustBind(LlamaModel(2), {.tp = 1}));
  EXPECT_TRUE(HasLine(table, "bytes per token per rank: layers 0..1: 0 each, final norm: 0, lm head: 0; total 0")) << table;
}

TEST(PlanTable, EveryStepIsOneRow) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a});
  size_t steps = 0;
  for (const StagePlan& s : p.line(Variant::kOrdinary)->stages) steps += s.entry.size() + s.compute.size() + s.exit.size();
  steps += p.line(Variant::kOrdinary)->start.size() + p.line(Variant::kOrdinary)->end.steps.size() +
           p.line(Variant::kOrdinary)->end.head.size();
  // title, config, wire dtypes, rows legend, blank, "ordinary batches", header row, steps, summary
  EXPECT_EQ(LinesOf(ToTable(p)).size(), 7 + steps + 1);
}

TEST(PlanTable, NoOpStageGetsAPassOnRow) {
  Expected<Plan> p = BindChecked(StackOf("ANF"), {.tp = 2}, 0);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const std::string table = ToTable(*p);
  EXPECT_EQ(CountMatches(table, std::regex(R"( +1 +1 +no-op +\S+ +- +\(passes the pending add on\) +0)")), 1)
      << table;
}

// ---- dot ----

TEST(PlanDot, LlamaIsOneClusterWithANodePerStage) {
  const std::string dot = ToDot(MustBind(LlamaModel(2), {.tp = 2}));
  const std::vector<std::string> lines = LinesOf(dot);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "digraph \"llama\" {");
  EXPECT_EQ(lines.back(), "}");
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *subgraph "cluster_r0_[a-z-]+" \{)")), 1) << dot;
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *"r0_ordinary_[0-9]+" \[label=.*)")), 4) << dot;
  EXPECT_EQ(CountMatches(dot, std::regex(R"re( *"r0_ordinary_(start|end)" \[label=.*shape=ellipse\];)re")), 2) << dot;
  // One edge per boundary: entry -> 0 -> 1 -> 2 -> 3 -> final.
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *"[^"]+" -> "[^"]+" \[label=.*)")), 5) << dot;
  EXPECT_TRUE(HasLine(dot, R"(    "r0_ordinary_1" [label="1 dense-ffn (layer 0)\ninput full, residual full\n256 B/token"];)"))
      << dot;
  EXPECT_TRUE(HasLine(dot, R"(    "r0_ordinary_0" -> "r0_ordinary_1" [label="ar+add+norm(attn_tp) 256 B/token\n)"
                          R"(value: full owes attn_tp\nresidual: full"];)"))
      << dot;
  EXPECT_TRUE(HasLine(dot, "  rankdir=TB;")) << dot;
}

TEST(PlanDot, InputScatteredAddsASecondClusterWithItsOwnNodes) {
  const std::string dot = ToDot(MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true}));
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *subgraph "cluster_r0_[a-z-]+" \{)")), 2) << dot;
  EXPECT_TRUE(HasLine(dot, R"(  subgraph "cluster_r0_input-scattered" {)")) << dot;
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *"r0_ordinary_[0-9]+" \[label=.*)")), 4) << dot;
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *"r0_input-scattered_[0-9]+" \[label=.*)")), 4) << dot;
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *"[^"]+" -> "[^"]+" \[label=.*)")), 10) << dot;
}

// The boxes of repeated layers, as (first layer, last layer); each box's
// count must be the layers it names.
std::vector<std::pair<int, int>> RepeatedRuns(const std::string& dot) {
  std::vector<std::pair<int, int>> out;
  const std::regex box(R"re(label="layers (\d+)\.\.(\d+) \(x(\d+)\)";)re");
  for (std::sregex_iterator m(dot.begin(), dot.end(), box), end; m != end; ++m) {
    const int first = std::stoi((*m)[1]);
    const int last = std::stoi((*m)[2]);
    EXPECT_EQ(std::stoi((*m)[3]), last - first + 1) << m->str();
    out.emplace_back(first, last);
  }
  return out;
}

// Every stage has its own node, unless it is in a later layer of a repeated
// run (the run's first layer stands for it); one edge per drawn boundary and
// one back edge per run.
TEST(PlanDot, EveryCatalogueModelDrawsEachStageOnceOrInARepeatedRun) {
  for (const CatalogueEntry& e : Catalogue()) {
    const Plan p = MustBind(e.make(), {.tp = 2});
    const std::string dot = ToDot(p);
    const std::vector<std::pair<int, int>> runs = RepeatedRuns(dot);
    int drawn = 0;
    for (const StagePlan& s : p.line(Variant::kOrdinary)->stages) {
      const bool has_node = dot.find(fmt::format("\"r0_ordinary_{}\" [label=", s.index)) != std::string::npos;
      const bool stood_for = std::any_of(runs.begin(), runs.end(), [&](const std::pair<int, int>& r) {
        return r.first < s.layer && s.layer <= r.second;
      });
      EXPECT_NE(has_node, stood_for) << e.name << " stage " << s.index << "\n" << dot;
      drawn += has_node ? 1 : 0;
    }
    EXPECT_EQ(CountMatches(dot, std::regex(R"( *"r0_ordinary_[0-9]+" \[label=.*)")), drawn) << e.name;
    EXPECT_EQ(CountMatches(dot, std::regex(R"( *"[^"]+" -> "[^"]+" \[label=.*)")), drawn + 1 + static_cast<int>(runs.size()))
        << e.name;
    // Braces balance: the graph, its clusters.
    EXPECT_EQ(std::count(dot.begin(), dot.end(), '{'), std::count(dot.begin(), dot.end(), '}')) << e.name;
  }
}

// deepseek-v2-lite at 8 layers under tp=4 attn_dp=2 dense_tp=1 a2a: layer 0
// is dense, layer 7 ends the stack; the MoE layers between are the same plan.
const ParallelConfig kDeepseekCfg{.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a};

TEST(PlanDot, RepeatedLayersAreOneBoxNamingTheirRange) {
  const Plan p = MustBind(DeepseekModel(8, 64, 3), kDeepseekCfg);
  const std::string dot = ToDot(p);
  const int nodes = CountMatches(dot, std::regex(R"( *"r0_ordinary_[0-9]+" \[label=.*)"));
  EXPECT_LT(nodes, static_cast<int>(p.lines()[0].stages.size())) << dot;
  EXPECT_EQ(nodes, 6) << dot;  // layer 0, the box's two stages, layer 7
  EXPECT_TRUE(HasLine(dot, R"re(      label="layers 1..6 (x6)";)re")) << dot;
  EXPECT_TRUE(HasLine(dot, R"(      "r0_ordinary_2" [label="attention\ninput attn, residual slice\n64 B/token per layer"];)"))
      << dot;
  EXPECT_EQ(dot.find("\"r0_ordinary_4\""), std::string::npos) << dot;
  // From one repeated layer to the next: the sparse FFN's exit, the attention's entry.
  EXPECT_TRUE(HasLine(dot, R"(    "r0_ordinary_3" -> "r0_ordinary_2" [label="ag(attn_tp) 64 B/token\nnext layer", )"
                           R"(style=dashed, constraint=false];)"))
      << dot;
}

TEST(PlanDot, EdgesNameTheCollectivesOfTheEntryAndExitTheyJoin) {
  const std::string dot = ToDot(MustBind(DeepseekModel(4, 64, 3), kDeepseekCfg));
  // The dense FFN's entry completes the attention's sum onto the slice.
  EXPECT_TRUE(HasLine(dot, R"(    "r0_ordinary_0" -> "r0_ordinary_1" [label="rs(attn_tp) 64 B/token\n)"
                           R"(value: attn owes attn_tp\nresidual: attn"];)"))
      << dot;
  // The last MoE's exit gathers the residual back for the final norm.
  EXPECT_TRUE(HasLine(dot, R"(    "r0_ordinary_7" -> "r0_ordinary_end" [label="ag(attn_tp) 64 B/token\n)"
                           R"(value: written\nresidual: attn"];)"))
      << dot;
}

TEST(PlanDot, APipelineKeepsItsHandoffEdgesAndFirstReceive) {
  const Expected<Pipeline> p = BindPipelineChecked(LlamaModel(4), {.tp = 2, .pp = 2});
  ASSERT_TRUE(p.ok()) << p.error().message;
  const std::string dot = ToDot(*p);
  EXPECT_TRUE(HasLine(dot, R"(  "r0_ordinary_end" -> "r1_ordinary_start" [label="slices", style=dashed];)")) << dot;
  EXPECT_EQ(CountMatches(dot, std::regex(R"re( *"r1_ordinary_start" -> "r1_ordinary_[0-9]+" \[label="recv\(pp\) 0 B/token\\n.*)re")), 1)
      << dot;
}

TEST(PlanDot, AQuoteInTheModelNameIsEscaped) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  PlanHeader h = p.header();
  h.model = R"(my "llama")";
  EXPECT_EQ(LinesOf(ToDot(Plan(h, p.lines()))).front(), R"(digraph "my \"llama\"" {)");
}

}  // namespace
}  // namespace seam
