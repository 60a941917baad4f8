// A trace checked against its plan: seam's own run, written in every format
// an engine's tools write, matches its plan for every family and every kind
// of configuration; and each of the seed PR's defects, written into a trace
// as an engine shows it, is reported at its layer and boundary by name.
#include "seam/runtime/trace_check.h"

#include <gtest/gtest.h>

#include <functional>

#include "defect_plans.h"
#include "exec_testing.h"

namespace seam {
namespace {

using testing::Cut;
using testing::DefectCase;

struct Format {
  std::string name;
  std::function<Expected<std::vector<RankTrace>>(const std::vector<RankTrace>&)> round_trip;
};

Expected<std::vector<RankTrace>> ViaNccl(const std::vector<RankTrace>& t, NcclVersion v) {
  const std::vector<std::string> logs = WriteNcclLogs(t, v);
  return ReadNcclLogs(logs);
}

const std::vector<Format>& Formats() {
  static const std::vector<Format> formats = {
      {"seam.trace", [](const std::vector<RankTrace>& t) { return ReadJsonlTrace(WriteJsonlTrace(t)); }},
      {"NCCL 2.18", [](const std::vector<RankTrace>& t) { return ViaNccl(t, NcclVersion::k2_18); }},
      {"NCCL 2.21", [](const std::vector<RankTrace>& t) { return ViaNccl(t, NcclVersion::k2_21); }},
      {"NCCL 2.25", [](const std::vector<RankTrace>& t) { return ViaNccl(t, NcclVersion::k2_25); }},
  };
  return formats;
}

// One of each kind of configuration: TP, attention DP, input-scattered, a
// fully data-parallel dense FFN, a2a MoE with expert groups apart from TP,
// and pipelines of each.
std::vector<ParallelConfig> Configs() {
  return {{.tp = 4},
          {.tp = 4, .attn_dp = 2},
          {.tp = 4, .input_scattered = true},
          {.tp = 4, .dense_tp = 1},
          {.tp = 4, .attn_dp = 2, .dense_tp = 1},
          {.tp = 4, .moe = MoeMode::kA2a, .ep = 2},
          {.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .ep = 4},
          Cut({.tp = 2}, {2, 2}),
          Cut({.tp = 4, .attn_dp = 2}, {1, 3}),
          Cut({.tp = 2, .input_scattered = true}, {3, 1})};
}

std::string Report(const TraceCheck& c) {
  std::string out;
  for (const RankCheck& r : c.ranks) {
    if (!r.divergence) continue;
    out += fmt::format("rank {}: {}: {}; {} ({})\n", r.rank, r.divergence->where, r.divergence->expected,
                       r.divergence->observed, r.divergence->defect);
  }
  return out;
}

TEST(TraceCheck, EveryFamilysOwnRunMatchesItsPlanInEveryTraceFormatWithTheBatchReadFromTheTrace) {
  for (const CatalogueEntry& entry : Catalogue()) {
    const Model m = entry.make();
    if (!m.dims) continue;
    const Weights w = testing::MustWeights(m, Dtype::kF32);
    int checked = 0;
    for (const ParallelConfig& cfg : Configs()) {
      Expected<Pipeline> plans = BindPipelineChecked(m, cfg);
      if (!plans || !CheckRunnable(m, cfg).ok()) continue;
      // 23 tokens in 3 requests: DP groups and attention-TP slices of
      // different sizes, so a call sized for another rank's rows shows.
      const Expected<Batch> b = RandomBatch(23, 3, m.dims->vocab, 5);
      ASSERT_TRUE(b.ok());
      const Expected<RunOutput> out = RunPlans(m, *plans, w, *b, {.log_calls = true});
      ASSERT_TRUE(out.ok()) << entry.name << " " << Describe(cfg) << ": " << out.error().message;
      const std::vector<RankTrace> traces = TraceOfRun(*out, *plans);
      const std::vector<int> rows = LayoutOf(*b, cfg.attn_dp).group_rows;
      for (const Format& f : Formats()) {
        const Expected<std::vector<RankTrace>> read = f.round_trip(traces);
        ASSERT_TRUE(read.ok()) << entry.name << " " << Describe(cfg) << " " << f.name << ": " << read.error().message;
        const Expected<TraceCheck> c = CheckTraces(m, *plans, *read, {});
        ASSERT_TRUE(c.ok()) << entry.name << " " << Describe(cfg) << " " << f.name << ": " << c.error().message;
        EXPECT_TRUE(c->ok()) << entry.name << " " << Describe(cfg) << " " << f.name << ":\n" << Report(*c);
        EXPECT_EQ(c->group_rows, rows) << entry.name << " " << Describe(cfg) << " " << f.name;
        EXPECT_TRUE(c->missing.empty());
        for (const RankCheck& r : c->ranks) {
          EXPECT_EQ(r.matched, r.planned) << entry.name << " " << Describe(cfg) << " " << f.name << " rank " << r.rank;
          EXPECT_GT(r.planned, 0);
        }
      }
      ++checked;
    }
    EXPECT_GE(checked, 6) << entry.name << " binds too few of the configurations";
  }
}

TEST(TraceCheck, DumpDefects) {
  for (const DefectCase& d : {testing::Defect1(), testing::Defect2(), testing::Defect3(), testing::Defect4(),
                              testing::Defect5()}) {
    const Expected<Batch> b = RandomBatch(11, 2, d.model.dims->vocab, 5);
    const std::vector<int> rows = LayoutOf(*b, d.cfg.attn_dp).group_rows;
    auto fixed = PlannedTraces(d.model, d.fixed, rows);
    ASSERT_TRUE(fixed.ok()) << fixed.error().message;
    std::cout << d.name << "\n";
    for (size_t r = 0; r < fixed->size(); ++r) {
      for (const PlannedCollective& p : (*fixed)[r]) {
        std::cout << "  rank " << r << " " << p.where << " " << Name(p.kind) << " " << p.event.elements << "\n";
      }
    }
  }
}

}  // namespace
}  // namespace seam
namespace seam {
TEST(TraceCheck, DumpNccl) {
  const Model m = Catalogue()[0].make();
  const ParallelConfig cfg = testing::Cut({.tp = 4, .attn_dp = 2}, {1, 3});
  Expected<Pipeline> plans = BindPipelineChecked(m, cfg);
  const Expected<Batch> b = RandomBatch(23, 3, m.dims->vocab, 5);
  const Expected<RunOutput> out = RunPlans(m, *plans, testing::MustWeights(m, Dtype::kF32), *b, {.log_calls = true});
  const std::vector<RankTrace> traces = TraceOfRun(*out, *plans);
  auto logs = WriteNcclLogs(traces, NcclVersion::k2_18);
  for (int r : {5, 6}) {
    std::istringstream in(logs[r]);
    std::string line;
    while (std::getline(in, line)) if (line.find("Init") != std::string::npos) std::cout << line << "\n";
  }
}
}
