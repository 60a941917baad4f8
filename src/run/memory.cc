// The memory a run on threads needs, estimated before a byte is allocated.
#include <fmt/format.h>

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>

#include "cost/cache.h"
#include "seam/runtime/exec.h"
#include "seam/runtime/weights.h"
#include "seam/stage_shape.h"

namespace seam {
namespace {

constexpr int64_t kBytes = sizeof(float);  // activations are held as fp32
// Working buffers a rank holds at once at its widest: its input, value,
// residual, a kernel's projections and its output, a collective's result.
constexpr int64_t kBuffers = 8;
// What a thread keeps of the blocks it freed.
constexpr int64_t kKeptPerThread = static_cast<int64_t>(RecycledBlocks::kMaxBytes);

std::string SizeText(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1 << 30) return fmt::format("{:.1f} GiB", b / (1 << 30));
  if (b >= 1 << 20) return fmt::format("{:.1f} MiB", b / (1 << 20));
  return fmt::format("{:.1f} KiB", b / (1 << 10));
}

}  // namespace

int64_t GenerationCacheBytes(const Model& m, const ParallelConfig& cfg, GenerationSize generation) {
  if (!m.dims || generation.requests == 0) return 0;
  const CacheBytes fp32{.kv = kBytes, .conv = kBytes, .state = kBytes};
  double per_token = 0, per_sequence = 0;
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
    const CacheRow row = CacheOf(s.decl, *m.dims, cfg, fp32);
    per_token += row.per_token;
    per_sequence += row.per_sequence;
  }
  // Each DP group's attention-TP ranks hold its requests' caches, on every
  // CP rank: each keeps the keys and values it gathers of every token (as
  // SGLang writes the gathered K/V into each CP rank's pool); under decode
  // context parallelism each token's entries are on one rank of its DCP
  // group. The generation keeps every token's final hidden state and logits.
  const double fed = static_cast<double>(generation.fed);
  const double bytes =
      cfg.cp * cfg.attn_tp() * (per_token * fed / cfg.dcp + per_sequence * static_cast<double>(generation.requests)) +
      fed * (m.hidden + m.dims->vocab) * kBytes;
  return static_cast<int64_t>(bytes);
}

Expected<MemoryEstimate> EstimateRunMemory(const Model& m, const ParallelConfig& cfg, int tokens, Dtype d,
                                           GenerationSize generation) {
  Expected<std::vector<WeightSpec>> specs = WeightSpecs(m);
  if (!specs) return specs.error();
  MemoryEstimate e;
  int64_t widest = static_cast<int64_t>(m.hidden) * m.residual_streams;
  for (const WeightSpec& s : *specs) {
    e.weights += StoredBytes(s.rows, s.cols, d);
    if (s.stage >= 0) widest = std::max<int64_t>(widest, std::max(s.rows, s.cols));
  }
  const int64_t ranks = static_cast<int64_t>(cfg.tp) * cfg.pp;
  const int64_t live = kBuffers * tokens * widest * kBytes;
  e.activations = (ranks + 1) * (live + std::min(live, kKeptPerThread));
  e.cache = GenerationCacheBytes(m, cfg, generation);
  return e;
}

Status CheckRunMemory(const Model& m, const ParallelConfig& cfg, int tokens, Dtype d, const MemoryLimit& limit,
                      GenerationSize generation) {
  Expected<MemoryEstimate> e = EstimateRunMemory(m, cfg, tokens, d, generation);
  if (!e) return e.error();
  if (e->total() <= limit.bytes) return Status::Ok();
  // The estimate grows with the layers kept: search the most that fit.
  int lo = 0, hi = m.num_layers;
  while (lo < hi) {
    Model cut = m;
    cut.num_layers = (lo + hi + 1) / 2;
    Expected<MemoryEstimate> c = EstimateRunMemory(cut, cfg, tokens, d, generation);
    if (c && c->total() <= limit.bytes) {
      lo = cut.num_layers;
    } else {
      hi = cut.num_layers - 1;
    }
  }
  const std::string fits = lo > 0 ? fmt::format("--layers {} fits", lo) : "no layer count fits";
  const std::string cache =
      e->cache > 0 ? fmt::format(", the generation's caches and outputs {}", SizeText(e->cache)) : "";
  return InvalidArgument(
      fmt::format("the run needs about {} (weights {}, working buffers {}{}, allocator {}) but the memory limit is {} "
                  "({}); {}, and --backend record counts the plan without weights",
                  SizeText(e->total()), SizeText(e->weights), SizeText(e->activations), cache, SizeText(e->overhead()),
                  SizeText(limit.bytes), limit.source, fits));
}

double AttentionFlops(const Model& m, const Batch& b) {
  if (!m.dims) return 0;
  const ModelDims& d = *m.dims;
  const double qk = d.mla.kv_lora > 0 ? d.mla.qk_nope + d.mla.qk_rope : d.head_dim;
  const double v = d.mla.kv_lora > 0 ? d.mla.v : d.head_dim;
  double stages = 0;
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) stages += s.decl.kind == StageKind::kAttention;
  double pairs = 0;  // (query, key) pairs of causal attention over the batch
  for (const auto& r : b.requests) pairs += 0.5 * static_cast<double>(r.size()) * static_cast<double>(r.size() + 1);
  return 2.0 * 2.0 * pairs * d.heads * (qk + v) * stages;  // multiply-adds, ranks and reference
}

Status CheckRunSeconds(const Model& m, const Batch& b, double max_seconds) {
  const double seconds = AttentionFlops(m, b) / kAttentionFlopsPerSecond;
  if (seconds <= max_seconds) return Status::Ok();
  return InvalidArgument(
      fmt::format("attention over {} tokens in {} requests would take about {:.0f} s (its cost grows "
                  "with the square of a request's length), more than --max-seconds {:g}; use fewer "
                  "tokens or more requests, or raise --max-seconds",
                  b.tokens(), b.requests.size(), seconds, max_seconds));
}

int64_t AvailableMemory() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t kib = 0;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

namespace {

// The first number a /proc or /sys file holds after `key` ("" for the
// first word of the file), or nothing ("max", missing, unreadable).
std::optional<int64_t> NumberIn(const char* path, std::string_view key, int64_t unit) {
  std::ifstream in(path);
  std::string word;
  while (in >> word) {
    if (!key.empty() && word != key) continue;
    int64_t n = 0;
    if (!key.empty() && !(in >> n)) return std::nullopt;
    if (key.empty() && std::from_chars(word.data(), word.data() + word.size(), n).ec != std::errc())
      return std::nullopt;
    return n * unit;
  }
  return std::nullopt;
}

// What ulimit -v leaves this process: its limit less what it has mapped.
std::optional<int64_t> AddressSpaceLeft() {
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return std::nullopt;
  const int64_t mapped = NumberIn("/proc/self/status", "VmSize:", 1024).value_or(0);
  return std::max<int64_t>(0, static_cast<int64_t>(std::min<rlim_t>(r.rlim_cur, INT64_MAX)) - mapped);
}

// What the cgroup this process runs in (v2) leaves it: memory.max less memory.current.
std::optional<int64_t> CgroupLeft() {
  const std::optional<int64_t> max = NumberIn("/sys/fs/cgroup/memory.max", "", 1);
  if (!max) return std::nullopt;
  return std::max<int64_t>(0, *max - NumberIn("/sys/fs/cgroup/memory.current", "", 1).value_or(0));
}

}  // namespace

MemoryLimit RunMemoryLimit(int64_t max_memory) {
  if (max_memory > 0) return {max_memory, "--max-memory"};
  MemoryLimit out{std::numeric_limits<int64_t>::max(), "none could be told"};
  const auto least = [&](std::optional<int64_t> bytes, const char* source) {
    if (bytes && *bytes < out.bytes) out = {*bytes, fmt::format("{}; --max-memory sets another", source)};
  };
  const int64_t available = AvailableMemory();
  least(available > 0 ? std::optional(available) : std::nullopt, "the memory available now");
  least(AddressSpaceLeft(), "what ulimit -v leaves this process");
  least(CgroupLeft(), "what the cgroup's memory.max leaves this process");
  return out;
}

}  // namespace seam
