#include "seam/pipeline.h"

#include <fmt/format.h>

#include <bit>
#include <numeric>

namespace seam {

Expected<std::vector<LayerRange>> SplitLayers(const ParallelConfig& cfg, int layers) {
  SEAM_RETURN_IF_ERROR(Validate(cfg));
  std::vector<LayerRange> out;
  out.reserve(static_cast<size_t>(cfg.pp));
  int first = 0;
  if (cfg.pp_split.empty()) {
    if (cfg.pp > layers) {
      return InvalidArgument(
          fmt::format("pp={} is more than the model's {} layers; every pipeline rank needs at "
                      "least one layer",
                      cfg.pp, layers));
    }
    // Even split; the remainder goes to the last ranks.
    for (int r = 0; r < cfg.pp; ++r) {
      const int c = layers / cfg.pp + (r >= cfg.pp - layers % cfg.pp ? 1 : 0);
      out.push_back({first, first + c});
      first += c;
    }
    return out;
  }
  const int total = std::accumulate(cfg.pp_split.begin(), cfg.pp_split.end(), 0);
  if (total != layers) {
    return InvalidArgument(
        fmt::format("the layer split {} covers {} layers but the model has {}; the counts must "
                    "add up to the model's layers",
                    fmt::join(cfg.pp_split, "+"), total, layers));
  }
  for (int c : cfg.pp_split) {
    out.push_back({first, first + c});
    first += c;
  }
  return out;
}

std::vector<std::vector<int>> LayerSplits(int layers, int max_ranks) {
  SEAM_CHECK(layers >= 1 && layers <= 30, "splits of 1 to 30 layers");
  std::vector<std::vector<int>> out;
  for (unsigned cuts = 0; cuts < (1u << (layers - 1)); ++cuts) {
    if (std::popcount(cuts) + 1 > max_ranks) continue;
    std::vector<int> split;
    int last = 0;
    for (int b = 1; b < layers; ++b) {
      if (cuts & (1u << (b - 1))) {
        split.push_back(b - last);
        last = b;
      }
    }
    split.push_back(layers - last);
    out.push_back(split);
  }
  return out;
}

}  // namespace seam
