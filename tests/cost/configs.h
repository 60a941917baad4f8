// The cost tests' models: the real configs in configs/, by file name.
#pragma once

#include <stdexcept>
#include <string>

#include "seam/hf_config.h"

namespace seam {

inline Model Config(const std::string& name) {
  Expected<Model> m = LoadHfConfig(SEAM_HF_CONFIGS "/" + name);
  if (!m) throw std::runtime_error(m.error().message);
  return *std::move(m);
}

// Its first `layers` layers (a model may be cut, never extended).
inline Model Config(const std::string& name, int layers) {
  Model m = Config(name);
  if (layers > m.num_layers) throw std::runtime_error(name + " has fewer layers");
  m.num_layers = layers;
  return m;
}

}  // namespace seam
