// Runs on threads for a Llama-like model of hidden 1024 and 8 layers, in
// one program:
// - throughput: tokens per second of a batch of 512 tokens at tp 1, 2 and 4,
//   against tp 1 (the unsharded model, batched: the baseline for
//   throughput), and the GEMM rate per core as a fraction of OpenBLAS sgemm
//   on one thread;
// - latency: one token at tp 1 and 2 against the reference's time per token
//   (the unsharded model fed one token at a time: the baseline for latency).
//
// Every benchmark runs one untimed call first (the first touches fresh
// memory), then 5 repetitions; the summary reads their medians and says
// their spread. Time is the wall clock; CPU time is the whole process's, all
// threads, so GFLOP per CPU-second is a rate per core whatever the ranks'
// threads. Each call is a whole run: it checks the weights, builds every
// rank's kernels (views of the weights) and runs the plan.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "seam/bind.h"
#include "seam/runtime/exec.h"
#include "seam/runtime/gemm.h"

namespace {

constexpr int kTokens = 512;
constexpr int kRequests = 4;

seam::Model BenchModel() {
  seam::Model m = seam::LlamaModel(8);
  m.hidden = 1024;
  m.dims = seam::ModelDims{.vocab = 1024,
                           .heads = 16,
                           .kv_heads = 4,
                           .head_dim = 64,
                           .rope_theta = 500000.0,
                           .rms_eps = 1e-5,
                           .intermediate = 2816};
  return m;
}

// Multiply-adds per token of the model's products (attention scores aside).
double FlopsPerToken(const seam::Model& m) {
  const seam::ModelDims& d = *m.dims;
  const double h = m.hidden;
  const double attn = h * (d.heads + 2 * d.kv_heads) * d.head_dim + d.heads * d.head_dim * h;
  const double ffn = 3.0 * h * d.intermediate;
  return 2.0 * m.num_layers * (attn + ffn);
}

struct Fixture {
  seam::Model model = BenchModel();
  seam::Weights weights = seam::GenerateWeights(model, 1, seam::Dtype::kBf16).value();
  seam::Batch batch = seam::RandomBatch(kTokens, kRequests, 1024, 7).value();
  seam::Batch one = seam::RandomBatch(1, 1, 1024, 8).value();
};

Fixture& Shared() {
  static Fixture f;
  return f;
}

void BM_Run(benchmark::State& state) {
  Fixture& f = Shared();
  const seam::ParallelConfig cfg{.tp = static_cast<int>(state.range(0)), .reduction = seam::Reduction::kRs};
  const seam::Batch& batch = state.range(1) == 1 ? f.one : f.batch;
  const seam::Pipeline plans = seam::BindPipeline(f.model, cfg).value();
  const auto run = [&] { return seam::RunPlans(f.model, plans, f.weights, batch, {.dtype = seam::Dtype::kBf16}); };
  if (auto warm = run(); !warm) state.SkipWithError(warm.error().message.c_str());
  for (auto _ : state) {
    auto out = run();
    if (!out) state.SkipWithError(out.error().message.c_str());
    benchmark::DoNotOptimize(out);
  }
  const double tokens = static_cast<double>(batch.tokens());
  state.counters["tokens/s"] = benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP"] = benchmark::Counter(1e-9 * tokens * FlopsPerToken(f.model));
}
// {tp, tokens}
BENCHMARK(BM_Run)
    ->Args({1, kTokens})
    ->Args({2, kTokens})
    ->Args({4, kTokens})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Repetitions(5);

void BM_Reference(benchmark::State& state) {
  Fixture& f = Shared();
  const auto reference = [&] {
    return seam::RunReference(f.model, f.weights, f.batch,
                              {seam::Dtype::kBf16, seam::MoeSumOrder::kPerKBlock, seam::kDefaultKBlocks});
  };
  benchmark::DoNotOptimize(reference());
  for (auto _ : state) benchmark::DoNotOptimize(reference());
  state.counters["tokens/s"] = benchmark::Counter(kTokens, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Reference)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->Repetitions(5);

// The run's largest product, by seam's kernel and by OpenBLAS on one thread.
void BM_GemmSeam(benchmark::State& state) {
  const seam::Tensor x(kTokens, 1024), w(2816, 1024);
  benchmark::DoNotOptimize(seam::Gemm(x, w));
  for (auto _ : state) benchmark::DoNotOptimize(seam::Gemm(x, w));
  state.counters["GFLOP"] = benchmark::Counter(2e-9 * kTokens * 2816 * 1024);
}
BENCHMARK(BM_GemmSeam)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->Repetitions(5);

void BM_GemmOpenBlas(benchmark::State& state) {
  openblas_set_num_threads(1);
  const seam::Tensor x(kTokens, 1024), w(2816, 1024);
  const auto product = [&] {
    seam::Tensor y(kTokens, 2816);  // a new output per call, as seam::Gemm returns one
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kTokens, 2816, 1024, 1.0f, x.data(), 1024, w.data(), 1024,
                0.0f, y.data(), 2816);
    return y;
  };
  benchmark::DoNotOptimize(product());
  for (auto _ : state) benchmark::DoNotOptimize(product());
  state.counters["GFLOP"] = benchmark::Counter(2e-9 * kTokens * 2816 * 1024);
}
BENCHMARK(BM_GemmOpenBlas)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->Repetitions(5);

// Keeps each repetition's times and counters for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  SummaryReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      const double iters = static_cast<double>(r.iterations);
      runs_[r.run_name.function_name + (r.run_name.args.empty() ? "" : "/" + r.run_name.args)].push_back(
          {r.real_accumulated_time / iters, r.cpu_accumulated_time / iters,
           r.counters.count("GFLOP") ? r.counters.at("GFLOP").value : 0.0});
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // Per repetition: seconds of wall clock and of CPU per call, GFLOP per call.
  struct Rep {
    double wall = 0;
    double cpu = 0;
    double gflop = 0;
  };
  // The median over repetitions of f, and its spread (max - min) / median.
  template <class F>
  std::pair<double, double> Median(const std::string& bench, F f) const {
    auto it = runs_.find(bench);
    if (it == runs_.end() || it->second.empty()) return {0, 0};
    std::vector<double> v;
    for (const Rep& r : it->second) v.push_back(f(r));
    std::sort(v.begin(), v.end());
    const double median = v[v.size() / 2];
    return {median, median > 0 ? (v.back() - v.front()) / median : 0};
  }

 private:
  std::map<std::string, std::vector<Rep>> runs_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  SummaryReporter r;
  benchmark::RunSpecifiedBenchmarks(&r);
  const auto tokens_per_s = [](const SummaryReporter::Rep& x) { return kTokens / x.wall; };
  const auto gflops_per_core = [](const SummaryReporter::Rep& x) { return x.gflop / x.cpu; };
  const auto ms = [](const SummaryReporter::Rep& x) { return 1e3 * x.wall; };
  const auto ms_per_token = [](const SummaryReporter::Rep& x) { return 1e3 * x.wall / kTokens; };
  const auto [blas, blas_spread] = r.Median("BM_GemmOpenBlas", gflops_per_core);
  const auto [gemm, gemm_spread] = r.Median("BM_GemmSeam", gflops_per_core);
  const auto [batched, batched_spread] = r.Median(fmt::format("BM_Run/1/{}", kTokens), tokens_per_s);
  std::printf(
      "\nsummary: medians of 5 repetitions (spread: (max - min) / median); bf16 storage, hidden 1024, 8 layers\n");
  std::printf("throughput, %d tokens in %d requests (baseline: tp1, the unsharded model batched):\n", kTokens,
              kRequests);
  for (int tp : {1, 2, 4}) {
    const std::string name = fmt::format("BM_Run/{}/{}", tp, kTokens);
    const auto [tps, tps_spread] = r.Median(name, tokens_per_s);
    const auto [per_core, core_spread] = r.Median(name, gflops_per_core);
    std::printf(
        "  tp%d: %8.0f tokens/s (%4.1f%%)  %5.2fx tp1  %6.1f GFLOP per CPU-second (%4.1f%%) = %.2f of OpenBLAS "
        "sgemm on one core\n",
        tp, tps, 100 * tps_spread, batched > 0 ? tps / batched : 0.0, per_core, 100 * core_spread,
        blas > 0 ? per_core / blas : 0.0);
  }
  const auto [ref, ref_spread] = r.Median("BM_Reference", ms_per_token);
  std::printf("latency, one token (baseline: the reference, one token at a time):\n");
  for (int tp : {1, 2}) {
    const auto [t, spread] = r.Median(fmt::format("BM_Run/{}/1", tp), ms);
    std::printf("  tp%d: %7.2f ms (%4.1f%%)  %5.2fx the reference's time per token\n", tp, t, 100 * spread,
                ref > 0 ? t / ref : 0.0);
  }
  std::printf("  reference: %7.2f ms per token (%4.1f%%), %.0f tokens/s\n", ref, 100 * ref_spread,
              ref > 0 ? 1e3 / ref : 0.0);
  std::printf(
      "GEMM [512x1024]x[1024x2816] on one core: seam %.1f GFLOP/s (%4.1f%%), OpenBLAS sgemm %.1f (%4.1f%%), "
      "ratio %.2f\n",
      gemm, 100 * gemm_spread, blas, 100 * blas_spread, blas > 0 ? gemm / blas : 0.0);
  benchmark::Shutdown();
  return 0;
}
