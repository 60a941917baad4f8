// The memory a run on threads needs, estimated before a byte is allocated.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>

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

Expected<MemoryEstimate> EstimateRunMemory(const Model& m, const ParallelConfig& cfg, int tokens, Dtype d) {
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
  return e;
}

Status CheckRunMemory(const Model& m, const ParallelConfig& cfg, int tokens, Dtype d, int64_t limit) {
  Expected<MemoryEstimate> e = EstimateRunMemory(m, cfg, tokens, d);
  if (!e) return e.error();
  if (e->total() <= limit) return Status::Ok();
  // The estimate grows with the layers kept: search the most that fit.
  int lo = 0, hi = m.num_layers;
  while (lo < hi) {
    Model cut = m;
    cut.num_layers = (lo + hi + 1) / 2;
    Expected<MemoryEstimate> c = EstimateRunMemory(cut, cfg, tokens, d);
    if (c && c->total() <= limit) {
      lo = cut.num_layers;
    } else {
      hi = cut.num_layers - 1;
    }
  }
  const std::string fits = lo > 0 ? fmt::format("--layers {} fits", lo) : "no layer count fits";
  return InvalidArgument(fmt::format(
      "the run needs about {} (weights {}, working buffers {}, allocator {}) but the memory limit is {} "
      "(--max-memory); {}, and --backend record counts the plan without weights",
      SizeText(e->total()), SizeText(e->weights), SizeText(e->activations), SizeText(e->overhead()), SizeText(limit),
      fits));
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
  return InvalidArgument(fmt::format("attention over {} tokens in {} requests would take about {:.0f} s (its cost grows "
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

int64_t RunMemoryLimit(int64_t max_memory) {
  if (max_memory > 0) return max_memory;
  const int64_t available = AvailableMemory();
  return available > 0 ? available : std::numeric_limits<int64_t>::max();
}

}  // namespace seam
