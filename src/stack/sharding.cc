// Whether a model's sizes split over a parallel configuration.
#include "seam/sharding.h"

#include <fmt/format.h>

namespace seam {
namespace {

// A group a size is split over, and where its size comes from.
struct Split {
  std::string_view name;
  int size = 1;
  std::string origin;  // "tp 3 / attn_dp 1", the flags that set it
};

std::string Divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

// `why`, when given, says what must stay whole on a rank.
Status Splits(std::string_view field, int value, const Split& by, std::string_view why = "") {
  if (value % by.size == 0) return Status::Ok();
  return InvalidArgument(fmt::format("{} = {} does not split over {} = {} ({}); {}{} must divide {}: {}", field, value,
                                     by.name, by.size, by.origin, why.empty() ? "" : fmt::format("{}, so ", why),
                                     by.name, value, Divisors(value)));
}

// Engines split key/value heads over attention TP, or give every rank a
// copy of one when attn_tp is a multiple of them.
Status KvHeadsSplit(std::string_view field, int kv, const Split& by) {
  if (kv % by.size == 0 || by.size % kv == 0) return Status::Ok();
  return InvalidArgument(
      fmt::format("{} = {} does not split over {} = {} ({}), nor is {} a multiple of it to "
                  "replicate them; {} must divide {} ({}) or be a multiple of it",
                  field, kv, by.name, by.size, by.origin, by.name, by.name, kv, Divisors(kv)));
}

// A DCP group splits the cache of the key/value heads its ranks share, so
// they must hold the same ones: attention TP replicates each head over
// attn_tp / kv consecutive ranks, and dcp must divide that (vLLM's ceiling,
// dcp <= tp / num_key_value_heads). MLA's one latent is on every rank.
Status DcpSharesKvHeads(std::string_view field, int kv, const ParallelConfig& cfg) {
  if (cfg.dcp == 1 || cfg.attn_tp() % (kv * cfg.dcp) == 0) return Status::Ok();
  const int copies = cfg.attn_tp() % kv == 0 ? cfg.attn_tp() / kv : 1;
  return InvalidArgument(fmt::format(
      "dcp = {} needs {} attention-TP ranks that hold the same key/value heads; {} = {} over attn_tp = {} puts "
      "each head on {} rank{}, so dcp must divide {} (attn_tp / key/value heads): {}",
      cfg.dcp, cfg.dcp, field, kv, cfg.attn_tp(), copies, copies == 1 ? "" : "s", copies, Divisors(copies)));
}

// A mixer's heads split over attention TP, and its groups of heads split
// whole: each rank holds the groups its heads use. Mamba2's groups share B
// and C, and its gated RMSNorm normalises each group's channels together;
// replicating a group on several ranks (vLLM's way with n_groups = 1) would
// leave each with part of a group to norm, a sum of squares across ranks
// that the plan has no collective for. Gated DeltaNet's key heads split
// the same way, as vLLM and SGLang shard them (its norm is per value head,
// so one rule serves both kinds).
Status MixerSplits(const ModelDims& d, const Split& by) {
  SEAM_RETURN_IF_ERROR(Splits("the mixer heads", d.mixer_heads, by));
  switch (d.mixer) {
    case MixerKind::kMamba2:
      return Splits("n_groups", d.mixer_groups, by,
                    "each rank holds whole groups of Mamba2 heads (their B and C, and the gated norm over each)");
    case MixerKind::kGatedDeltaNet:
      return Splits("linear_num_key_heads", d.mixer_groups, by,
                    "each rank holds whole key heads with the value heads that share them");
  }
  return Status::Ok();
}

struct Groups {
  Split attn_tp, dense_tp, tp;
};

Groups GroupsOf(const ParallelConfig& cfg) {
  return {{"attn_tp", cfg.attn_tp(), fmt::format("tp {} / attn_dp {}", cfg.tp, cfg.attn_dp)},
          {"dense_tp", cfg.dense_tp_size(), cfg.dense_tp == 0 ? "the default, tp" : "--dense-tp"},
          {"tp", cfg.tp, "--tp"}};
}

std::string LayerField(const StageRef& s, std::string_view field) {
  return fmt::format("layer {}'s {}", s.layer, field);
}

// What an inference engine would refuse to shard, one stage at a time.
Status StageSplits(const StageRef& s, const ModelDims& d, const ParallelConfig& cfg, const Groups& g) {
  switch (s.decl.kind) {
    case StageKind::kAttention: {
      SEAM_RETURN_IF_ERROR(Splits("num_attention_heads", d.heads, g.attn_tp));
      if (d.mla.kv_lora > 0) return Status::Ok();  // MLA's latent is whole on every rank
      const bool own = s.decl.kv_heads > 0;
      const std::string field = own ? LayerField(s, "key/value heads") : "num_key_value_heads";
      const int kv = own ? s.decl.kv_heads : d.kv_heads;
      if (kv < 1 || d.heads % kv != 0) {
        return InvalidArgument(
            fmt::format("num_attention_heads = {} is not a multiple of {} = {}", d.heads, field, kv));
      }
      SEAM_RETURN_IF_ERROR(KvHeadsSplit(field, kv, g.attn_tp));
      return DcpSharesKvHeads(field, kv, cfg);
    }
    case StageKind::kMixer: return MixerSplits(d, g.attn_tp);
    case StageKind::kDenseFfn:
      if (s.decl.ffn_width > 0) return Splits(LayerField(s, "FFN width"), s.decl.ffn_width, g.dense_tp);
      return Splits("intermediate_size", d.intermediate, g.dense_tp);
    case StageKind::kSparseFfn:
      if (cfg.moe == MoeMode::kA2a) return Status::Ok();  // each expert is whole on the rank that owns it
      SEAM_RETURN_IF_ERROR(Splits("moe_intermediate_size", d.moe_intermediate, g.tp));
      if (d.shared_intermediate > 0) return Splits("the shared expert width", d.shared_intermediate, g.tp);
      return Status::Ok();
    case StageKind::kLinear:
    case StageKind::kNoOp: break;
  }
  return Status::Ok();
}

Status IntoBlocks(std::string_view what, int width, int k_blocks) {
  if (width % k_blocks == 0) return Status::Ok();
  return InvalidArgument(
      fmt::format("{} = {} does not split into the {} K-blocks of the canonical reduction", what, width, k_blocks));
}

// Every row-parallel product is summed over the canonical K-blocks.
Status StageBlocks(const StageRef& s, const ModelDims& d, int k) {
  switch (s.decl.kind) {
    case StageKind::kAttention:
      if (d.mla.kv_lora > 0) return IntoBlocks("the attention output width", d.heads * d.mla.v, k);
      return IntoBlocks("the attention output width", d.heads * d.head_dim, k);
    case StageKind::kMixer: return IntoBlocks("the mixer width", d.mixer_heads * d.mixer_head_dim, k);
    case StageKind::kDenseFfn: return IntoBlocks("the dense FFN width", FfnWidthOf(s.decl, d), k);
    case StageKind::kSparseFfn:
      SEAM_RETURN_IF_ERROR(IntoBlocks("the expert width", d.moe_intermediate, k));
      if (d.shared_intermediate > 0) return IntoBlocks("the shared expert width", d.shared_intermediate, k);
      return Status::Ok();
    case StageKind::kLinear:
    case StageKind::kNoOp: break;
  }
  return Status::Ok();
}

}  // namespace

Status CheckEngineSplits(const Model& m, const ParallelConfig& cfg) {
  if (!m.dims) return Status::Ok();
  const Groups groups = GroupsOf(cfg);
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
    SEAM_RETURN_IF_ERROR(StageSplits(s, *m.dims, cfg, groups));
  }
  return Status::Ok();
}

Status CheckSharding(const Model& m, const ParallelConfig& cfg) {
  SEAM_RETURN_IF_ERROR(CheckEngineSplits(m, cfg));
  const std::vector<StageRef> stages = m.dims ? StagesOf(m, 0, m.num_layers) : std::vector<StageRef>{};
  SEAM_RETURN_IF_ERROR(CheckSumGroups(cfg));
  for (const StageRef& s : stages) {
    SEAM_RETURN_IF_ERROR(StageBlocks(s, *m.dims, CanonicalKBlocks(cfg)));
  }
  return Status::Ok();
}

}  // namespace seam
