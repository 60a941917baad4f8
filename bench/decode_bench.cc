// Decoding with a KV cache against the same steps run as full forward
// passes, on threads, for a Llama-like model whose weights (about 620 MB in
// bf16) do not fit in the caches, in one program:
// - decode tokens/s at batch 1, 16 and 64 and tp 1 and 2: each request
//   prefills a prompt of kPrompt tokens, then decodes kDecode tokens, one a
//   step; only the decode steps are timed;
// - the baseline: each of those decode steps run as a full forward pass over
//   every request's sequence so far (no cache), counting the same new tokens;
// - at batch 1, the fraction of the memory-bandwidth bound: the bytes a
//   decode step reads (every weight a rank holds but the embedding table, one
//   embedding row, and the cache over the context) over the read bandwidth
//   this run measures reading those weights where they lie, with one thread
//   per rank, against the measured step.
//
// Every measurement runs kRepetitions times after one untimed run; the
// summary gives medians and the spread (max - min) / median.
#include <fmt/format.h>

#include <immintrin.h>
#include <algorithm>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "seam/bind.h"
#include "seam/runtime/exec.h"
#include "seam/runtime/generate.h"
#include "seam/weight_specs.h"

namespace {

constexpr int kPrompt = 4;
constexpr int kDecode = 4;
constexpr int kRepetitions = 5;
constexpr seam::Dtype kDtype = seam::Dtype::kBf16;

seam::Model BenchModel() {
  seam::Model m = seam::LlamaModel(4);
  m.hidden = 2048;
  m.dims = seam::ModelDims{.vocab = 32000,
                           .heads = 16,
                           .kv_heads = 4,
                           .head_dim = 128,
                           .rope_theta = 500000.0,
                           .rms_eps = 1e-5,
                           .intermediate = 5632};
  return m;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

struct Stat {
  double median = 0;
  double spread = 0;
};

Stat Summary(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double median = v[v.size() / 2];
  return {median, median > 0 ? (v.back() - v.front()) / median : 0};
}

// Requests of kPrompt tokens each generating kDecode + 1 tokens: one prefill
// step, then kDecode decode steps.
std::vector<seam::Request> Requests(int batch, int vocab) {
  std::vector<seam::Request> out;
  for (int r = 0; r < batch; ++r) {
    seam::Request q{.output = kDecode + 1};
    for (int t = 0; t < kPrompt; ++t) q.prompt.push_back((r * 7919 + t * 104729) % vocab);
    out.push_back(std::move(q));
  }
  return out;
}

struct Measured {
  Stat decode;        // tokens/s over the decode steps
  Stat full;          // tokens/s of the same steps as full forward passes
  Stat step_seconds;  // one decode step
};

Measured Measure(const seam::Model& m, const seam::Weights& w, int tp, int batch, bool baseline = true) {
  const seam::Pipeline plans = seam::BindPipeline(m, {.tp = tp, .reduction = seam::Reduction::kRs}).value();
  const std::vector<seam::Request> requests = Requests(batch, m.dims->vocab);
  const seam::RunOptions options{.dtype = kDtype};
  std::vector<double> decode, full, step;
  for (int rep = 0; rep <= kRepetitions; ++rep) {  // the first is not counted
    const seam::Generation g = seam::Generate(m, plans, w, requests, {}, options).value();
    double decode_seconds = 0;
    for (size_t s = 1; s < g.step_seconds.size(); ++s) decode_seconds += g.step_seconds[s];
    // The same steps without a cache: every sequence so far, whole.
    double full_seconds = baseline ? 0 : 1;
    for (int d = 1; baseline && d <= kDecode; ++d) {
      seam::Batch b;
      for (size_t q = 0; q < requests.size(); ++q) {
        std::vector<int> ids = requests[q].prompt;
        ids.insert(ids.end(), g.tokens[q].begin(), g.tokens[q].begin() + d);
        b.requests.push_back(std::move(ids));
      }
      const auto start = std::chrono::steady_clock::now();
      const seam::RunOutput out = seam::RunPlans(m, plans, w, b, options).value();
      full_seconds += Seconds(start);
    }
    if (rep == 0) continue;
    decode.push_back(batch * kDecode / decode_seconds);
    full.push_back(batch * kDecode / full_seconds);
    step.push_back(decode_seconds / kDecode);
  }
  return {Summary(decode), Summary(full), Summary(step)};
}

// Bytes one decode step of one request reads at a context of `context`
// tokens: every weight but the embedding table, one embedding row, and the
// cache of every rank.
int64_t StepBytes(const seam::Model& m, const seam::ParallelConfig& cfg, int context) {
  int64_t bytes = 0;
  const std::vector<seam::WeightSpec> specs = seam::WeightSpecs(m).value();
  for (const seam::WeightSpec& s : specs) {
    const bool embedding = s.name == seam::kEmbeddingName;
    bytes += seam::StoredBytes(embedding ? 1 : s.rows, s.cols, kDtype);
  }
  return bytes + seam::GenerationCacheBytes(m, cfg, {.fed = context, .requests = 1});
}

// The bytes of [p, p + n) folded together: AVX-512 loads into four
// independent registers where the CPU has them, else 16-byte loads into
// eight, to keep enough loads in flight to reach memory's bandwidth (as a
// STREAM read does).
[[gnu::target("avx512f")]] long long Read512(const char* p, size_t n) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 256 <= n; i += 256) {
    a0 = _mm512_xor_si512(a0, _mm512_loadu_si512(p + i));
    a1 = _mm512_xor_si512(a1, _mm512_loadu_si512(p + i + 64));
    a2 = _mm512_xor_si512(a2, _mm512_loadu_si512(p + i + 128));
    a3 = _mm512_xor_si512(a3, _mm512_loadu_si512(p + i + 192));
  }
  long long out[8];
  _mm512_storeu_si512(out, _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3)));
  for (; i < n; ++i) out[0] ^= p[i];
  return out[0] ^ out[7];
}

long long Read128(const char* p, size_t n) {
  using Lane = long long __attribute__((vector_size(16)));
  Lane acc[8] = {};
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    for (size_t j = 0; j < 8; ++j) {
      Lane v;
      std::memcpy(&v, p + i + 16 * j, sizeof v);
      acc[j] ^= v;
    }
  }
  long long out = 0;
  for (const Lane& a : acc) out ^= a[0] ^ a[1];
  for (; i < n; ++i) out ^= p[i];
  return out;
}

// The bytes of every weight a decode step reads (all but the embedding
// table), where the run keeps them.
std::vector<std::pair<const char*, size_t>> WeightBytes(const seam::Weights& w) {
  std::vector<std::pair<const char*, size_t>> out;
  for (const auto& [name, stored] : w.all()) {
    if (name == seam::kEmbeddingName) continue;
    const seam::MatrixView v = stored.view();
    const bool halves = v.storage() == seam::Dtype::kBf16;
    const char* data = halves ? reinterpret_cast<const char*>(v.bf16_data()) : reinterpret_cast<const char*>(v.data());
    out.emplace_back(data, static_cast<size_t>(v.rows()) * v.stride() * (halves ? 2 : 4));
  }
  return out;
}

// Bytes per second `threads` threads read of the weights themselves, each
// thread its share of every weight: the bound a step's reads cannot beat.
Stat ReadBandwidth(const seam::Weights& w, int threads) {
  const std::vector<std::pair<const char*, size_t>> parts = WeightBytes(w);
  size_t total = 0;
  for (const auto& [p, n] : parts) total += n;
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") != 0;
  std::vector<double> rates;
  std::vector<long long> sinks(static_cast<size_t>(threads));
  for (int rep = 0; rep <= kRepetitions; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        long long all = 0;
        for (const auto& [p, n] : parts) {
          const size_t first = n * static_cast<size_t>(t) / static_cast<size_t>(threads);
          const size_t last = n * static_cast<size_t>(t + 1) / static_cast<size_t>(threads);
          all ^= avx512 ? Read512(p + first, last - first) : Read128(p + first, last - first);
        }
        sinks[static_cast<size_t>(t)] = all;
      });
    }
    for (std::thread& th : pool) th.join();
    if (rep > 0) rates.push_back(static_cast<double>(total) / Seconds(start));
  }
  long long all = 0;
  for (long long s : sinks) all ^= s;
  if (all == 1) fmt::print("");  // keeps the reads
  return Summary(rates);
}

}  // namespace

int main(int argc, char** argv) {
  // `bench_decode TP BATCH`: that decode alone, for a profiler.
  if (argc == 3) {
    const seam::Model m = BenchModel();
    const seam::Weights w = seam::GenerateWeights(m, 1, kDtype).value();
    const Measured r = Measure(m, w, std::atoi(argv[1]), std::atoi(argv[2]), false);
    fmt::print("decode {:.1f} tokens/s, a step {:.2f} ms\n", r.decode.median, 1e3 * r.step_seconds.median);
    return 0;
  }
  const seam::Model m = BenchModel();
  const auto start = std::chrono::steady_clock::now();
  const seam::Weights w = seam::GenerateWeights(m, 1, kDtype).value();
  fmt::print(
      "weights in bf16 made in {:.1f} s; prompts of {} tokens, {} decode steps, medians of {} "
      "(spread: (max - min) / median)\n\n",
      Seconds(start), kPrompt, kDecode, kRepetitions);
  fmt::print("{:>3} {:>6} {:>22} {:>22} {:>9}\n", "tp", "batch", "decode tokens/s", "full forward tokens/s", "speedup");
  std::vector<std::pair<int, Measured>> one;  // batch 1, per tp
  for (int tp : {1, 2}) {
    for (int batch : {1, 16, 64}) {
      const Measured r = Measure(m, w, tp, batch);
      fmt::print("{:>3} {:>6} {:>14.1f} ({:4.1f}%) {:>14.1f} ({:4.1f}%) {:>8.1f}x\n", tp, batch, r.decode.median,
                 100 * r.decode.spread, r.full.median, 100 * r.full.spread, r.decode.median / r.full.median);
      if (batch == 1) one.emplace_back(tp, r);
    }
  }
  fmt::print("\nbatch 1 against the memory-bandwidth bound (a decode step at a context of {} to {} tokens):\n", kPrompt,
             kPrompt + kDecode - 1);
  for (const auto& [tp, r] : one) {
    const int64_t bytes = StepBytes(m, {.tp = tp}, kPrompt + kDecode / 2);
    const Stat bw = ReadBandwidth(w, tp);
    const double bound = static_cast<double>(bytes) / bw.median;
    fmt::print(
        "  tp{}: a step reads {:.0f} MB; {} thread{} read the weights at {:.1f} GB/s ({:.1f}%): bound {:.2f} ms, "
        "step {:.2f} ms ({:.1f}%), {:.2f} of the bound\n",
        tp, 1e-6 * static_cast<double>(bytes), tp, tp == 1 ? "" : "s", 1e-9 * bw.median, 100 * bw.spread, 1e3 * bound,
        1e3 * r.step_seconds.median, 100 * r.step_seconds.spread, bound / r.step_seconds.median);
  }
  return 0;
}
