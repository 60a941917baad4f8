// seam/hf_llama.h — Hugging Face Llama checkpoints: a directory holding
// config.json and model.safetensors, loadable by transformers'
// LlamaForCausalLM (and written back the same way).
//
//   Expected<LlamaCheckpoint> c = ReadLlamaCheckpoint("llama-tiny");
//   const Tensor& wq = c->weights.at("model.layers.0.self_attn.q_proj.weight");  // [heads*head_dim, hidden]
//   Status s = WriteLlamaCheckpoint("llama-copy", *c);
//
// The reader is strict: model_type must be "llama", every size it needs must
// be present with the right JSON type, contradictions and features seam does
// not run (rope_scaling, biases, an activation other than silu) are errors,
// and model.safetensors must hold exactly the Llama weights with the shapes
// the config implies. lm_head.weight may be absent when tie_word_embeddings is
// true; it is then a copy of model.embed_tokens.weight.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "seam/error.h"
#include "seam/model.h"
#include "seam/tensor.h"

namespace seam {

struct LlamaCheckpoint {
  int hidden = 0;
  int layers = 0;
  ModelDims dims;  // vocab, heads, kv_heads, head_dim, rope_theta, rms_eps, intermediate (SwiGLU, rope)
  Dtype dtype = Dtype::kF32;
  // HF names -> values; 2-D weights as [out, in], 1-D (the norms) as Tensor(1, n).
  std::map<std::string, Tensor> weights;
};

// Writes dir/config.json and dir/model.safetensors (F32 or BF16 per c.dtype,
// BF16 rounded to nearest even), creating dir if needed. The checkpoint must
// hold exactly LlamaWeightNames(c.layers) with the shapes its sizes imply.
Status WriteLlamaCheckpoint(const std::string& dir, const LlamaCheckpoint& c);
Expected<LlamaCheckpoint> ReadLlamaCheckpoint(const std::string& dir);

// Every name a checkpoint holds, in order: the embedding, each layer's
// input_layernorm, q/k/v/o_proj, post_attention_layernorm, gate/up/down_proj,
// then model.norm and lm_head.
std::vector<std::string> LlamaWeightNames(int layers);

}  // namespace seam
