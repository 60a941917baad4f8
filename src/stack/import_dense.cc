// Llama and Qwen3: dense decoder layers (Qwen3 norms its queries and keys).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seam/families.h"
#include "stack/hf_reader.h"

namespace seam::hf {
Model Dense(const Reader& r, const std::string& name, bool qk_norm) {
  // Qwen3Config's defaults are 32 key/value heads of 128: a Qwen3 config
  // states both.
  const bool qwen3 = name == "qwen3";
  Common c = ReadGqaDecoder(r, 1e-6, 10000.0, {.kv_given = qwen3, .head_dim_given = qwen3});
  ModelDims& d = c.dims;
  d.qk_norm = qk_norm;
  d.intermediate = r.Int("intermediate_size", 1, kMaxSize);
  // Qwen3's MLP has no mlp_bias key (its MLP never has biases).
  RefuseActivationAndBiases(r, /*mlp_bias=*/name == "llama");
  // Qwen3's sliding window (on the layers from max_window_layers on) applies
  // only with use_sliding_window.
  if (name == "qwen3") OnlyDefault(r, "use_sliding_window", false, "seam's Qwen3 attends over the whole sequence");
  return DenseDecoderModel(name, c.layers, c.hidden, d);
}

}  // namespace seam::hf
