#include "numerics/mixer.h"

#include <algorithm>

#include "numerics/gated_deltanet.h"
#include "numerics/mamba2.h"
#include "seam/runtime/gemm.h"

namespace seam::exec {

MixerKernel::MixerKernel(MixerParts parts) : p_(std::move(parts)) {
  SEAM_CHECK(p_.conv_weight.cols() >= 1, "a mixer conv of no width");
  SEAM_CHECK(p_.conv_bias.empty() || p_.conv_bias.cols() == p_.conv_weight.rows(), "a conv bias of another width");
}

MixerKernel::State MixerKernel::NewState() const {
  const size_t window = static_cast<size_t>(p_.conv_weight.cols() - 1) * static_cast<size_t>(p_.conv_weight.rows());
  return {std::vector<float>(window, 0.0f), std::vector<float>(p_.recurrent_size, 0.0f)};
}

Tensor MixerKernel::Conv(const Tensor& in, State& state) const {
  const int channels = p_.conv_weight.rows(), width = p_.conv_weight.cols();
  SEAM_CHECK(in.cols() == channels, "conv input of another width");
  Tensor out(in.rows(), channels);
  std::vector<float>& window = state.conv;  // rows t - (width - 1) .. t - 1, each `channels` wide
  for (int r = 0; r < in.rows(); ++r) {
    for (int c = 0; c < channels; ++c) {
      const float* w = p_.conv_weight.row(c);
      float acc = p_.conv_bias.empty() ? 0.0f : p_.conv_bias.at(0, c);
      for (int j = 0; j + 1 < width; ++j) acc = acc + w[j] * window[static_cast<size_t>(j * channels + c)];
      acc = acc + w[width - 1] * in.at(r, c);
      out.at(r, c) = Silu(acc);
    }
    if (width > 1) {  // the oldest row leaves the window, this one joins it
      std::copy(window.begin() + channels, window.end(), window.begin());
      std::copy(in.row(r), in.row(r) + channels, window.end() - channels);
    }
  }
  RoundToStorage(out, p_.numerics.dtype);
  return out;
}

Tensor MixerKernel::Output(const Tensor& g) const {
  const int count = p_.shard.count, blocks = p_.numerics.k_blocks;
  SEAM_CHECK(blocks % count == 0, "the group does not split the canonical K-blocks");
  return TreeSum(GemmBlocks(g, p_.out_proj, blocks / count));
}

Tensor MixerKernel::Run(const Tensor& x, std::span<const Part> parts) const {
  Tensor g(x.rows(), p_.out_proj.cols());
  for (const Part& part : parts) {
    if (part.first == part.last) continue;
    const Tensor scanned = Scan(x.RowRange(part.first, part.last), *part.state);
    for (int i = part.first; i < part.last; ++i) {
      std::copy(scanned.row(i - part.first), scanned.row(i - part.first) + scanned.cols(), g.row(i));
    }
  }
  return Output(g);
}

std::unique_ptr<MixerKernel> MakeMixerKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard,
                                             const Numerics& n) {
  switch (m.dims->mixer) {
    case MixerKind::kMamba2: return std::make_unique<Mamba2Kernel>(s, m, w, shard, n);
    case MixerKind::kGatedDeltaNet: return std::make_unique<GatedDeltaNetKernel>(s, m, w, shard, n);
  }
  SEAM_CHECK(false, "a mixer of no known kind");
  return nullptr;
}

std::vector<MatrixView> RowParts(MatrixView w, std::span<const Range> ranges) {
  std::vector<MatrixView> parts;
  for (const auto& [first, last] : ranges) parts.push_back(w.Rows(first, last));
  return parts;
}

Tensor PickRows(MatrixView w, std::span<const Range> ranges) {
  std::vector<Tensor> parts;
  for (const auto& [first, last] : ranges) parts.push_back(w.Rows(first, last).Copy());
  return ConcatRows(parts);
}

Tensor PickCols(MatrixView v, std::span<const Range> ranges) {
  int width = 0;
  for (const auto& [first, last] : ranges) width += last - first;
  Tensor out(v.rows(), width);
  for (int r = 0; r < v.rows(); ++r) {
    float* to = out.row(r);
    for (const auto& [first, last] : ranges) to = std::copy(v.row(r) + first, v.row(r) + last, to);
  }
  return out;
}

}  // namespace seam::exec
