// seam::Gemm against OpenBLAS sgemm on the same shapes: y[M, N] = x[M, K] *
// w[N, K]^T (row-major, w as a Linear weight). Both report GFLOP/s; after the
// table the ratio seam / OpenBLAS is printed per shape. OpenBLAS runs on one
// thread, as Gemm does (run the program under `taskset -c 0`).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "seam/runtime/gemm.h"
#include "seam/runtime/tensor.h"

namespace {

seam::Tensor Make(int rows, int cols, uint32_t seed) {
  seam::Tensor t(rows, cols);
  uint32_t h = seed * 0x9e3779b9u + 1;
  for (float& v : t.span()) {
    h ^= h << 13;
    h ^= h >> 17;
    h ^= h << 5;
    v = (static_cast<float>(h >> 8) / 16777216.0f - 0.5f) * 0.1f;
  }
  return t;
}

void SetFlops(benchmark::State& state, int m, int n, int k) {
  state.counters["GFLOP"] =
      benchmark::Counter(2e-9 * m * n * k, benchmark::Counter::kIsIterationInvariantRate);
}

// Arguments: M, K, N.
void BM_Seam(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), k = static_cast<int>(state.range(1)),
            n = static_cast<int>(state.range(2));
  const seam::Tensor x = Make(m, k, 1), w = Make(n, k, 2);
  for (auto _ : state) {
    seam::Tensor y = seam::Gemm(x, w);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  SetFlops(state, m, n, k);
}

void BM_OpenBlas(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), k = static_cast<int>(state.range(1)),
            n = static_cast<int>(state.range(2));
  const seam::Tensor x = Make(m, k, 1), w = Make(n, k, 2);
  seam::Tensor y(m, n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, y.data(), n);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  SetFlops(state, m, n, k);
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N"});
  for (int n : {1024, 2816}) {
    for (int m : {1, 64, 512}) b->Args({m, 1024, n});
  }
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_Seam)->Apply(Shapes);
BENCHMARK(BM_OpenBlas)->Apply(Shapes);

// The console table, then GFLOP/s of both and seam / OpenBLAS per shape.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      const std::string name = r.benchmark_name();  // BM_Seam/M:1/K:1024/N:1024
      const size_t slash = name.find('/');
      const std::string shape = slash == std::string::npos ? "" : name.substr(slash + 1);
      const double gflops = r.counters.at("GFLOP").value;
      if (std::find(shapes_.begin(), shapes_.end(), shape) == shapes_.end()) shapes_.push_back(shape);
      (name.rfind("BM_Seam", 0) == 0 ? seam_ : blas_)[shape] = gflops;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void PrintRatios() const {
    std::printf("\n%-22s %12s %12s %10s\n", "shape", "seam GF/s", "OpenBLAS", "ratio");
    for (const std::string& shape : shapes_) {
      const auto s = seam_.find(shape);
      const auto b = blas_.find(shape);
      if (s == seam_.end() || b == blas_.end()) continue;
      std::printf("%-22s %12.2f %12.2f %10.3f\n", shape.c_str(), s->second, b->second, s->second / b->second);
    }
  }

 private:
  std::vector<std::string> shapes_;  // in the order they ran
  std::map<std::string, double> seam_, blas_;
};

}  // namespace

int main(int argc, char** argv) {
  openblas_set_num_threads(1);  // Gemm is single-threaded by design
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintRatios();
  benchmark::Shutdown();
  return 0;
}
