#include "cost/cache.h"

#include <algorithm>

namespace seam {

CacheRow CacheOf(const StageDecl& d, const ModelDims& dims, const ParallelConfig& cfg, double kv_bytes) {
  const int attn_tp = cfg.attn_tp();
  if (d.kind == StageKind::kAttention) {
    if (dims.mla.kv_lora > 0) return {.per_token = (dims.mla.kv_lora + dims.mla.qk_rope) * kv_bytes};
    const int kv = d.kv_heads > 0 ? d.kv_heads : dims.kv_heads;
    const int per_rank = std::max(1, kv / attn_tp);  // replicated when attn_tp exceeds them
    return {.per_token = 2.0 * per_rank * dims.head_dim * kv_bytes};
  }
  if (d.kind == StageKind::kMixer) {
    // The recurrent state, fp32, split over attention TP by head.
    const double state = 4.0 * dims.mixer_heads * dims.mixer_head_dim * std::max(1, dims.mixer_state);
    return {.per_sequence = state / attn_tp};
  }
  return {};
}

}  // namespace seam
