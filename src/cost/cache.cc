#include "cost/cache.h"

#include "seam/stage_shape.h"

#include <algorithm>

namespace seam {

// An fp8 KV cache is scaled per tensor (the engines' kv_cache_dtype fp8):
// no per-row scales as the wire's fp8 rows have.
CacheBytes CacheBytesOf(WireDtype kv, MemoryFill fill) {
  return {.kv = ElementBytes(kv), .conv = 2, .state = fill == MemoryFill::kSglang ? 4.0 : 2.0};
}

CacheRow CacheOf(const StageDecl& d, const ModelDims& dims, const ParallelConfig& cfg, const CacheBytes& b) {
  const int attn_tp = cfg.attn_tp();
  if (d.kind == StageKind::kAttention) return {.per_token = CacheWidth(d, &dims, 0, cfg) * b.kv};
  if (d.kind == StageKind::kMixer) {
    // Per rank: its heads' states and conv channels, and its groups' (one
    // each, replicated, once attention TP exceeds them, as the engines
    // round the groups up to the TP size).
    const double heads = static_cast<double>(dims.mixer_heads) / attn_tp;
    const double state = std::max(1, dims.mixer_state);
    const double groups = std::max(1, std::max(1, dims.mixer_groups) / attn_tp);
    const double channels = heads * dims.mixer_head_dim + 2.0 * groups * state;
    const double conv = channels * std::max(0, dims.mixer_conv - 1);
    return {.per_sequence = heads * dims.mixer_head_dim * state * b.state + conv * b.conv};
  }
  return {};
}

}  // namespace seam
