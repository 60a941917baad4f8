// A model's weights by name and shape, as Hugging Face checkpoints of its
// family hold them; the generator, the checkpoint readers and the cost
// model's memory count all read this one list.
#include "seam/weight_specs.h"

#include <fmt/format.h>

#include <string_view>

namespace seam {
namespace {

void AddLinear(std::vector<WeightSpec>& out, const std::string& name, int rows, int cols, Held held = Held::kSplit) {
  out.push_back({.name = name, .rows = rows, .cols = cols, .kind = WeightKind::kLinear, .held = held});
}

void AddVector(std::vector<WeightSpec>& out, const std::string& name, int n, WeightKind kind = WeightKind::kLinear) {
  out.push_back({.name = name, .rows = 1, .cols = n, .kind = kind, .vector = true});
}

void AddFfn(std::vector<WeightSpec>& out, const std::string& prefix, int width, int hidden, Activation act,
            bool bias = false, Held held = Held::kSplit) {
  const bool gated = act != Activation::kRelu2;
  if (gated) AddLinear(out, prefix + ".gate_proj.weight", width, hidden, held);
  AddLinear(out, prefix + ".up_proj.weight", width, hidden, held);
  AddLinear(out, prefix + ".down_proj.weight", hidden, width, held);
  if (!bias) return;
  if (gated) AddVector(out, prefix + ".gate_proj.bias", width);
  AddVector(out, prefix + ".up_proj.bias", width);
  AddVector(out, prefix + ".down_proj.bias", hidden);
}

void AddMla(std::vector<WeightSpec>& out, const std::string& p, int hidden, const ModelDims& d) {
  const MlaDims& m = d.mla;
  const int q_width = d.heads * (m.qk_nope + m.qk_rope);
  if (m.q_lora > 0) {
    AddLinear(out, p + ".q_a_proj.weight", m.q_lora, hidden, Held::kWhole);
    AddVector(out, p + ".q_a_layernorm.weight", m.q_lora, WeightKind::kNorm);
    AddLinear(out, p + ".q_b_proj.weight", q_width, m.q_lora);
  } else {
    AddLinear(out, p + ".q_proj.weight", q_width, hidden);
  }
  AddLinear(out, p + ".kv_a_proj_with_mqa.weight", m.kv_lora + m.qk_rope, hidden, Held::kWhole);
  AddVector(out, p + ".kv_a_layernorm.weight", m.kv_lora, WeightKind::kNorm);
  AddLinear(out, p + ".kv_b_proj.weight", d.heads * (m.qk_nope + m.v), m.kv_lora);
  AddLinear(out, p + ".o_proj.weight", hidden, d.heads * m.v);
}

void AddAttention(std::vector<WeightSpec>& out, const std::string& p, const StageDecl& decl, int hidden,
                  const ModelDims& d) {
  if (d.mla.kv_lora > 0) return AddMla(out, p, hidden, d);
  const int q = d.heads * d.head_dim;
  const int kv = (decl.kv_heads > 0 ? decl.kv_heads : d.kv_heads) * d.head_dim;
  AddLinear(out, p + ".q_proj.weight", q, hidden);
  AddLinear(out, p + ".k_proj.weight", kv, hidden);
  AddLinear(out, p + ".v_proj.weight", kv, hidden);
  AddLinear(out, p + ".o_proj.weight", hidden, q);
  if (d.qkv_bias) {
    AddVector(out, p + ".q_proj.bias", q);
    AddVector(out, p + ".k_proj.bias", kv);
    AddVector(out, p + ".v_proj.bias", kv);
    AddVector(out, p + ".o_proj.bias", hidden);
  }
  if (d.qk_norm) {
    AddVector(out, p + ".q_norm.weight", d.head_dim, WeightKind::kNorm);
    AddVector(out, p + ".k_norm.weight", d.head_dim, WeightKind::kNorm);
  }
  if (d.attention_sinks) AddVector(out, p + ".sinks", d.heads, WeightKind::kEmbedding);
  if (d.attention_gate) AddLinear(out, p + ".gate_proj.weight", q, hidden);
}

void AddMoe(std::vector<WeightSpec>& out, const std::string& p, int hidden, const ModelDims& d) {
  AddLinear(out, p + ".gate.weight", d.experts + (d.skip_expert ? 1 : 0), hidden, Held::kWhole);
  if (d.moe_bias) AddVector(out, p + ".gate.bias", d.experts + (d.skip_expert ? 1 : 0));
  if (d.correction_bias) AddVector(out, p + ".gate.e_score_correction_bias", d.experts);
  for (int e = 0; e < d.experts; ++e) {
    AddFfn(out, fmt::format("{}.experts.{}", p, e), d.moe_intermediate, hidden, d.activation, d.moe_bias);
  }
  if (d.shared_intermediate > 0) {
    AddFfn(out, p + ".shared_expert", d.shared_intermediate, hidden, d.activation, false, Held::kShared);
  }
  if (d.shared_expert_gate) AddLinear(out, p + ".shared_expert_gate.weight", 1, hidden, Held::kWhole);
}

// Mamba2 (Hugging Face's NemotronHMamba2Mixer): in_proj gives z, the conv's
// input [x | B | C] and dt; the conv weight is HF's [conv_dim, 1, width]
// without its unit middle dimension.
void AddMamba2(std::vector<WeightSpec>& out, const std::string& p, int hidden, const ModelDims& d) {
  const int width = d.mixer_heads * d.mixer_head_dim;
  const int conv = width + 2 * d.mixer_groups * d.mixer_state;
  AddLinear(out, p + ".in_proj.weight", width + conv + d.mixer_heads, hidden);
  out.push_back({p + ".conv1d.weight", conv, d.mixer_conv, WeightKind::kConv});
  AddVector(out, p + ".conv1d.bias", conv);
  AddVector(out, p + ".dt_bias", d.mixer_heads);
  AddVector(out, p + ".A_log", d.mixer_heads, WeightKind::kDecay);
  AddVector(out, p + ".D", d.mixer_heads, WeightKind::kNorm);  // near one, as HF initialises it
  AddVector(out, p + ".norm.weight", width, WeightKind::kNorm);
  AddLinear(out, p + ".out_proj.weight", hidden, width);
}

// Gated DeltaNet (Hugging Face's Qwen3NextGatedDeltaNet): in_proj_qkvz
// holds per key head [q | k | v | z] of its value heads and in_proj_ba per
// key head [b | a]; the conv runs over [q | k | v] without a bias; the norm
// weight is one value head's.
void AddGatedDeltaNet(std::vector<WeightSpec>& out, const std::string& p, int hidden, const ModelDims& d) {
  const int keys = d.mixer_groups * d.mixer_state;
  const int values = d.mixer_heads * d.mixer_head_dim;
  AddLinear(out, p + ".in_proj_qkvz.weight", 2 * keys + 2 * values, hidden);
  AddLinear(out, p + ".in_proj_ba.weight", 2 * d.mixer_heads, hidden);
  out.push_back({p + ".conv1d.weight", 2 * keys + values, d.mixer_conv, WeightKind::kConv});
  AddVector(out, p + ".dt_bias", d.mixer_heads);
  AddVector(out, p + ".A_log", d.mixer_heads, WeightKind::kDecay);
  AddVector(out, p + ".norm.weight", d.mixer_head_dim, WeightKind::kNorm);
  AddLinear(out, p + ".out_proj.weight", hidden, values);
}

// Hyper-connections: per stage, the projections its stream coefficients come from.
void AddHyperConnection(std::vector<WeightSpec>& out, const std::string& p, int hidden, int streams) {
  AddLinear(out, p + ".hc_pre.weight", streams, streams * hidden);
  AddLinear(out, p + ".hc_post.weight", streams, streams * hidden);
  AddLinear(out, p + ".hc_res.weight", streams * streams, streams * hidden);
}

Status StageSpecs(const StageRef& s, const Model& m, std::vector<WeightSpec>& out) {
  const ModelDims& d = *m.dims;
  const int hidden = m.hidden;
  const std::string p = StagePrefix(s);
  auto need = [&](bool ok, std::string_view what) -> Status {
    if (ok) return Status::Ok();
    return InvalidArgument(fmt::format("stage {} ({}, layer {}) cannot run: the model's dims give it no {}", s.index,
                                       Name(s.decl.kind), s.layer, what));
  };
  switch (s.decl.kind) {
    case StageKind::kAttention: {
      const bool mla = d.mla.kv_lora > 0 && d.mla.qk_nope + d.mla.qk_rope > 0 && d.mla.v > 0;
      if (Status st = need(d.heads > 0 && (mla || (d.kv_heads > 0 && d.head_dim > 0)), "attention heads"); !st.ok()) {
        return st;
      }
      AddAttention(out, p, s.decl, hidden, d);
      break;
    }
    case StageKind::kMixer: {
      SEAM_RETURN_IF_ERROR(need(d.mixer_heads > 0 && d.mixer_head_dim > 0 && d.mixer_state > 0, "mixer heads"));
      SEAM_RETURN_IF_ERROR(need(d.mixer_groups > 0 && d.mixer_heads % d.mixer_groups == 0,
                                "groups of mixer heads (heads a multiple of the groups)"));
      SEAM_RETURN_IF_ERROR(need(d.mixer_conv > 0, "mixer conv width"));
      if (d.mixer == MixerKind::kMamba2) AddMamba2(out, p, hidden, d);
      if (d.mixer == MixerKind::kGatedDeltaNet) AddGatedDeltaNet(out, p, hidden, d);
      break;
    }
    case StageKind::kDenseFfn: {
      const int width = FfnWidthOf(s.decl, d);
      SEAM_RETURN_IF_ERROR(need(width > 0, "FFN width"));
      AddFfn(out, p, width, hidden, d.activation);
      break;
    }
    case StageKind::kSparseFfn:
      SEAM_RETURN_IF_ERROR(need(d.experts >= s.decl.top_k && d.moe_intermediate > 0, "experts"));
      AddMoe(out, p, hidden, d);
      break;
    case StageKind::kLinear: AddLinear(out, p + ".linear.weight", hidden, hidden); break;
    case StageKind::kNoOp: return Status::Ok();
  }
  if (s.decl.update == UpdateKind::kHyperConnection) AddHyperConnection(out, p, hidden, m.residual_streams);
  AddVector(out, StageNormName(s), hidden, WeightKind::kNorm);
  return Status::Ok();
}

}  // namespace

std::string StagePrefix(const StageRef& s) {
  std::string_view part = "mlp";
  if (s.decl.kind == StageKind::kAttention) part = "self_attn";
  if (s.decl.kind == StageKind::kMixer) part = "mixer";
  if (s.decl.kind == StageKind::kLinear && s.slot == 0) part = "self_attn";  // NAS: attention replaced by a linear
  return fmt::format("model.layers.{}.{}", s.layer, part);
}

std::string StageNormName(const StageRef& s) {
  if (s.slot == 0) return fmt::format("model.layers.{}.input_layernorm.weight", s.layer);
  if (s.slot == 1) return fmt::format("model.layers.{}.post_attention_layernorm.weight", s.layer);
  return fmt::format("model.layers.{}.norm{}.weight", s.layer, s.slot);
}

Expected<std::vector<WeightSpec>> WeightSpecs(const Model& m) {
  if (!m.dims) return InvalidArgument(fmt::format("model '{}' has no sizes to run with", m.name));
  const ModelDims& d = *m.dims;
  if (d.vocab < 1) return InvalidArgument(fmt::format("model '{}' has vocab {}", m.name, d.vocab));
  std::vector<WeightSpec> out = {{kEmbeddingName, d.vocab, m.hidden, WeightKind::kEmbedding}};
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
    const size_t first = out.size();
    SEAM_RETURN_IF_ERROR(StageSpecs(s, m, out));
    for (size_t i = first; i < out.size(); ++i) out[i].stage = s.index;
  }
  if (m.residual_streams > 1) AddLinear(out, kStreamHeadName, m.residual_streams, m.residual_streams * m.hidden);
  AddVector(out, kFinalNormName, m.hidden, WeightKind::kNorm);
  AddLinear(out, kLmHeadName, d.vocab, m.hidden);  // untied: its own matrix, as every catalogue config has
  return out;
}

}  // namespace seam
