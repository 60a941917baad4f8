#include "seam/dump.h"

#include <fmt/format.h>

#include <filesystem>

#include "seam/hf_checkpoint.h"
#include "seam/safetensors.h"

namespace seam {
namespace {

StTensor Floats(const std::string& name, const Tensor& t, StDtype dtype, bool one_d) {
  StTensor s{.name = name, .dtype = dtype};
  s.shape = one_d ? std::vector<int64_t>{t.cols()} : std::vector<int64_t>{t.rows(), t.cols()};
  s.floats.assign(t.data(), t.data() + t.size());
  return s;
}

StTensor Ints(const std::string& name, const std::vector<int64_t>& v) {
  return {.name = name, .dtype = StDtype::kI64, .shape = {static_cast<int64_t>(v.size())}, .ints = v};
}

Status WriteInputs(const std::string& path, const Batch& b) {
  std::vector<int64_t> ids, positions, lengths;
  for (const auto& r : b.requests) {
    lengths.push_back(static_cast<int64_t>(r.size()));
    for (size_t p = 0; p < r.size(); ++p) {
      ids.push_back(r[p]);
      positions.push_back(static_cast<int64_t>(p));
    }
  }
  return WriteSafetensors(path, {Ints("input_ids", ids), Ints("positions", positions), Ints("request_lengths", lengths)});
}

}  // namespace

Status DumpRun(const std::string& dir, const Model& m, const Weights& w, Dtype dtype, uint64_t seed, const Batch& b,
               const Tensor& hidden, const Tensor& reference, std::string_view source_config) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InvalidArgument(fmt::format("cannot create {}: {}", dir, ec.message()));
  const StDtype weight_dtype = dtype == Dtype::kBf16 ? StDtype::kBf16 : StDtype::kF32;
  if (HasHfForm(m)) {
    SEAM_RETURN_IF_ERROR(WriteHfCheckpoint(dir, m, w, dtype, seed, source_config));
  } else {
    std::vector<StTensor> tensors;
    for (const auto& [name, t] : w.all()) tensors.push_back(Floats(name, t, weight_dtype, t.rows() == 1));
    SEAM_RETURN_IF_ERROR(WriteSafetensors(dir + "/weights.safetensors", tensors, {{"model", m.name}}));
  }
  SEAM_RETURN_IF_ERROR(WriteInputs(dir + "/inputs.safetensors", b));
  return WriteSafetensors(dir + "/outputs.safetensors",
                          {Floats("last_hidden_state", hidden, StDtype::kF32, false),
                           Floats("reference_last_hidden_state", reference, StDtype::kF32, false)},
                          {{"model", m.name}, {"dtype", std::string(Name(dtype))}});
}

}  // namespace seam
