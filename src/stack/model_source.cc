#include "seam/model_source.h"

#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "seam/families.h"
#include "seam/hf_config.h"
#include "seam/printable.h"

namespace seam {
namespace {

// A model word that names a file or directory (a slash, a .json, or there
// on disk) is a path given where a catalogue name goes.
bool LooksLikePath(std::string_view name) {
  std::error_code ec;
  return name.find('/') != std::string_view::npos || name.ends_with(".json") ||
         std::filesystem::exists(std::filesystem::path(name), ec);
}

// The config.json a path names: a directory's own, else the path.
std::string ConfigIn(std::string_view path) {
  std::error_code ec;
  const std::filesystem::path p(path);
  return std::filesystem::is_directory(p, ec) ? (p / "config.json").string() : std::string(path);
}

}  // namespace

Expected<Model> ChooseModel(std::string_view name, std::string_view hf_config, int layers) {
  if (!name.empty() && !hf_config.empty()) {
    return InvalidArgument(
        fmt::format("give a catalogue model or --hf-config, not both (got '{}' and --hf-config {})", name, hf_config));
  }
  if (name.empty() && hf_config.empty()) {
    return InvalidArgument("name a catalogue model (see `seam models`) or give --hf-config PATH");
  }
  if (layers < 0) return InvalidArgument(fmt::format("--layers {} must be at least 1", layers));
  if (hf_config.empty() && LooksLikePath(name)) {
    return InvalidArgument(
        fmt::format("'{}' is a path, not a catalogue model: give --hf-config {} for a Hugging Face config.json, or "
                    "an engine's launch line with --engine sglang|vllm -- ... (see `seam models` for the catalogue)",
                    Printable(name), Printable(ConfigIn(name))));
  }
  Expected<Model> model = hf_config.empty() ? CatalogueModel(std::string(name)) : LoadHfConfig(std::string(hf_config));
  if (!model) return model.error();
  Model m = *std::move(model);
  if (layers > m.num_layers) {
    return InvalidArgument(fmt::format("--layers {} is more than the {} layers {} declares", layers, m.num_layers,
                                       hf_config.empty() ? std::string_view(m.name) : hf_config));
  }
  if (layers > 0) m.num_layers = layers;
  return m;
}

}  // namespace seam
