// Hugging Face checkpoints in and out: config.json through the importer and
// its inverse, model.safetensors through the family's tensor layout.
#include "seam/runtime/hf_checkpoint.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "io/hf_checkpoint_internal.h"
#include "seam/files.h"
#include "seam/runtime/safetensors.h"
#include "stack/hf_reader.h"

namespace seam {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLmHead = "lm_head.weight";

std::string ShapeText(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

int64_t SizeOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The values of HF tensor `t`, in its own row-major order.
std::vector<float> Gather(const HfTensor& t, const Weights& w) {
  if (t.layout == HfLayout::kSame || t.layout == HfLayout::kZeroCentred) {
    std::vector<float> out = w.at(t.parts[0]).Floats();
    if (t.layout == HfLayout::kZeroCentred) {
      for (float& v : out) v -= 1.0f;  // exact for weights in [0.5, 2]
    }
    return out;
  }
  std::vector<Tensor> parts;
  for (const std::string& p : t.parts) parts.push_back(w.at(p).Copy());
  std::vector<float> out(static_cast<size_t>(SizeOf(t.shape)));
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
    const auto [part, at] = Locate(t, i);
    out[static_cast<size_t>(i)] = parts[part].data()[at];
  }
  return out;
}

// The inverse: an HF tensor that holds one seam weight whole, read a block
// of rows at a time into the form Weights keeps it in (bf16 values in 16
// bits), so its floats are never all held.
StoredWeight ReadWhole(const HfTensor& t, const CheckpointTensors& tensors, const WeightSpec& s) {
  return StoredWeight(s.rows, s.cols, [&](int first_row, Tensor& block) {
    tensors.ReadFloats(t.name, static_cast<uint64_t>(first_row) * static_cast<uint64_t>(s.cols), block.span());
    if (t.layout == HfLayout::kZeroCentred) {
      for (float& v : block.span()) v += 1.0f;
    }
  });
}

// An HF tensor that holds parts of several seam weights, into them.
void Scatter(const HfTensor& t, std::vector<float> values, const std::map<std::string, const WeightSpec*>& specs,
             std::map<std::string, Tensor>& out) {
  auto shape = [&specs](const std::string& name) { return specs.at(name); };
  std::vector<Tensor*> parts;
  for (const std::string& p : t.parts) {
    const WeightSpec* s = shape(p);
    parts.push_back(&out.insert_or_assign(p, Tensor(s->rows, s->cols)).first->second);
  }
  for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) {
    const auto [part, at] = Locate(t, i);
    parts[part]->data()[at] = values[static_cast<size_t>(i)];
  }
}

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return InvalidArgument(fmt::format("cannot write {}", path));
  return Status::Ok();
}

// Every tensor the config implies, F32 or BF16, of its shape, one dtype
// throughout and nothing else: the checkpoint's dtype.
Expected<Dtype> CheckTensors(const CheckpointTensors& tensors, const std::vector<HfTensor>& layout, const Model& m,
                             bool tied) {
  std::map<std::string, std::vector<int64_t>> expected;
  for (const HfTensor& t : layout) expected.emplace(t.name, t.shape);
  const StTensorInfo* first_f32 = nullptr;
  const StTensorInfo* first_bf16 = nullptr;
  for (const auto& [name, shape] : expected) {
    const StTensorInfo* t = tensors.Find(name);
    if (t == nullptr) {
      if (name == kLmHead && tied) continue;
      return Malformed(fmt::format("{}: missing tensor '{}'{}", tensors.source(), name,
                                   name == kLmHead ? " (tie_word_embeddings is false)" : ""));
    }
    const std::string& file = tensors.FileOf(name);
    if (t->dtype != StDtype::kF32 && t->dtype != StDtype::kBf16) {
      return Malformed(fmt::format("{}: tensor '{}' has dtype {}; expected F32 or BF16", file, name, Name(t->dtype)));
    }
    if (t->shape != shape) {
      return Malformed(
          fmt::format("{}: tensor '{}' has shape {}; expected {}", file, name, ShapeText(t->shape), ShapeText(shape)));
    }
    if (t->dtype == StDtype::kF32 && first_f32 == nullptr) first_f32 = t;
    if (t->dtype == StDtype::kBf16 && first_bf16 == nullptr) first_bf16 = t;
  }
  for (const StTensorInfo& t : tensors.tensors()) {
    if (!expected.contains(t.name)) {
      return Malformed(fmt::format("{}: unexpected tensor '{}' (not a weight of this {}-layer {})",
                                   tensors.FileOf(t.name), t.name, m.num_layers, m.hf_type));
    }
  }
  if (first_f32 != nullptr && first_bf16 != nullptr) {
    return Malformed(fmt::format("{}: tensor '{}' is F32 but '{}' is BF16; every weight must have one dtype",
                                 tensors.source(), first_f32->name, first_bf16->name));
  }
  return first_bf16 != nullptr ? Dtype::kBf16 : Dtype::kF32;
}

// A config that declares more stages than the files hold tensors is refused
// before the list of its weights is built (each stage has at least its norm).
Status CheckLayerCount(const Model& m, const CheckpointTensors& tensors, const std::string& dir) {
  int64_t stages = 0;
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) stages += s.decl.kind != StageKind::kNoOp;
  const auto held = static_cast<int64_t>(tensors.tensors().size());
  if (stages > held) {
    return Malformed(fmt::format("{}: config.json declares {} layers with {} stages, but {} holds only {} tensors", dir,
                                 m.num_layers, stages, tensors.source(), held));
  }
  return Status::Ok();
}

}  // namespace

Status WriteHfCheckpoint(const std::string& dir, const Model& m, const Weights& w, Dtype dtype) {
  Expected<std::string> config = HfConfigText(m, dtype);
  if (!config) return config.error();
  Expected<std::vector<HfTensor>> layout = HfTensorsOf(m);
  if (!layout) return layout.error();
  SEAM_RETURN_IF_ERROR(CheckWeights(m, w));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return InvalidArgument(fmt::format("cannot create {}: {}", dir, ec.message()));
  const StDtype st = dtype == Dtype::kBf16 ? StDtype::kBf16 : StDtype::kF32;
  std::vector<StTensor> tensors;
  for (const HfTensor& t : *layout)
    tensors.push_back({.name = t.name, .dtype = st, .shape = t.shape, .floats = Gather(t, w)});
  SEAM_RETURN_IF_ERROR(WriteText((fs::path(dir) / "config.json").string(), *config));
  return WriteSafetensors((fs::path(dir) / "model.safetensors").string(), tensors, {{"format", "pt"}});
}

Expected<HfCheckpoint> OpenHfCheckpoint(const std::string& dir) {
  const std::string config_path = (fs::path(dir) / "config.json").string();
  Expected<std::string> text = ReadFileAtMost(config_path, kMaxConfigBytes);
  if (!text) return text.error();
  // One parse serves the importer and the key it does not read.
  Expected<nlohmann::json> j = hf::ParseConfigJson(*text, config_path);
  if (!j) return j.error();
  std::optional<Model> model;
  bool tied = false;
  try {
    const hf::Reader r(*j, config_path);
    model = hf::ImportModel(r);
    tied = r.BoolOr("tie_word_embeddings", false);
  } catch (const Failure& e) {
    return e.error();
  }
  if (!HasHfForm(*model)) {
    return InvalidArgument(fmt::format("{}: seam reads no checkpoint of model_type '{}'", config_path, model->hf_type));
  }
  Expected<CheckpointTensors> tensors = CheckpointTensors::Open(dir);
  if (!tensors) return tensors.error();
  SEAM_RETURN_IF_ERROR(CheckLayerCount(*model, *tensors, dir));
  Expected<std::vector<HfTensor>> layout = HfTensorsOf(*model);
  if (!layout) return layout.error();
  Expected<Dtype> dtype = CheckTensors(*tensors, *layout, *model, tied);
  if (!dtype) return dtype.error();
  return HfCheckpoint{*std::move(model), *dtype, *std::move(tensors), *std::move(layout), tied};
}

Expected<Weights> ReadHfWeights(const HfCheckpoint& c) {
  Expected<std::vector<WeightSpec>> specs = WeightSpecs(c.model);
  if (!specs) return specs.error();
  std::map<std::string, const WeightSpec*> by_name;
  for (const WeightSpec& s : *specs) by_name.emplace(s.name, &s);
  std::map<std::string, StoredWeight> stored;
  // One tensor decoded at a time and kept as Weights keeps it (bf16 values
  // in 16 bits) before the next: the checkpoint's values are held once.
  for (const HfTensor& t : c.layout) {
    if (t.name == kLmHead && c.tied) continue;
    if (t.layout == HfLayout::kSame || t.layout == HfLayout::kZeroCentred) {
      stored.insert_or_assign(t.parts[0], ReadWhole(t, c.tensors, *by_name.at(t.parts[0])));
      continue;
    }
    std::map<std::string, Tensor> parts;
    Scatter(t, std::move(c.tensors.Read(t.name).floats), by_name, parts);
    for (auto& [name, part] : parts) stored.insert_or_assign(name, StoredWeight(std::move(part)));
  }
  // Tied, the LM head is the embedding (whatever lm_head tensor the files hold).
  if (c.tied) stored.insert_or_assign(kLmHeadName, stored.at(kEmbeddingName));
  Weights w(std::move(stored));
  SEAM_RETURN_IF_ERROR(CheckWeights(c.model, w));
  return w;
}

}  // namespace seam
