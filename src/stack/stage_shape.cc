// One row per stage kind (the dense FFN's per width, the MoE's per mode).
#include "seam/stage_shape.h"

#include <algorithm>

namespace seam {
namespace {

StageShape DenseFfn(const ParallelConfig& cfg) {
  switch (DenseWidthOf(cfg)) {
    case DenseWidth::kTp: return {Rows::Full(), Owed::kTp, Group::kTp};
    case DenseWidth::kAttnTp: return {Rows::Attention(cfg), Owed::kAttnTp, Group::kAttnTp};
    case DenseWidth::kRank: break;
  }
  return {Rows::Slice(cfg), Owed::kNothing, std::nullopt};  // its own rows, replicated weights
}

}  // namespace

StageShape ShapeOf(const StageDecl& d, const ParallelConfig& cfg) {
  switch (d.kind) {
    case StageKind::kAttention:
    case StageKind::kMixer: return {Rows::Attention(cfg), Owed::kAttnTp, Group::kAttnTp};  // heads split
    case StageKind::kLinear: return {Rows::Attention(cfg), Owed::kNothing, std::nullopt};  // replicated
    case StageKind::kDenseFfn: return DenseFfn(cfg);
    case StageKind::kSparseFfn:
      // a2a: each row goes to its experts' owners and the combine sums it back.
      // Its experts are spread over the expert group (each group holds them all).
      if (cfg.moe == MoeMode::kA2a) return {Rows::Slice(cfg), Owed::kNothing, A2aGroup(cfg)};
      return {Rows::Full(), Owed::kTp, Group::kTp};
    case StageKind::kNoOp: break;
  }
  SEAM_CHECK(false, "a no-op stage computes nothing");
  return {};
}

StageShape LmHeadShape(const ParallelConfig& cfg) {
  if (cfg.dp_lm_head) return {Rows::Attention(cfg), Owed::kNothing, Group::kAttnTp};
  return {Rows::Full(), Owed::kNothing, Group::kTp};
}

StageShape EmbeddingShape(const ParallelConfig& cfg) {
  if (cfg.shards() == 1) return {Rows::Full(), Owed::kTp, Group::kTp};
  return {Rows::Attention(cfg), Owed::kNothing, std::nullopt};
}

int CacheWidth(const StageDecl& d, const ModelDims* dims, int hidden, const ParallelConfig& cfg) {
  SEAM_CHECK(d.kind == StageKind::kAttention, "only an attention caches keys and values");
  if (dims == nullptr) return 2 * hidden;
  if (dims->mla.kv_lora > 0) return dims->mla.kv_lora + dims->mla.qk_rope;
  const int kv = d.kv_heads > 0 ? d.kv_heads : dims->kv_heads;
  return 2 * std::max(1, kv / cfg.attn_tp()) * dims->head_dim;
}

namespace {

// A rank's query heads and their qk and v widths.
struct RankHeads {
  int heads, qk, v;
};
RankHeads HeadsOf(const StageDecl& d, const ModelDims* dims, int hidden, const ParallelConfig& cfg) {
  SEAM_CHECK(d.kind == StageKind::kAttention, "only an attention has query heads");
  if (dims == nullptr) return {1, hidden / cfg.attn_tp(), hidden / cfg.attn_tp()};
  const int heads = dims->heads / cfg.attn_tp();
  if (dims->mla.kv_lora > 0) return {heads, dims->mla.qk_nope + dims->mla.qk_rope, dims->mla.v};
  return {heads, dims->head_dim, dims->head_dim};
}

}  // namespace

int QueryWidth(const StageDecl& d, const ModelDims* dims, int hidden, const ParallelConfig& cfg) {
  const RankHeads h = HeadsOf(d, dims, hidden, cfg);
  return h.heads * h.qk;
}

int PartialWidth(const StageDecl& d, const ModelDims* dims, int hidden, const ParallelConfig& cfg) {
  const RankHeads h = HeadsOf(d, dims, hidden, cfg);
  return h.heads * (h.v + 2);
}

}  // namespace seam
