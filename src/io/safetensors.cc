// The safetensors format. The header is parsed with a SAX handler that builds
// the JSON document itself, so it can refuse duplicate keys (nlohmann keeps the
// last silently) and deep nesting before either costs memory, and remember the
// header order of the tensor names.
#include "seam/safetensors.h"

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
#include "seam/files.h"
#include "seam/tensor.h"

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

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the limit the reference implementation uses
constexpr size_t kMaxDepth = 8;                    // a valid header nests 3 deep
constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
constexpr const char* kMetadataKey = "__metadata__";

bool IsFloat(StDtype d) { return d == StDtype::kF32 || d == StDtype::kBf16; }

std::string ShapeText(std::span<const int64_t> shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// The element count of a shape; false when it does not fit in an int64 (a
// shape with a zero entry has zero elements whatever the others are).
bool ElementCount(std::span<const int64_t> shape, uint64_t& count) {
  count = 1;
  for (int64_t d : shape) {
    if (d == 0) {
      count = 0;
      return true;
    }
  }
  for (int64_t d : shape) {
    uint64_t next = 0;
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(d), &next) || next > kInt64Max) return false;
    count = next;
  }
  return true;
}

// ---- the header parser ----

class HeaderSax final : public nlohmann::json_sax<json> {
 public:
  json root;
  std::vector<std::string> order;  // top-level keys in header order
  std::string error;               // why the handler stopped the parse

  bool null() override { return Put(nullptr); }
  bool boolean(bool v) override { return Put(v); }
  bool number_integer(number_integer_t v) override { return Put(v); }
  bool number_unsigned(number_unsigned_t v) override { return Put(v); }
  bool number_float(number_float_t v, const string_t&) override { return Put(v); }
  bool string(string_t& v) override { return Put(std::move(v)); }
  bool binary(binary_t&) override { return Stop("header holds binary data"); }
  bool start_object(std::size_t) override { return Open(json::object()); }
  bool start_array(std::size_t) override { return Open(json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }

  bool key(string_t& k) override {
    json& top = *stack_.back();
    if (top.contains(k)) {
      if (!stack_.front()->is_object()) return Stop(fmt::format("duplicate key '{}'", k));
      if (stack_.size() == 1) {
        return Stop(k == kMetadataKey ? std::string("duplicate __metadata__")
                                      : fmt::format("duplicate tensor name '{}'", k));
      }
      if (stack_.size() == 2 && tensor_ == kMetadataKey) return Stop(fmt::format("__metadata__: duplicate key '{}'", k));
      if (stack_.size() == 2) return Stop(fmt::format("tensor '{}': duplicate field '{}'", tensor_, k));
      return Stop(fmt::format("duplicate key '{}'", k));
    }
    if (stack_.size() == 1) {
      order.push_back(k);
      tensor_ = k;
    }
    slot_ = &top[k];
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) override {
    if (error.empty()) error = fmt::format("header is not valid JSON (error at byte {} of the header)", position);
    return false;
  }

 private:
  bool Stop(std::string why) {
    error = std::move(why);
    return false;
  }
  // Stores a value where the parse stands: the root, the next array element
  // or the slot of the last key.
  json* Place(json v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool Put(json v) {
    Place(std::move(v));
    return true;
  }
  bool Open(json v) {
    if (stack_.size() >= kMaxDepth) return Stop(fmt::format("header nests deeper than {} levels", kMaxDepth));
    stack_.push_back(Place(std::move(v)));
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  std::vector<json*> stack_;  // the open containers, outermost first
  json* slot_ = nullptr;
  std::string tensor_;  // the current top-level key
};

// ---- validating the header ----

struct Entry {
  std::string name;
  StDtype dtype = StDtype::kF32;
  std::vector<int64_t> shape;
  uint64_t count = 0;  // elements
  uint64_t begin = 0;
  uint64_t end = 0;
  size_t header_index = 0;
};

struct Parsed {
  std::vector<StTensor> tensors;
  std::map<std::string, std::string> metadata;
};

// A failure while validating; turned into a Malformed error with the prefix.
struct Bad {
  std::string message;
};

uint64_t OffsetOf(const json& v, const std::string& name, int index) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  throw Bad{fmt::format("tensor '{}': data_offsets[{}] is not a non-negative integer", name, index)};
}

Entry ReadEntry(const std::string& name, const json& v, size_t header_index, uint64_t data_size) {
  if (!v.is_object()) throw Bad{fmt::format("tensor '{}': entry is not an object", name)};
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& field = it.key();
    if (field != "dtype" && field != "shape" && field != "data_offsets") {
      throw Bad{fmt::format("tensor '{}': unknown field '{}' (expected dtype, shape, data_offsets)", name, field)};
    }
  }
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!v.contains(field)) throw Bad{fmt::format("tensor '{}': missing field '{}'", name, field)};
  }
  Entry e{.name = name, .header_index = header_index};

  const json& dtype = v["dtype"];
  if (!dtype.is_string()) throw Bad{fmt::format("tensor '{}': dtype is not a string", name)};
  Expected<StDtype> d = ParseStDtype(dtype.get<std::string>());
  if (!d) throw Bad{fmt::format("tensor '{}': {}", name, d.error().message)};
  e.dtype = *d;

  const json& shape = v["shape"];
  if (!shape.is_array()) throw Bad{fmt::format("tensor '{}': shape is not an array", name)};
  for (size_t i = 0; i < shape.size(); ++i) {
    const json& s = shape[i];
    if (s.is_number_integer() && !s.is_number_unsigned() && s.get<int64_t>() < 0) {
      throw Bad{fmt::format("tensor '{}': shape[{}] is negative ({})", name, i, s.get<int64_t>())};
    }
    if (!s.is_number_integer()) throw Bad{fmt::format("tensor '{}': shape[{}] is not an integer", name, i)};
    if (s.is_number_unsigned() && s.get<uint64_t>() > kInt64Max) {
      throw Bad{fmt::format("tensor '{}': shape[{}] is too large ({})", name, i, s.get<uint64_t>())};
    }
    e.shape.push_back(s.get<int64_t>());
  }
  if (!ElementCount(e.shape, e.count)) {
    throw Bad{fmt::format("tensor '{}': shape {} has more elements than fit in 64 bits", name, ShapeText(e.shape))};
  }

  const json& offsets = v["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    throw Bad{fmt::format("tensor '{}': data_offsets is not an array of two integers [begin, end]", name)};
  }
  e.begin = OffsetOf(offsets[0], name, 0);
  e.end = OffsetOf(offsets[1], name, 1);
  if (e.begin > e.end) throw Bad{fmt::format("tensor '{}': data_offsets [{}, {}] begin after they end", name, e.begin, e.end)};
  if (e.end > data_size) {
    throw Bad{fmt::format("tensor '{}': data_offsets [{}, {}] end beyond the data section ({} bytes)", name, e.begin,
                          e.end, data_size)};
  }
  uint64_t need = 0;
  const bool fits = !__builtin_mul_overflow(e.count, static_cast<uint64_t>(ItemSize(e.dtype)), &need);
  if (!fits || need != e.end - e.begin) {
    throw Bad{fmt::format("tensor '{}': data_offsets [{}, {}] hold {} bytes but shape {} of {} needs {}", name, e.begin,
                          e.end, e.end - e.begin, ShapeText(e.shape), Name(e.dtype),
                          fits ? fmt::format("{}", need) : std::string("more than 2^64"))};
  }
  return e;
}

std::map<std::string, std::string> ReadMetadata(const json& v) {
  if (!v.is_object()) throw Bad{"__metadata__ is not an object"};
  std::map<std::string, std::string> out;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it->is_string()) throw Bad{fmt::format("__metadata__: value of '{}' is not a string", it.key())};
    out[it.key()] = it->get<std::string>();
  }
  return out;
}

uint64_t Load(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

StTensor Decode(const Entry& e, const uint8_t* data) {
  StTensor t{.name = e.name, .dtype = e.dtype, .shape = e.shape};
  const size_t n = static_cast<size_t>(e.count);
  const size_t item = ItemSize(e.dtype);
  const uint8_t* p = data + e.begin;
  switch (e.dtype) {
    case StDtype::kF32:
      t.floats.resize(n);
      for (size_t i = 0; i < n; ++i) t.floats[i] = std::bit_cast<float>(static_cast<uint32_t>(Load(p + i * item, item)));
      break;
    case StDtype::kBf16:
      t.floats.resize(n);
      for (size_t i = 0; i < n; ++i) t.floats[i] = FromBf16Bits(static_cast<uint16_t>(Load(p + i * item, item)));
      break;
    case StDtype::kI32:
      t.ints.resize(n);
      for (size_t i = 0; i < n; ++i) t.ints[i] = static_cast<int32_t>(static_cast<uint32_t>(Load(p + i * item, item)));
      break;
    case StDtype::kI64:
      t.ints.resize(n);
      for (size_t i = 0; i < n; ++i) t.ints[i] = static_cast<int64_t>(Load(p + i * item, item));
      break;
  }
  return t;
}

Parsed ParseOrThrow(std::span<const uint8_t> bytes) {
  if (bytes.size() < 8) {
    throw Bad{fmt::format("{} bytes is too short for a safetensors file (it starts with an 8-byte header length)",
                          bytes.size())};
  }
  const uint64_t header_size = Load(bytes.data(), 8);
  if (header_size > kMaxHeaderBytes) {
    throw Bad{fmt::format("header length {} is absurd (more than {} bytes)", header_size, kMaxHeaderBytes)};
  }
  if (header_size > bytes.size() - 8) {
    throw Bad{fmt::format("header length {} runs past the end of the file ({} bytes after the length)", header_size,
                          bytes.size() - 8)};
  }
  const auto header = bytes.subspan(8, static_cast<size_t>(header_size));
  const auto data = bytes.subspan(8 + static_cast<size_t>(header_size));

  HeaderSax sax;
  bool parsed = false;
  try {
    parsed = json::sax_parse(header.begin(), header.end(), &sax);
  } catch (const json::exception& e) {
    throw Bad{fmt::format("header is not valid JSON ({})", e.what())};
  }
  if (!parsed) throw Bad{sax.error.empty() ? std::string("header is not valid JSON") : sax.error};
  if (!sax.root.is_object()) throw Bad{"header is not a JSON object"};

  Parsed out;
  std::vector<Entry> entries;
  for (size_t i = 0; i < sax.order.size(); ++i) {
    const std::string& name = sax.order[i];
    const json& v = *sax.root.find(name);
    if (name == kMetadataKey) {
      out.metadata = ReadMetadata(v);
    } else {
      entries.push_back(ReadEntry(name, v, i, data.size()));
    }
  }
  sax.root = nullptr;

  // The tensors must tile the data section exactly.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.end != b.end) return a.end < b.end;
    return a.header_index < b.header_index;
  });
  uint64_t at = 0;
  const Entry* prev = nullptr;
  for (const Entry& e : entries) {
    if (e.begin < at) {
      throw Bad{fmt::format("tensors '{}' [{}, {}) and '{}' [{}, {}) overlap in the data section", prev->name,
                            prev->begin, prev->end, e.name, e.begin, e.end)};
    }
    if (e.begin > at) {
      throw Bad{fmt::format("bytes [{}, {}) of the data section belong to no tensor (the data must be fully indexed)",
                            at, e.begin)};
    }
    at = e.end;
    prev = &e;
  }
  if (at != data.size()) {
    throw Bad{fmt::format("bytes [{}, {}) of the data section belong to no tensor (the data must be fully indexed)", at,
                          data.size())};
  }
  out.tensors.reserve(entries.size());
  for (const Entry& e : entries) out.tensors.push_back(Decode(e, data.data()));
  return out;
}

Expected<Parsed> Parse(std::span<const uint8_t> bytes, std::string_view where) {
  try {
    return ParseOrThrow(bytes);
  } catch (const Bad& b) {
    return Malformed(fmt::format("{}: {}", where, b.message));
  }
}

Expected<Parsed> ReadFile(const std::string& path) {
  Expected<std::string> text = ReadWholeFile(path);
  if (!text) return text.error();
  return Parse({reinterpret_cast<const uint8_t*>(text->data()), text->size()}, path);
}

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

Expected<std::vector<StTensor>> ReadSafetensors(const std::string& path) {
  Expected<Parsed> p = ReadFile(path);
  if (!p) return p.error();
  return std::move(p).value().tensors;
}

Expected<std::vector<StTensor>> ParseSafetensors(std::span<const uint8_t> bytes) {
  Expected<Parsed> p = Parse(bytes, "safetensors buffer");
  if (!p) return p.error();
  return std::move(p).value().tensors;
}

Expected<std::map<std::string, std::string>> ReadSafetensorsMetadata(const std::string& path) {
  Expected<Parsed> p = ReadFile(path);
  if (!p) return p.error();
  return std::move(p).value().metadata;
}

}  // namespace seam
