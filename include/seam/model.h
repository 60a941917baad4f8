// seam/model.h — a model as a stack of stages, declared by one shared
// function of the layer index.
//
// Every pipeline rank calls the same `layer` function for its own layers and
// for its neighbours, so both ranks at a cut resolve the stage there
// identically. A model never mentions TP, DP, EP or PP.
//
//   Expected<Model> m = CatalogueModel("deepseek-v2-lite");
//   std::vector<StageRef> s = StagesOf(*m, 0, m->num_layers);
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "seam/stage.h"

namespace seam {

// The sizes a model needs to run on numbers (the binder never reads them).
// kClampedSwiGlu is GPT-OSS's: gate clamped above and up on both sides at
// the limit, then (up + 1) * gate * sigmoid(1.702 * gate).
enum class Activation { kSwiGlu, kRelu2, kClampedSwiGlu };

// How a router scores experts: softmax over all, or an independent sigmoid
// each (DeepSeek-V3, Kimi, Nemotron-3), optionally with a selection bias.
enum class RouterScoring {
  kSoftmax,
  kSigmoid,
  kSqrtSoftplus,  // sqrt(softplus(logit)) each (DeepSeek-V4)
};

// Which recurrence a mixer stage computes, as Hugging Face transformers
// defines it: Mamba2 (Nemotron-H's NemotronHMamba2Mixer) or Gated DeltaNet
// (Qwen3-Next's Qwen3NextGatedDeltaNet).
enum class MixerKind { kMamba2, kGatedDeltaNet };

// Llama 3's frequency-dependent RoPE scaling (factor 0: none).
struct RopeScaling {
  double factor = 0;
  double low_freq_factor = 1;
  double high_freq_factor = 4;
  int original_positions = 8192;
  bool operator==(const RopeScaling&) const = default;
};

// YaRN (Hugging Face's `_compute_yarn_parameters`; factor 0: none). Each
// rotary pair's inverse frequency is blended between itself (fast pairs,
// over beta_fast turns in original_positions) and itself / factor (slow
// pairs, under beta_slow turns) by a linear ramp over the pair index; cos and
// sin are scaled by the attention factor: `attention_factor` when given
// (> 0), else mscale(factor, mscale) / mscale(factor, mscale_all_dim) when
// both are non-zero, else mscale(factor, 1). DeepSeek's MLA also scales its
// softmax by mscale(factor, mscale_all_dim)^2 when mscale_all_dim is non-zero.
struct YarnScaling {
  double factor = 0;
  int original_positions = 4096;
  double beta_fast = 32;
  double beta_slow = 1;
  double mscale = 0;            // 0: not given
  double mscale_all_dim = 0;    // 0: not given
  double attention_factor = 0;  // 0: not given
  bool truncate = true;         // the ramp's ends rounded out to whole pairs
  bool operator==(const YarnScaling&) const = default;
};

// Which dims of a head's rotary part rotate together: Llama's rotate-half
// pairs i with i + rotary/2; DeepSeek's MLA (Hugging Face's rope_interleave,
// DeepSeek's own complex form) pairs 2i with 2i + 1. Pair i turns at inverse
// frequency i either way.
enum class RopePairing { kHalf, kInterleaved };

// Group-limited routing (DeepSeek): the experts fall into `count` equal
// groups of consecutive experts; each row keeps its best `keep` groups and
// picks its top-k among their experts only (the others' selection scores
// count as 0, as Hugging Face masks them). A group is scored by its best
// expert's selection score (DeepSeek-V2's group_limited_greedy) or by the sum
// of its best two (DeepSeek-V3's noaux_tc). count 1: no limit.
enum class GroupScore { kMax, kTopTwoSum };
struct ExpertGroups {
  int count = 1;
  int keep = 1;
  GroupScore score = GroupScore::kTopTwoSum;
  bool operator==(const ExpertGroups&) const = default;
};

// Multi-head latent attention (DeepSeek): low-rank query and key/value
// projections; kv_lora > 0 turns it on, q_lora 0 projects queries directly.
struct MlaDims {
  int q_lora = 0;
  int kv_lora = 0;
  int qk_nope = 0;
  int qk_rope = 0;
  int v = 0;
  bool operator==(const MlaDims&) const = default;
};

struct ModelDims {
  int vocab = 0;
  int heads = 0;  // attention query heads
  int kv_heads = 0;
  int head_dim = 0;
  bool rope = true;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  double rope_fraction = 1.0;    // rotary on the first fraction of each head
  bool qk_norm = false;          // RMSNorm of each head's query and key (Qwen3)
  bool attention_sinks = false;  // a learned sink logit per head (GPT-OSS)
  bool attention_gate = false;   // a sigmoid gate on the attention output (Qwen3-Next)
  bool qkv_bias = false;         // biases on q/k/v/o (GPT-OSS)
  MlaDims mla;
  double rms_eps = 1e-5;
  int intermediate = 0;                         // dense FFN width
  Activation activation = Activation::kSwiGlu;  // dense FFN and experts
  double swiglu_limit = 7.0;                    // kClampedSwiGlu's clamp
  int experts = 0;
  int moe_intermediate = 0;         // one expert's width
  int shared_intermediate = 0;      // the shared expert's width; 0 for none
  bool shared_expert_gate = false;  // the shared expert's output times sigmoid(x . gate) (Qwen3-Next)
  bool renormalize = true;          // top-k weights rescaled to sum to 1
  RouterScoring scoring = RouterScoring::kSoftmax;
  bool correction_bias = false;  // a per-expert bias used for selection only
  double routed_scaling = 1.0;   // routed experts' weights scaled by this
  bool moe_bias = false;         // biases on the router and every expert's projections (GPT-OSS)
  bool skip_expert = false;      // ZAYA1's MoD: one more router output that passes the input through
  int mixer_heads = 0;
  int mixer_head_dim = 0;
  int mixer_state = 0;
  // The mixer's heads (Mamba2's heads, Gated DeltaNet's value heads) are
  // mixer_head_dim wide; mixer_state is the other side of a head's state
  // (Mamba2's ssm_state_size, Gated DeltaNet's key head width). Heads come
  // in mixer_groups groups that share one projection (Mamba2's n_groups
  // share B and C; Gated DeltaNet's key heads are shared by their value
  // heads). mixer_conv is the width of the causal depthwise conv before the
  // recurrence; Mamba2 clamps its time step to [mixer_dt_min, mixer_dt_max].
  MixerKind mixer = MixerKind::kMamba2;
  int mixer_groups = 0;
  int mixer_conv = 0;
  double mixer_dt_min = 0.0;
  double mixer_dt_max = std::numeric_limits<double>::infinity();
  int hc_sinkhorn_iters = 20;  // hyper-connections: Sinkhorn steps of the stream mix
  YarnScaling yarn;            // YaRN RoPE scaling (at most one of it and rope_scaling)
  RopePairing rope_pairing = RopePairing::kHalf;
  ExpertGroups expert_groups;  // group-limited routing
  double renormalize_eps = 0;  // added to the top-k weights' sum before renormalising (DeepSeek: 1e-20)
  bool operator==(const ModelDims&) const = default;
};

// A dense FFN stage's width: its own (NAS) or the model's.
inline int FfnWidthOf(const StageDecl& d, const ModelDims& dims) {
  return d.ffn_width > 0 ? d.ffn_width : dims.intermediate;
}

struct Model {
  std::string name;
  int num_layers = 0;
  int hidden = 0;                 // elements per token of a stage's output
  int residual_streams = 1;       // hyper-connection streams (1 = a plain residual)
  std::optional<ModelDims> dims;  // what running needs; binding needs only the stages
  // The shared declaration function: the stages of layer `index`, in order.
  std::function<std::vector<StageDecl>(int index)> layer;
  // How many layers `layer` declares (a NAS block list, a hybrid pattern);
  // 0: as many as asked. num_layers may cut a model, never extend it.
  int declared_layers = 0;
  // The Hugging Face model_type its checkpoints are written and read as
  // ("llama", "deepseek_v3", ...); empty when the family has none.
  std::string hf_type;
};

// One stage of a model, addressed by its position.
struct StageRef {
  int index = 0;  // position among all of the model's stages
  int layer = 0;
  int slot = 0;  // position within its layer
  StageDecl decl;
};

// The stages of layers [first_layer, last_layer), numbered model-wide; the
// range must lie within the model's layers and within what it declares.
std::vector<StageRef> StagesOf(const Model& m, int first_layer, int last_layer);
// The stages `layer` declares for one layer, which must lie within what the
// model declares.
std::vector<StageDecl> DeclaredLayer(const Model& m, int layer);
// Visits the stages of layers [0, last_layer) in order, numbered
// model-wide, until `visit` returns false; only the layers reached are asked
// for.
template <class Visit>
void VisitStages(const Model& m, int last_layer, Visit&& visit) {
  int index = 0;
  for (int layer = 0; layer < last_layer; ++layer) {
    int slot = 0;
    for (const StageDecl& d : DeclaredLayer(m, layer)) {
      if (!visit(StageRef{index++, layer, slot++, d})) return;
    }
  }
}

// A short pattern of a model's stages, one letter each (A attention, M mixer,
// F dense FFN, E sparse FFN, . no-op), layers of several stages bracketed:
// "[A F][A E][A E]"; single-stage layers unbracketed: "MFMAMF".
std::string PatternOf(const Model& m);

// Whether any stage of the model is of `kind`.
bool HasStageKind(const Model& m, StageKind kind);
// Whether every MoE of the model can dispatch its rows all-to-all (true
// without one): what `--moe a2a` needs.
bool MoeDispatchesA2a(const Model& m);

struct CatalogueEntry {
  std::string name;
  std::string summary;
  std::string features;  // the parallel features it runs with
  std::string source;    // the real config.json its full size comes from ("-": none)
  std::function<Model()> make;
};

const std::vector<CatalogueEntry>& Catalogue();
Expected<Model> CatalogueModel(const std::string& name);
// "kimi-k2 (tiny shape, hidden 64)" for a catalogue model at its tiny size,
// so an output never passes for the real model's; else the name, its control
// bytes escaped (Printable: it may come from a file).
std::string ModelLabel(const std::string& name, int hidden);

// Tiny shapes of the families the tests and benchmarks size themselves.
Model LlamaModel(int layers);
// DeepSeek-V2-Lite-like: MLA, first layer dense, the rest sparse ([A F][A E]...).
Model DeepseekModel(int layers, int hidden, int top_k);
// Nemotron-H-like: one single-stage layer per character of `pattern`
// (M mixer, * attention, - dense FFN, E sparse FFN).
Expected<Model> NemotronHModel(const std::string& pattern, int hidden);
// ZAYA1-like: single-stage layers alternating attention and a top-1 MoE.
Model Zaya1Model(int layers);

}  // namespace seam
