// seam compare on the case: Kimi-K2 on 16 H200s over 2 nodes, every
// configuration bound, verified and costed. Reported as the median and
// spread of 5 repetitions; the goal is under 10 s on this machine.
#include <benchmark/benchmark.h>

#include "seam/compare.h"
#include "seam/hf_config.h"

namespace {

void BM_CompareKimiK2On16Gpus(benchmark::State& state) {
  const seam::Expected<seam::Model> m = seam::LoadHfConfig(std::string(SEAM_HF_CONFIGS) + "/kimi-k2.json");
  if (!m) {
    state.SkipWithError(m.error().message.c_str());
    return;
  }
  const seam::CompareOptions o{
      .gpus = 16, .nodes = 2, .hardware = seam::LoadHardware("h200").value(), .memory = {.weight_bytes = 1}};
  size_t considered = 0;
  for (auto _ : state) {
    const seam::Expected<seam::Comparison> c = seam::Compare(*m, o);
    if (!c) {
      state.SkipWithError(c.error().message.c_str());
      return;
    }
    considered = static_cast<size_t>(c->considered);
    benchmark::DoNotOptimize(c->ranked.data());
  }
  state.counters["configurations"] = static_cast<double>(considered);
}
BENCHMARK(BM_CompareKimiK2On16Gpus)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
