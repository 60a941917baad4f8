// seam/hf_config.h — a model at its real size, from a Hugging Face config.json.
//
// The config's model_type picks the family; the family builders
// (seam/families.h) declare its stages, so an imported model has the same
// stage pattern as the catalogue's tiny shape of that family, with the
// config's sizes in its dims.
//
//   Expected<Model> m = LoadHfConfig("llama-3.1-8b.json");
//   if (!m) { std::cerr << m.error().message; return 2; }  // kMalformed
//   Expected<Pipeline> plans = BindPipeline(*m, cfg);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seam/error.h"
#include "seam/model.h"

namespace seam {

// Builds the model a config.json describes, through the family builders.
// Errors (kMalformed) start with `source` and name the key at fault: text
// that is not a JSON object, a missing or unknown model_type, a missing key,
// a key of the wrong type or out of range (sizes up to 10^7, layers up to
// 10^5), and sizes that contradict each other. Python's JSON dialect is
// accepted: bare NaN, Infinity and -Infinity (as transformers writes them)
// read as the strings "NaN", "Infinity" and "-Infinity".
Expected<Model> ModelFromHfConfig(std::string_view json_text, std::string_view source = "config.json");

// Reads the file and builds its model; errors name the path.
Expected<Model> LoadHfConfig(const std::string& path);

// The model_type values ModelFromHfConfig knows, in the order of its families.
std::vector<std::string> KnownModelTypes();

}  // namespace seam
