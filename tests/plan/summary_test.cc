// The plan in a screen: one row per kind of seam. What it must never do is
// lose or invent bytes: the rows' counts times their bytes add up to the
// line's bytes per token, for every catalogue model under the layouts it
// takes, and every non-no-op stage is counted once on its way in.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "seam/checked.h"
#include "seam/plan_io.h"
#include "testing.h"

namespace seam {
namespace {

struct Totals {
  double bytes = 0;    // the sum of count x bytes over the rows
  int into = 0;        // crossings into a stage ("X -> kind")
  double stated = -1;  // the "total N a token" line
};

// The rows of each "pipeline rank" block, in order.
std::vector<Totals> Read(const std::string& summary) {
  static const std::regex kRow(R"(^  (.+?)\s{2,}(\d+)  (.+?)\s+([0-9.]+)$)");
  static const std::regex kTotal(R"(^  total ([0-9.]+) a token$)");
  std::vector<Totals> out;
  std::istringstream in(summary);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.starts_with("pipeline rank ")) {
      out.emplace_back();
    } else if (std::regex_match(line, m, kTotal)) {
      out.back().stated = std::stod(m[1]);
    } else if (std::regex_match(line, m, kRow) && !line.starts_with("  seam ")) {
      out.back().bytes += std::stoi(m[2]) * std::stod(m[4]);
      const std::string label = m[1];
      const bool into_stage =
          label.find(" -> ") != std::string::npos && !label.ends_with("-> final norm") && !label.ends_with("-> send");
      if (into_stage) out.back().into += std::stoi(m[2]);
    }
  }
  return out;
}

TEST(PlanSummary, EveryCatalogueModelsRowsAddUpToItsBytesAndCountEachStageOnce) {
  const std::vector<ParallelConfig> layouts = {{.tp = 2},
                                               {.tp = 4, .attn_dp = 2, .dense_tp = 1, .pp = 2},
                                               {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .pp = 2},
                                               {.tp = 2, .input_scattered = true}};
  int checked = 0;
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    for (const ParallelConfig& cfg : layouts) {
      Expected<Pipeline> p = BindPipelineChecked(m, cfg);
      if (!p) continue;  // a layout the family does not take
      const std::vector<Totals> blocks = Read(ToSummary(*p));
      size_t b = 0;
      for (const Plan& rank : *p) {
        for (const LinePlan& line : rank.lines()) {
          ASSERT_LT(b, blocks.size()) << e.name;
          const Totals& t = blocks[b++];
          const double bytes = BytesPerToken(line, rank.header());
          EXPECT_NEAR(t.bytes, bytes, 1e-6 * (1 + bytes)) << e.name << " " << Describe(cfg);
          EXPECT_NEAR(t.stated, bytes, 1e-6 * (1 + bytes)) << e.name << " " << Describe(cfg);
          int stages = 0;
          for (const StagePlan& s : line.stages) stages += s.decl.kind != StageKind::kNoOp;
          EXPECT_EQ(t.into, stages) << e.name << " " << Describe(cfg);
          ++checked;
        }
      }
      EXPECT_EQ(b, blocks.size()) << e.name;
    }
  }
  EXPECT_GT(checked, 3 * static_cast<int>(Catalogue().size()));
}

TEST(PlanSummary, DeepseekOnAttentionDpAndA2aIsOneRowPerKindOfSeam) {
  const Pipeline p = *BindPipelineChecked(CatalogueModel("deepseek-v2-lite").value(),
                                          {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a});
  EXPECT_EQ(ToSummary(p),
            "deepseek-v2-lite (tiny shape, hidden 64)\n"
            "tp=4 attn_dp=2 (attn_tp=2) dense_tp=1 moe=a2a reduction=ar pp=1\n"
            "wire: bf16 activations\n"
            "\n"
            "pipeline rank 0 of 1 (layers 0..3), ordinary batches\n"
            "  seam                      count  collectives                       bytes/token each\n"
            "  embedding -> attention        1  -                                                0\n"
            "  attention -> dense-ffn        1  rs(attn_tp)                                     32\n"
            "  dense-ffn -> attention        1  ag(attn_tp)                                     32\n"
            "  attention -> sparse-ffn       3  rs(attn_tp)                                     32\n"
            "  sparse-ffn (inside)           3  a2a-dispatch(tp) a2a-combine(tp)               144\n"
            "  sparse-ffn -> attention       2  ag(attn_tp)                                     32\n"
            "  sparse-ffn -> final norm      1  ag(attn_tp)                                     32\n"
            "  lm head                       1  ag(dp) ag-vocab(tp)                            448\n"
            "  total 1136 a token\n");
}

}  // namespace
}  // namespace seam
