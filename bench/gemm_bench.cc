// seam::Gemm against OpenBLAS on the same shapes: y[M, N] = x[M, K] *
// w[N, K]^T (row-major, w as a Linear weight). The baseline is sgemm, and
// sgemv at M = 1 (sgemm spends a single row's time packing). Gemm runs twice:
// with w as floats, and with w's values rounded to bf16 and kept in 16 bits
// (as a bf16 run keeps its weights; OpenBLAS here has no bf16 product, so
// both are compared with the fp32 baseline). Both sides
// allocate their output in every call, as Gemm returns a new tensor; OpenBLAS
// runs on one thread, as Gemm does (run the program under `taskset -c 0`).
//
// Each shape runs 7 times, the two sides' repetitions interleaved in random
// order so a drift in the machine's speed falls on both; after the table come
// each side's median GFLOP/s, its spread (coefficient of variation) and the
// ratio of the medians.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "seam/runtime/gemm.h"
#include "seam/runtime/tensor.h"
#include "tensor/gemm_internal.h"

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
  state.counters["GFLOP"] = benchmark::Counter(2e-9 * m * n * k, benchmark::Counter::kIsIterationInvariantRate);
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

void BM_SeamBf16(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), k = static_cast<int>(state.range(1)),
            n = static_cast<int>(state.range(2));
  const seam::Tensor x = Make(m, k, 1), w = Make(n, k, 2);
  std::vector<uint16_t> halves;
  for (float v : w.span()) halves.push_back(seam::Bf16Bits(v));
  const seam::MatrixView wb = seam::MatrixView::Bf16(halves.data(), n, k, static_cast<size_t>(k));
  for (auto _ : state) {
    seam::Tensor y = seam::Gemm(x, wb);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  SetFlops(state, m, n, k);
}

void BM_OpenBlas(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), k = static_cast<int>(state.range(1)),
            n = static_cast<int>(state.range(2));
  const seam::Tensor x = Make(m, k, 1), w = Make(n, k, 2);
  for (auto _ : state) {
    seam::Tensor y(m, n);
    if (m == 1) {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w.data(), k, x.data(), 1, 0.0f, y.data(), 1);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, y.data(), n);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(m == 1 ? "sgemv" : "sgemm");
  SetFlops(state, m, n, k);
}

// Gemm's AVX2 and AVX-512 paths on few rows, where Gemm picks between them
// (they give the same bits; the choice is speed alone).
void BM_SeamPath(benchmark::State& state) {
  using seam::gemm_internal::Path;
  const Path path = state.range(0) == 512 ? Path::kAvx512 : Path::kAvx2;
  const int m = static_cast<int>(state.range(1)), k = 1024, n = static_cast<int>(state.range(2));
  if (!seam::gemm_internal::Supported(path)) return state.SkipWithError("this CPU lacks the path");
  const seam::Tensor x = Make(m, k, 1), w = Make(n, k, 2);
  for (auto _ : state) {
    seam::Tensor y = seam::gemm_internal::GemmOn(path, x, w);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  SetFlops(state, m, n, k);
}
BENCHMARK(BM_SeamPath)
    ->ArgNames({"avx", "M", "N"})
    ->ArgsProduct({{2, 512}, {1, 2}, {1024, 2816}})
    ->Unit(benchmark::kMicrosecond);

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N"});
  for (int n : {1024, 2816}) {
    for (int m : {1, 2, 64, 512}) b->Args({m, 1024, n});
  }
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_Seam)->Apply(Shapes);
BENCHMARK(BM_SeamBf16)->Apply(Shapes);
BENCHMARK(BM_OpenBlas)->Apply(Shapes);

// The console table, then per shape each side's median GFLOP/s and spread
// and the ratio of the medians.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Aggregate || r.error_occurred) continue;
      if (r.aggregate_name != "median" && r.aggregate_name != "cv") continue;
      const std::string name = r.run_name.str();  // BM_Seam/M:1/K:1024/N:1024
      const size_t slash = name.find('/');
      const std::string shape = slash == std::string::npos ? "" : name.substr(slash + 1);
      if (std::find(shapes_.begin(), shapes_.end(), shape) == shapes_.end()) shapes_.push_back(shape);
      const std::string bench = name.substr(0, slash);
      Side& side = (bench == "BM_Seam" ? seam_ : bench == "BM_SeamBf16" ? bf16_ : blas_)[shape];
      (r.aggregate_name == "median" ? side.median : side.cv) = r.counters.at("GFLOP").value;
      if (!r.report_label.empty()) side.label = r.report_label;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void PrintRatios() const {
    std::printf("\n%-22s %14s %7s %14s %7s %14s %7s %6s %7s %7s\n", "shape", "seam GF/s med", "cv", "bf16 w med", "cv",
                "OpenBLAS med", "cv", "as", "ratio", "bf16 w");
    for (const std::string& shape : shapes_) {
      const auto s = seam_.find(shape);
      const auto h = bf16_.find(shape);
      const auto b = blas_.find(shape);
      if (s == seam_.end() || h == bf16_.end() || b == blas_.end()) continue;
      std::printf("%-22s %14.2f %6.1f%% %14.2f %6.1f%% %14.2f %6.1f%% %6s %7.3f %7.3f\n", shape.c_str(),
                  s->second.median, 100 * s->second.cv, h->second.median, 100 * h->second.cv, b->second.median,
                  100 * b->second.cv, b->second.label.c_str(), s->second.median / b->second.median,
                  h->second.median / b->second.median);
    }
  }

 private:
  struct Side {
    double median = 0;
    double cv = 0;
    std::string label;
  };
  std::vector<std::string> shapes_;  // in the order they ran
  std::map<std::string, Side> seam_, bf16_, blas_;
};

// Repetitions, interleaving and aggregates unless the command line sets them.
std::vector<char*> WithDefaults(int argc, char** argv) {
  static char repetitions[] = "--benchmark_repetitions=7";
  static char interleave[] = "--benchmark_enable_random_interleaving=true";
  static char aggregates[] = "--benchmark_report_aggregates_only=true";
  std::vector<char*> args(argv, argv + argc);
  const auto given = [&](std::string_view flag) {
    return std::any_of(args.begin(), args.end(),
                       [&](const char* a) { return std::string_view(a).rfind(flag, 0) == 0; });
  };
  for (char* d : {repetitions, interleave, aggregates}) {
    const std::string_view flag(d);
    if (!given(flag.substr(0, flag.find('=')))) args.insert(args.begin() + 1, d);
  }
  args.push_back(nullptr);
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  openblas_set_num_threads(1);  // Gemm is single-threaded by design
  std::vector<char*> args = WithDefaults(argc, argv);
  int count = static_cast<int>(args.size()) - 1;
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintRatios();
  benchmark::Shutdown();
  return 0;
}
