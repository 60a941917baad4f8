#include "seam/model_source.h"

#include <fmt/format.h>

#include <string>

#include "seam/families.h"
#include "seam/hf_config.h"

namespace seam {

Expected<Model> ChooseModel(std::string_view name, std::string_view hf_config, int layers) {
  if (!name.empty() && !hf_config.empty()) {
    return InvalidArgument(
        fmt::format("give a catalogue model or --hf-config, not both (got '{}' and --hf-config {})", name, hf_config));
  }
  if (name.empty() && hf_config.empty()) {
    return InvalidArgument("name a catalogue model (see `seam models`) or give --hf-config PATH");
  }
  if (layers < 0) return InvalidArgument(fmt::format("--layers {} must be at least 1", layers));
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
