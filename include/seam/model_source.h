// seam/model_source.h — the model a command or a caller names: a catalogue
// entry or a Hugging Face config.json, exactly one of the two, cut to its
// first layers when asked.
//
//   Expected<Model> m = ChooseModel("deepseek-v2-lite", "", 0);        // the catalogue's tiny shape
//   Expected<Model> r = ChooseModel("", "configs/kimi-k2.json", 8);    // the real config's first 8 layers
#pragma once

#include <string_view>

#include "seam/error.h"
#include "seam/model.h"

namespace seam {

// `layers` 0 keeps every layer; more than the model declares is an error (a
// model declares its layers one by one, so there is none past the last to
// repeat).
Expected<Model> ChooseModel(std::string_view name, std::string_view hf_config, int layers);

}  // namespace seam
