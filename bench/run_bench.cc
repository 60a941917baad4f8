// Tokens per second of a run on threads at tp 1, 2 and 4 against the
// unsharded reference in the same process, for a Llama-like model of hidden
// 1024, 8 layers and a batch of 512 tokens; and the GEMM rate the run
// achieves as a fraction of OpenBLAS sgemm measured in the same program.
// After the table it prints a summary of ratios (one run, one machine).
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include "seam/bind.h"
#include "seam/runtime/exec.h"
#include "seam/runtime/gemm.h"

namespace {

constexpr int kTokens = 512;
constexpr int kRequests = 4;

seam::Model BenchModel() {
  seam::Model m = seam::LlamaModel(8);
  m.hidden = 1024;
  m.dims = seam::ModelDims{.vocab = 1024, .heads = 16, .kv_heads = 4, .head_dim = 64, .rope_theta = 500000.0,
                           .rms_eps = 1e-5, .intermediate = 2816};
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
};

Fixture& Shared() {
  static Fixture f;
  return f;
}

void BM_Run(benchmark::State& state) {
  Fixture& f = Shared();
  const seam::ParallelConfig cfg{.tp = static_cast<int>(state.range(0)), .reduction = seam::Reduction::kRs};
  const seam::Pipeline plans = seam::BindPipeline(f.model, cfg).value();
  for (auto _ : state) {
    auto out = seam::RunPlans(f.model, plans, f.weights, f.batch, {.dtype = seam::Dtype::kBf16});
    if (!out) state.SkipWithError(out.error().message.c_str());
    benchmark::DoNotOptimize(out);
  }
  state.counters["tokens/s"] = benchmark::Counter(kTokens, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] =
      benchmark::Counter(1e-9 * kTokens * FlopsPerToken(f.model), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Run)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

void BM_Reference(benchmark::State& state) {
  Fixture& f = Shared();
  for (auto _ : state) {
    auto ref = seam::RunReference(f.model, f.weights, f.batch, {seam::Dtype::kBf16, seam::MoeSumOrder::kPerKBlock, seam::kDefaultKBlocks});
    benchmark::DoNotOptimize(ref);
  }
  state.counters["tokens/s"] = benchmark::Counter(kTokens, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Reference)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

// The run's largest product, by seam's kernel and by OpenBLAS on one thread.
void BM_GemmSeam(benchmark::State& state) {
  const seam::Tensor x(kTokens, 1024), w(2816, 1024);
  for (auto _ : state) benchmark::DoNotOptimize(seam::Gemm(x, w));
  state.counters["GFLOP/s"] = benchmark::Counter(2e-9 * kTokens * 2816 * 1024, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_GemmSeam)->Unit(benchmark::kMillisecond);

void BM_GemmOpenBlas(benchmark::State& state) {
  openblas_set_num_threads(1);
  const seam::Tensor x(kTokens, 1024), w(2816, 1024);
  seam::Tensor y(kTokens, 2816);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kTokens, 2816, 1024, 1.0f, x.data(), 1024, w.data(), 1024,
                0.0f, y.data(), 2816);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2e-9 * kTokens * 2816 * 1024, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_GemmOpenBlas)->Unit(benchmark::kMillisecond);

// Keeps each benchmark's counters for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  SummaryReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      for (const auto& [name, c] : r.counters) values_[r.benchmark_name()][name] = c.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  double Get(const std::string& bench, const std::string& counter) const {
    auto b = values_.find(bench);
    if (b == values_.end()) return 0;
    auto c = b->second.find(counter);
    return c == b->second.end() ? 0 : c->second;
  }

 private:
  std::map<std::string, std::map<std::string, double>> values_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  SummaryReporter r;
  benchmark::RunSpecifiedBenchmarks(&r);
  const double ref = r.Get("BM_Reference/iterations:1/real_time", "tokens/s");
  const double blas = r.Get("BM_GemmOpenBlas", "GFLOP/s");
  std::printf("\nsummary (bf16 storage, %d tokens in %d requests, hidden 1024, 8 layers):\n", kTokens, kRequests);
  for (int tp : {1, 2, 4}) {
    const std::string name = "BM_Run/" + std::to_string(tp) + "/min_time:2.000/real_time";
    const double tps = r.Get(name, "tokens/s");
    const double gflops = r.Get(name, "GFLOP/s");
    std::printf("  tp%d: %8.0f tokens/s  %5.1fx the reference  %6.1f GFLOP/s = %.2f of OpenBLAS sgemm\n", tp, tps,
                ref > 0 ? tps / ref : 0.0, gflops, blas > 0 ? gflops / blas : 0.0);
  }
  std::printf("  reference (one token at a time): %.0f tokens/s\n", ref);
  std::printf("  GEMM [512x1024]x[1024x2816]: seam %.1f GFLOP/s, OpenBLAS %.1f GFLOP/s (%.2f)\n",
              r.Get("BM_GemmSeam", "GFLOP/s"), blas, blas > 0 ? r.Get("BM_GemmSeam", "GFLOP/s") / blas : 0.0);
  benchmark::Shutdown();
  return 0;
}
