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
#include "seam/printable.h"
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
      "stage  layer  kind        residual  side     step            operand   group    rows  owes          "
      "bytes/token\n"
      "              embedding             start    embed           value     -        full  - -> tp                 "
      "0\n"
      "    0      0  attention   full      entry    ar              value     tp       full  tp -> -               "
      "256\n"
      "                                    entry    start-residual  value     -        full  -                       "
      "0\n"
      "                                    entry    norm            residual  -        full  -                       "
      "0\n"
      "                                    compute  compute         input     -        full  - -> attn_tp            "
      "0\n"
      "                                    exit     leave           value     attn_tp  full  attn_tp                 "
      "0\n"
      "    1      0  dense-ffn   full      entry    ar+add+norm     value     attn_tp  full  attn_tp -> -          "
      "256\n"
      "                                    compute  compute         input     -        full  - -> tp                 "
      "0\n"
      "                                    exit     leave           value     tp       full  tp                      "
      "0\n"
      "    2      1  attention   full      entry    ar+add+norm     value     tp       full  tp -> -               "
      "256\n"
      "                                    compute  compute         input     -        full  - -> attn_tp            "
      "0\n"
      "                                    exit     leave           value     attn_tp  full  attn_tp                 "
      "0\n"
      "    3      1  dense-ffn   full      entry    ar+add+norm     value     attn_tp  full  attn_tp -> -          "
      "256\n"
      "                                    compute  compute         input     -        full  - -> tp                 "
      "0\n"
      "                                    exit     leave           value     tp       full  tp                      "
      "0\n"
      "              final-norm            final    ar+add+norm     value     tp       full  tp -> -               "
      "256\n"
      "              lm-head               head     lm-head         input     -        full  -                       "
      "0\n"
      "                                    head     ag-vocab        logits    tp       full  -                     "
      "512\n"
      "bytes per token per rank: layers 0..1: 512 each, final norm: 256, lm head: 512; total 1792\n";
  EXPECT_EQ(table, expected);
}

TEST(PlanTable, HeaderRowFinalNormRowAndBytesSummaryAreExact) {
  const std::string table = ToTable(MustBind(LlamaModel(2), {.tp = 2}));
  EXPECT_TRUE(HasLine(table,
                      "stage  layer  kind        residual  side     step            operand   group    rows  "
                      "owes          bytes/token"))
      << table;
  EXPECT_TRUE(HasLine(table,
                      "              final-norm            final    ar+add+norm     value     tp       full  "
                      "tp -> -               256"))
      << table;
  EXPECT_TRUE(
      HasLine(table, "bytes per token per rank: layers 0..1: 512 each, final norm: 256, lm head: 512; total 1792"))
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
  EXPECT_TRUE(
      HasLine(table, "bytes per token per rank: layers 0..1: 512 each, final norm: 256, lm head: 512; total 1792"));
  EXPECT_TRUE(
      HasLine(table, "bytes per token per rank: layer 0: 768, layer 1: 384, final norm: 256, lm head: 512; total 1920"))
      << table;
  EXPECT_TRUE(HasLine(table,
                      "    0      0  attention   slice     entry    rs              value     tp       "
                      "full -> slice  tp -> -               128"))
      << table;
}

// deepseek [A F][A E][A E] on tp=4 attn_dp=2 dense_tp=1 a2a: attention rows
// are 1/2 of the batch (128 B), the slice 1/4 (64 B). Each rs/ag over
// attn_tp=2 moves 64; each a2a leg moves 3/4 of 3 experts x 64 B = 144.
TEST(PlanTable, DeepseekA2aSummaryCountsEveryCollective) {
  const std::string table =
      ToTable(MustBind(DeepseekModel(3, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a}));
  EXPECT_TRUE(HasLine(table, "deepseek-v2-lite (tiny shape, hidden 64) on pipeline rank 0 of 1 (layers 0..2)"))
      << table;
  EXPECT_TRUE(HasLine(table,
                      "bytes per token per rank: layer 0: 64, layer 1: 416, layer 2: 480, final norm: 0, "
                      "lm head: 896; total 1856"))
      << table;
  EXPECT_EQ(CountMatches(table, std::regex(R"( +compute +a2a-dispatch +input +tp +slice +- +144)")), 2) << table;
  EXPECT_EQ(CountMatches(table, std::regex(R"( +compute +a2a-combine +value +tp +slice +- +144)")), 2) << table;
  EXPECT_TRUE(HasLine(table,
                      "              final-norm            final    norm            residual  -        attn  "
                      "         -                       0"))
      << table;
}

TEST(PlanTable, SingleRankPlanMovesNoBytes) {
  const std::string table = ToTable(MustBind(LlamaModel(2), {.tp = 1}));
  EXPECT_TRUE(HasLine(table, "bytes per token per rank: layers 0..1: 0 each, final norm: 0, lm head: 0; total 0"))
      << table;
}

TEST(PlanTable, EveryStepIsOneRow) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a});
  size_t steps = 0;
  for (const StagePlan& s : p.line(Variant::kOrdinary)->stages)
    steps += s.entry.size() + s.compute.size() + s.exit.size();
  steps += p.line(Variant::kOrdinary)->start.size() + p.line(Variant::kOrdinary)->end.steps.size() +
           p.line(Variant::kOrdinary)->end.head.size();
  // title, config, wire dtypes, rows legend, blank, "ordinary batches", header row, steps, summary
  EXPECT_EQ(LinesOf(ToTable(p)).size(), 7 + steps + 1);
}

TEST(PlanTable, NoOpStageGetsAPassOnRow) {
  Expected<Plan> p = BindChecked(StackOf("ANF"), {.tp = 2}, 0);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const std::string table = ToTable(*p);
  EXPECT_EQ(CountMatches(table, std::regex(R"( +1 +1 +no-op +\S+ +- +\(passes the pending add on\) +0)")), 1) << table;
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
  // One edge per boundary: entry -> 0 -> 1 -> 2 -> 3 -> final, and one to the LM head.
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *"[^"]+" -> "[^"]+" \[label=.*)")), 6) << dot;
  EXPECT_TRUE(HasLine(dot, R"x(    "r0_ordinary_1" [label="1 dense-ffn (layer 0)\ninput full, residual full"];)x"))
      << dot;
  EXPECT_TRUE(HasLine(dot, R"(    "r0_ordinary_0" -> "r0_ordinary_1" [label="ar+add+norm(tp) 256 B/token\n)"
                           R"(value: full owes tp\nresidual: full"];)"))
      << dot;
  EXPECT_TRUE(HasLine(dot, "  rankdir=TB;")) << dot;
}

TEST(PlanDot, InputScatteredAddsASecondClusterWithItsOwnNodes) {
  const std::string dot = ToDot(MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true}));
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *subgraph "cluster_r0_[a-z-]+" \{)")), 2) << dot;
  EXPECT_TRUE(HasLine(dot, R"(  subgraph "cluster_r0_input-scattered" {)")) << dot;
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *"r0_ordinary_[0-9]+" \[label=.*)")), 4) << dot;
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *"r0_input-scattered_[0-9]+" \[label=.*)")), 4) << dot;
  EXPECT_EQ(CountMatches(dot, std::regex(R"( *"[^"]+" -> "[^"]+" \[label=.*)")), 12) << dot;
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
    // And two edges to and from each stage's experts, one to the LM head.
    const int experts = CountMatches(dot, std::regex(R"( *"r0_ordinary_[0-9]+_experts" \[label=.*)"));
    const int head = CountMatches(dot, std::regex(R"( *"r0_ordinary_lm_head" \[label=.*)"));
    EXPECT_EQ(head, p.line(Variant::kOrdinary)->end.head.empty() ? 0 : 1) << e.name;
    EXPECT_EQ(CountMatches(dot, std::regex(R"( *"[^"]+" -> "[^"]+" \[label=.*)")),
              drawn + 1 + static_cast<int>(runs.size()) + 2 * experts + head)
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
  EXPECT_TRUE(HasLine(dot, R"(      "r0_ordinary_2" [label="attention\ninput attn, residual slice"];)")) << dot;
  EXPECT_EQ(dot.find("\"r0_ordinary_4\""), std::string::npos) << dot;
  // From one repeated layer to the next: the sparse FFN's exit, the attention's entry.
  EXPECT_TRUE(HasLine(dot, R"(    "r0_ordinary_3" -> "r0_ordinary_2" [label="ag(attn_tp) 64 B/token x5\nnext layer", )"
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
  EXPECT_EQ(
      CountMatches(
          dot, std::regex(R"re( *"r1_ordinary_start" -> "r1_ordinary_[0-9]+" \[label="recv\(pp\) 0 B/token\\n.*)re")),
      1)
      << dot;
}

TEST(PlanDot, AQuoteInTheModelNameIsEscaped) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  PlanHeader h = p.header();
  h.model = R"(my "llama")";
  EXPECT_EQ(LinesOf(ToDot(Plan(h, p.lines()))).front(), R"(digraph "my \"llama\"" {)");
}

TEST(PlanDot, TheTitleNamesTheModelAndTheConfiguration) {
  const ParallelConfig cfg{.tp = 2};
  const std::string dot = ToDot(MustBind(LlamaModel(2), cfg));
  EXPECT_TRUE(
      HasLine(dot, fmt::format(R"(  label="llama\n{}\nwire: fp32 activations; bytes per token per rank, each on )"
                               R"(one edge";)",
                               Describe(cfg))))
      << dot;
  EXPECT_TRUE(HasLine(dot, "  labelloc=t;")) << dot;
}

TEST(PlanDot, TheLmHeadIsDrawnAfterTheFinalNormWithItsCollectives) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  ASSERT_FALSE(p.lines()[0].end.head.empty());
  const std::string dot = ToDot(p);
  EXPECT_EQ(
      CountMatches(dot, std::regex(R"re( *"r0_ordinary_lm_head" \[label="lm head\\nlogits over \d+ columns".*)re")), 1)
      << dot;
  // The vocabulary's gather over the two ranks, on the edge from the final norm.
  EXPECT_EQ(
      CountMatches(
          dot, std::regex(
                   R"re( *"r0_ordinary_end" -> "r0_ordinary_lm_head" \[label="ag-vocab\(tp\) [0-9.]+ B/token"\];)re")),
      1)
      << dot;
}

TEST(PlanDot, AllToAllDispatchAndCombineAreEdgesToAndFromTheExperts) {
  const std::string dot = ToDot(MustBind(DeepseekModel(4, 64, 3), kDeepseekCfg));
  // The MoE layers 1..3 (stages 3, 5, 7): layers 1 and 2 are one box, whose
  // all-to-alls run once a layer; layer 3 ends the stack.
  const std::regex out(
      R"re( *"r0_ordinary_(\d+)" -> "r0_ordinary_\1_experts" \[label="a2a-dispatch\(tp\) [0-9.]+ B/token( x2)?"\];)re");
  const std::regex back(
      R"re( *"r0_ordinary_(\d+)_experts" -> "r0_ordinary_\1" \[label="a2a-combine\(tp\) [0-9.]+ B/token( x2)?"\];)re");
  EXPECT_EQ(CountMatches(dot, out), 2) << dot;
  EXPECT_EQ(CountMatches(dot, back), 2) << dot;
  EXPECT_TRUE(HasLine(dot, R"x(      "r0_ordinary_3_experts" [label="experts\nover tp (4 ranks)", shape=box3d];)x"))
      << dot;
  EXPECT_TRUE(HasLine(dot, R"x(    "r0_ordinary_7_experts" [label="experts\nover tp (4 ranks)", shape=box3d];)x"))
      << dot;
}

// Every "kind(group) N B/token [xK]" on an edge, N times K, summed.
double BytesOnEdges(const std::string& dot) {
  const std::regex edge(R"re( *"[^"]+" -> "[^"]+" \[label="([^"]*)".*)re");
  const std::regex item(R"(\S+\(\w+\) ([0-9.]+) B/token(?: x(\d+))?)");
  double total = 0;
  for (const std::string& l : LinesOf(dot)) {
    std::smatch e;
    if (!std::regex_match(l, e, edge)) continue;
    const std::string label = e[1];
    for (std::sregex_iterator m(label.begin(), label.end(), item), end; m != end; ++m) {
      total += std::stod((*m)[1]) * ((*m)[2].matched ? std::stoi((*m)[2]) : 1);
    }
  }
  return total;
}

TEST(PlanDot, TheBytesOnTheEdgesAddUpToThePlansBytesPerToken) {
  const std::vector<ParallelConfig> configs = {{.tp = 2},
                                               {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a},
                                               {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .pp = 2},
                                               {.tp = 4, .attn_dp = 4, .moe = MoeMode::kA2a, .dp_lm_head = true},
                                               {.tp = 2, .input_scattered = true, .pp = 2}};
  int drawn = 0;
  for (const CatalogueEntry& e : Catalogue()) {
    for (const ParallelConfig& cfg : configs) {
      const Expected<Pipeline> p = BindPipelineChecked(e.make(), cfg);
      if (!p) continue;
      double bytes = 0;
      size_t steps = 0;
      for (const Plan& rank : *p) {
        for (const LinePlan& line : rank.lines()) {
          bytes += BytesPerToken(line, rank.header());
          steps += StepCount(line);
        }
      }
      // A fraction prints to two places: each step's count may be half a cent off.
      EXPECT_NEAR(BytesOnEdges(ToDot(*p)), bytes, 0.005 * static_cast<double>(steps) + 1e-9)
          << e.name << " " << Describe(cfg);
      ++drawn;
    }
  }
  EXPECT_GT(drawn, 10);
}

// The nodes and edges of a graph, without the title (whose configuration
// line says attn_tp=2 as the table's does).
std::string Drawn(const std::string& dot) {
  std::string out;
  for (const std::string& l : LinesOf(dot)) {
    if (l.find(" [label=") != std::string::npos) out += l + "\n";
  }
  return out;
}

// attn_tp, dp and ep are parts of the TP group; where one is all of it the
// picture calls it tp, so no two names on one graph stand for the same ranks.
TEST(PlanDot, OneGroupHasOneNameOnTheGraph) {
  const std::vector<ParallelConfig> configs = {
      {.tp = 2}, {.tp = 4, .attn_dp = 4, .moe = MoeMode::kA2a}, {.tp = 4, .attn_dp = 2, .moe = MoeMode::kA2a}};
  const std::regex named(R"((?:\(|owes )(attn_tp|dp|ep|tp)\b)");
  for (const CatalogueEntry& e : Catalogue()) {
    for (const ParallelConfig& cfg : configs) {
      const Expected<Pipeline> p = BindPipelineChecked(e.make(), cfg);
      if (!p) continue;
      const std::string dot = Drawn(ToDot(*p));
      for (std::sregex_iterator m(dot.begin(), dot.end(), named), end; m != end; ++m) {
        const Expected<Group> g = ParseGroup((*m)[1].str());
        ASSERT_TRUE(g.ok());
        if (*g != Group::kTp) {
          EXPECT_NE(GroupSize(cfg, *g), cfg.tp) << e.name << " " << Describe(cfg) << ": " << m->str();
        }
      }
    }
  }
  // Plain TP2: the sums it completes are over the one group of two ranks.
  const std::string dot = Drawn(ToDot(MustBind(LlamaModel(2), {.tp = 2})));
  EXPECT_EQ(dot.find("attn_tp"), std::string::npos) << dot;
}

Plan Renamed(std::string name) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  PlanHeader h = p.header();
  h.model = std::move(name);
  return Plan(h, p.lines());
}

TEST(PlanDot, ControlBytesAndInvalidUtf8InTheModelNameAreEscapedText) {
  const std::string dot = ToDot(Renamed(std::string("a\0b\x1b[2J\x7f\xff\"\\", 11)));
  EXPECT_EQ(LinesOf(dot).front(), R"(digraph "a\\x00b\\x1b[2J\\x7f\\xff\"\\" {)");
  for (const char c : dot) {
    EXPECT_TRUE(c == '\n' || (c >= ' ' && c < 127)) << static_cast<int>(static_cast<unsigned char>(c));
  }
}

TEST(PlanDot, ALongModelNameIsCutToAnEllipsisAndItsLength) {
  const std::string dot = ToDot(Renamed(std::string(100000, 'a')));
  EXPECT_EQ(LinesOf(dot).front(),
            fmt::format("digraph \"{}\u2026 (100000 characters)\" {{", std::string(kMaxLabelName, 'a')));
  EXPECT_LT(dot.size(), 20000u);
  // A name of many-byte characters is cut between characters.
  std::string wide;
  for (int i = 0; i < 100; ++i) wide += "\u00e9";
  EXPECT_EQ(LinesOf(ToDot(Renamed(wide))).front(),
            "digraph \"" + wide.substr(0, 2 * kMaxLabelName) + "\u2026 (100 characters)\" {");
}

TEST(PlanTable, ControlBytesAndInvalidUtf8InTheModelNameAreEscaped) {
  const std::string table = ToTable(Renamed("evil\x1b[2J\x07\x7f\xc3(ok \u00e9"));
  EXPECT_EQ(LinesOf(table).front(), R"(evil\x1b[2J\x07\x7f\xc3(ok )"
                                    "\u00e9"
                                    " on pipeline rank 0 of 1 (layers 0..1)");
}

TEST(Printable, ControlBytesDelAndInvalidUtf8AreWrittenAsHex) {
  EXPECT_EQ(Printable("plain name-1.5"), "plain name-1.5");
  EXPECT_EQ(Printable(std::string("\0\t\n\x1b\x7f", 5)), R"(\x00\x09\x0a\x1b\x7f)");
  EXPECT_EQ(Printable("\u00e9\u20ac\U0001F600"), "\u00e9\u20ac\U0001F600");  // valid UTF-8 stays
  EXPECT_EQ(Printable("\xc0\xaf"), R"(\xc0\xaf)");                           // overlong
  EXPECT_EQ(Printable("\xed\xa0\x80"), R"(\xed\xa0\x80)");                   // a surrogate
  EXPECT_EQ(Printable("\xe2\x82"), R"(\xe2\x82)");                           // cut short
  EXPECT_EQ(Printable("\xf4\x90\x80\x80"), R"(\xf4\x90\x80\x80)");           // above U+10FFFF
  EXPECT_EQ(Printable("a\xc2\x9b"
                      "31mb\xc2\xa0"),
            "a\\xc2\\x9b31mb\xc2\xa0");  // C1 CSI escaped; NBSP kept
}

}  // namespace
}  // namespace seam
