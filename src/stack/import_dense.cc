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
  Common c = ReadGqaDecoder(r, 1e-6);
  ModelDims& d = c.dims;
  d.qk_norm = qk_norm;
  d.intermediate = r.Int("intermediate_size", 1, kMaxSize);
  return DenseDecoderModel(name, c.layers, c.hidden, d);
}

}  // namespace seam::hf
