// Time to bind and verify a deep stack, per layer, and how it scales: each
// stack is bound at L and 2L layers and the ratio of the two times is printed
// after the table (linear in layers means a ratio near 2).
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include "seam/checked.h"

namespace {

// The Nemotron-H-8B layer pattern (52 single-stage layers).
const std::string kNemotronH = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-";

void Run(benchmark::State& state, const seam::Model& model, const seam::ParallelConfig& cfg) {
  for (auto _ : state) {
    seam::Expected<seam::Plan> plan = seam::BindChecked(model, cfg, 0);
    if (!plan) state.SkipWithError(plan.error().message.c_str());
    benchmark::DoNotOptimize(plan);
  }
  state.counters["layers"] = model.num_layers;
  state.counters["per_layer"] =
      benchmark::Counter(model.num_layers, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// DeepSeek-like: [A F] then [A E] x (L-1), tp8 attn-dp4, a2a MoE.
void BM_BindDeepseek(benchmark::State& state) {
  const int layers = static_cast<int>(state.range(0));
  Run(state, seam::DeepseekModel(layers, 7168, 8), {.tp = 8, .attn_dp = 4, .moe = seam::MoeMode::kA2a});
}
BENCHMARK(BM_BindDeepseek)->Arg(61)->Arg(122)->Unit(benchmark::kMicrosecond);

// Nemotron-H-like: the 52-layer pattern, once and twice, tp8.
void BM_BindNemotronH(benchmark::State& state) {
  std::string pattern;
  for (int i = 0; i < state.range(0) / 52; ++i) pattern += kNemotronH;
  Run(state, seam::NemotronHModel(pattern, 4096).value(), {.tp = 8});
}
BENCHMARK(BM_BindNemotronH)->Arg(52)->Arg(104)->Unit(benchmark::kMicrosecond);

// Prints the console table and, at the end, each family's time at its
// largest depth over its time at its smallest.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      const std::string name = r.benchmark_name();
      const int layers = static_cast<int>(r.counters.at("layers").value);
      times_[name.substr(0, name.find('/'))][layers] = r.GetAdjustedCPUTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void PrintRatios() const {
    for (const auto& [family, by_layers] : times_) {
      if (by_layers.size() < 2) continue;
      const auto& [lo_layers, lo] = *by_layers.begin();
      const auto& [hi_layers, hi] = *by_layers.rbegin();
      std::printf("%s: time(%d layers) / time(%d layers) = %.2f (%.2f is linear)\n", family.c_str(), hi_layers,
                  lo_layers, hi / lo, static_cast<double>(hi_layers) / lo_layers);
    }
  }

 private:
  std::map<std::string, std::map<int, double>> times_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintRatios();
  benchmark::Shutdown();
  return 0;
}
