// The safetensors format. The header is parsed with a SAX handler that builds
// the JSON document itself, so it can refuse duplicate keys (nlohmann keeps the
// last silently) and deep nesting before either costs memory, and remember the
// header order of the tensor names.
#include "seam/runtime/safetensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/enum_text.h"
#include "io/mapped_file.h"
#include "io/safetensors_index.h"
#include "seam/files.h"
#include "seam/runtime/tensor.h"

namespace seam {

constexpr auto kStDtypes = EnumNames<StDtype>(
    "dtype", {{StDtype::kF32, "F32"}, {StDtype::kBf16, "BF16"}, {StDtype::kI32, "I32"}, {StDtype::kI64, "I64"}});

std::string_view Name(StDtype d) { return kStDtypes.Name(d); }
Expected<StDtype> ParseStDtype(std::string_view text) { return kStDtypes.Parse(text); }

size_t ItemSize(StDtype d) {
  switch (d) {
    case StDtype::kF32: return 4;
    case StDtype::kBf16: return 2;
    case StDtype::kI32: return 4;
    case StDtype::kI64: return 8;
  }
  return 1;
}

namespace {

using nlohmann::json;
using st::ElementCount;
using st::IsFloat;
using st::kMetadataKey;
using st::ShapeText;

// ---- writing ----

// A string as a JSON literal; false when it is not valid UTF-8.
bool Quote(const std::string& s, std::string& out) {
  try {
    out += json(s).dump();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

void Store(std::vector<uint8_t>& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

Status CheckTensor(const StTensor& t, const std::set<std::string>& seen) {
  const std::string who = fmt::format("safetensors: tensor '{}'", t.name);
  if (t.name == kMetadataKey) return InvalidArgument(fmt::format("{}: the name is reserved", who));
  if (seen.contains(t.name)) return InvalidArgument(fmt::format("{}: duplicate name", who));
  for (int64_t d : t.shape) {
    if (d < 0) return InvalidArgument(fmt::format("{}: shape {} has a negative entry", who, ShapeText(t.shape)));
  }
  uint64_t count = 0;
  if (!ElementCount(t.shape, count)) {
    return InvalidArgument(fmt::format("{}: shape {} has more elements than fit in 64 bits", who, ShapeText(t.shape)));
  }
  const bool is_float = IsFloat(t.dtype);
  const size_t held = is_float ? t.floats.size() : t.ints.size();
  const size_t other = is_float ? t.ints.size() : t.floats.size();
  if (other != 0) {
    return InvalidArgument(fmt::format("{}: dtype {} keeps its values in {}, but {} holds {}", who, Name(t.dtype),
                                       is_float ? "floats" : "ints", is_float ? "ints" : "floats", other));
  }
  if (held != count) {
    return InvalidArgument(
        fmt::format("{}: shape {} has {} elements but {} values are given", who, ShapeText(t.shape), count, held));
  }
  if (t.dtype == StDtype::kI32) {
    for (int64_t v : t.ints) {
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        return InvalidArgument(fmt::format("{}: value {} does not fit in I32", who, v));
      }
    }
  }
  return Status::Ok();
}

void Encode(const StTensor& t, std::vector<uint8_t>& out) {
  out.clear();
  out.reserve((t.floats.size() + t.ints.size()) * ItemSize(t.dtype));
  switch (t.dtype) {
    case StDtype::kF32:
      for (float v : t.floats) Store(out, std::bit_cast<uint32_t>(v), 4);
      break;
    case StDtype::kBf16:
      for (float v : t.floats) Store(out, Bf16Bits(v), 2);
      break;
    case StDtype::kI32:
      for (int64_t v : t.ints) Store(out, static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
      break;
    case StDtype::kI64:
      for (int64_t v : t.ints) Store(out, static_cast<uint64_t>(v), 8);
      break;
  }
}

}  // namespace

Status WriteSafetensors(const std::string& path, const std::vector<StTensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  std::set<std::string> seen;
  for (const StTensor& t : tensors) {
    SEAM_RETURN_IF_ERROR(CheckTensor(t, seen));
    seen.insert(t.name);
  }

  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      std::string key_text;
      std::string value_text;
      if (!Quote(k, key_text) || !Quote(v, value_text)) {
        return InvalidArgument("safetensors: a metadata key or value is not valid UTF-8");
      }
      if (!first) header += ",";
      first = false;
      header += key_text + ":" + value_text;
    }
    header += "}";
  }
  uint64_t offset = 0;
  for (const StTensor& t : tensors) {
    if (header.size() > 1) header += ",";
    if (!Quote(t.name, header)) return InvalidArgument("safetensors: a tensor name is not valid UTF-8");
    const uint64_t bytes = (t.floats.size() + t.ints.size()) * ItemSize(t.dtype);
    header += fmt::format(R"(:{{"dtype":"{}","shape":{},"data_offsets":[{},{}]}})", Name(t.dtype),
                          fmt::format("[{}]", fmt::join(t.shape, ",")), offset, offset + bytes);
    offset += bytes;
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';  // 8 + header.size() is then a multiple of 8

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return InvalidArgument(fmt::format("cannot write {}", path));
  std::vector<uint8_t> buf;
  Store(buf, header.size(), 8);
  out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (const StTensor& t : tensors) {
    Encode(t, buf);
    out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
  }
  out.close();
  if (!out) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return InvalidArgument(fmt::format("cannot write {}: the write failed", path));
  }
  return Status::Ok();
}

struct SafetensorsFile::State {
  std::string path;
  std::shared_ptr<const MappedFile> file;
  st::Index index;
  std::vector<StTensorInfo> infos;
  std::map<std::string, size_t, std::less<>> by_name;
};

Expected<SafetensorsFile> SafetensorsFile::Open(const std::string& path) {
  Expected<std::shared_ptr<const MappedFile>> file = MappedFile::Open(path);
  if (!file) return file.error();
  auto s = std::make_shared<State>();
  s->path = path;
  s->file = *std::move(file);
  Expected<st::Index> index = st::IndexOf(s->file->bytes(), path);
  if (!index) return index.error();
  s->index = *std::move(index);
  for (size_t i = 0; i < s->index.entries.size(); ++i) {
    const st::Entry& e = s->index.entries[i];
    s->infos.push_back({e.name, e.dtype, e.shape});
    s->by_name.emplace(e.name, i);
  }
  return SafetensorsFile(std::move(s));
}

const std::string& SafetensorsFile::path() const { return state_->path; }
const std::vector<StTensorInfo>& SafetensorsFile::tensors() const { return state_->infos; }
const std::map<std::string, std::string>& SafetensorsFile::metadata() const { return state_->index.metadata; }

const StTensorInfo* SafetensorsFile::Find(std::string_view name) const {
  auto it = state_->by_name.find(name);
  return it == state_->by_name.end() ? nullptr : &state_->infos[it->second];
}

StTensor SafetensorsFile::Read(std::string_view name) const {
  auto it = state_->by_name.find(name);
  SEAM_CHECK(it != state_->by_name.end(), fmt::format("{} has no tensor '{}'", state_->path, name));
  return st::Decode(state_->index.entries[it->second], state_->index.data.data());
}

void SafetensorsFile::ReadFloats(std::string_view name, uint64_t first, std::span<float> out) const {
  auto it = state_->by_name.find(name);
  SEAM_CHECK(it != state_->by_name.end(), fmt::format("{} has no tensor '{}'", state_->path, name));
  st::DecodeFloats(state_->index.entries[it->second], state_->index.data.data(), first, out);
}

Expected<std::vector<StTensor>> ReadSafetensors(const std::string& path) {
  Expected<SafetensorsFile> f = SafetensorsFile::Open(path);
  if (!f) return f.error();
  std::vector<StTensor> out;
  for (const StTensorInfo& t : f->tensors()) out.push_back(f->Read(t.name));
  return out;
}

Expected<std::vector<StTensor>> ParseSafetensors(std::span<const uint8_t> bytes) {
  Expected<st::Index> index = st::IndexOf(bytes, "safetensors buffer");
  if (!index) return index.error();
  std::vector<StTensor> out;
  for (const st::Entry& e : index->entries) out.push_back(st::Decode(e, index->data.data()));
  return out;
}

Expected<std::map<std::string, std::string>> ReadSafetensorsMetadata(const std::string& path) {
  Expected<SafetensorsFile> f = SafetensorsFile::Open(path);
  if (!f) return f.error();
  return f->metadata();
}

}  // namespace seam
