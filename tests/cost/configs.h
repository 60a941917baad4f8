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

}  // namespace seam
