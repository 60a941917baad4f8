// seam/runtime/hf_checkpoint.h — Hugging Face checkpoints of every family seam runs
// that transformers implements: config.json as the family's config class
// reads it, and model.safetensors with the family's tensor names and layouts
// (GPT-OSS's stacked experts, Qwen3-Next's zero-centred norms and gated
// query, Nemotron-H's backbone, DeepSeek's shared_experts, ...).
//
//   Status s = WriteHfCheckpoint("dump", model, weights, Dtype::kF32);
//   Expected<HfCheckpoint> c = OpenHfCheckpoint("dump");      // config and headers only
//   Expected<Weights> w = ReadHfWeights(*c);                     // the values, one tensor at a time
//
// Writing checks that the config it writes reads back as the model that ran.
// Reading is strict: every tensor the config implies, of its shape, F32 or
// BF16 throughout, and nothing else (lm_head.weight may be absent when
// tie_word_embeddings is true).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seam/model.h"
#include "seam/runtime/checkpoint.h"
#include "seam/runtime/tensor.h"
#include "seam/runtime/weights.h"

namespace seam {

// Whether seam writes this model's family as a Hugging Face checkpoint
// (model.hf_type names one it knows).
bool HasHfForm(const Model& m);

// The config.json of a model: the keys transformers reads for what seam ran
// and nothing else (docs/config-keys.md), so a key of an imported config
// that seam does not model never describes a model that did not run.
Expected<std::string> HfConfigText(const Model& m, Dtype dtype);

// Writes dir/config.json and dir/model.safetensors (F32, or BF16 for bf16
// runs), the LM head untied (tie_word_embeddings false), so transformers'
// *ForCausalLM loads it as is.
Status WriteHfCheckpoint(const std::string& dir, const Model& m, const Weights& w, Dtype dtype);

// One tensor of a checkpoint and the seam weights it holds.
enum class HfLayout {
  kSame,               // the weight itself (reshaped: 1-D vectors, [C, 1, K] convs)
  kZeroCentred,        // a norm stored as weight - 1 (Qwen3-Next's (1 + w) RMSNorm)
  kHeadPairs,          // per head, `block` rows of parts[0] then `block` of parts[1] (Qwen3-Next's query and gate)
  kExpertsGateUp,      // [E, hidden, 2I]: expert e's gate at even, up at odd columns (GPT-OSS), parts g0 u0 g1 u1 ...
  kExpertsDown,        // [E, I, hidden]: each expert's down_proj transposed
  kExpertsGateUpBias,  // [E, 2I]: gate and up biases interleaved
  kExpertsDownBias,    // [E, hidden]
};
struct HfTensor {
  std::string name;
  std::vector<int64_t> shape;
  HfLayout layout = HfLayout::kSame;
  std::vector<std::string> parts;  // seam weight names
  int block = 0;                   // kHeadPairs: rows per head of each part
};
// The tensors of the model's checkpoint (lm_head.weight aside), in order.
Expected<std::vector<HfTensor>> HfTensorsOf(const Model& m);

struct HfCheckpoint {
  Model model;
  Dtype dtype = Dtype::kF32;
  CheckpointTensors tensors;
  std::vector<HfTensor> layout;
  bool tied = false;  // tie_word_embeddings: the LM head is the embedding
};
// Reads config.json and every file's header, and checks the tensors against
// what the config implies; no value is decoded.
Expected<HfCheckpoint> OpenHfCheckpoint(const std::string& dir);
// The model's weights under seam's names.
Expected<Weights> ReadHfWeights(const HfCheckpoint& c);

}  // namespace seam
