// Llama and Qwen3: dense decoder layers (Qwen3 norms its queries and keys).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seam/families.h"
#include "stack/hf_reader.h"

namespace seam::hf {
namespace {

// A string of the config for a message, cut short as Found cuts it.
std::string Quoted(std::string s) {
  const bool cut = s.size() > 40;
  if (cut) s.resize(40);
  return fmt::format("'{}'{}", s, cut ? "..." : "");
}

// What transformers computes for these families and seam's dense decoder
// does not: another activation than SiLU, biases on q/k/v/o, and (Llama
// only: Qwen3's MLP has no such key) biases on the MLP.
void RefuseWhatSeamDoesNotCompute(const Reader& r, bool has_mlp_bias) {
  if (const std::string act = r.StringOr("hidden_act", "silu"); act != "silu") {
    r.Fail(fmt::format("hidden_act is {}; only 'silu' is supported", Quoted(act)));
  }
  if (r.BoolOr("attention_bias", false)) r.Fail("attention_bias is true; biases are not supported");
  if (has_mlp_bias && r.BoolOr("mlp_bias", false)) r.Fail("mlp_bias is true; biases are not supported");
}

}  // namespace

Model Dense(const Reader& r, const std::string& name, bool qk_norm) {
  Common c = ReadGqaDecoder(r, 1e-6);
  ModelDims& d = c.dims;
  d.qk_norm = qk_norm;
  d.intermediate = r.Int("intermediate_size", 1, kMaxSize);
  RefuseWhatSeamDoesNotCompute(r, /*has_mlp_bias=*/name == "llama");
  return DenseDecoderModel(name, c.layers, c.hidden, d);
}

}  // namespace seam::hf
