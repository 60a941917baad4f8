// Reading a safetensors file's header: a SAX handler builds the JSON
// document itself, so it can refuse duplicate keys (nlohmann keeps the last
// silently) and deep nesting before either costs memory, and remember the
// header order of the tensor names. Then every entry is checked and the
// tensors must tile the data section exactly.
#include "io/safetensors_index.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <nlohmann/json.hpp>

#include "seam/runtime/tensor.h"

namespace seam::st {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the limit the reference implementation uses
constexpr size_t kMaxDepth = 8;                    // a valid header nests 3 deep
constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
constexpr const char* kMetadataKey = "__metadata__";

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
      if (stack_.size() == 2 && tensor_ == kMetadataKey)
        return Stop(fmt::format("__metadata__: duplicate key '{}'", k));
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
  if (e.begin > e.end)
    throw Bad{fmt::format("tensor '{}': data_offsets [{}, {}] begin after they end", name, e.begin, e.end)};
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

Index IndexOrThrow(std::span<const uint8_t> bytes) {
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

  Index out;
  out.data = data;
  std::vector<Entry>& entries = out.entries;
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
  return out;
}

}  // namespace

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

Expected<Index> IndexOf(std::span<const uint8_t> bytes, std::string_view where) {
  try {
    return IndexOrThrow(bytes);
  } catch (const Bad& b) {
    return Malformed(fmt::format("{}: {}", where, b.message));
  }
}

void DecodeFloats(const Entry& e, const uint8_t* data, uint64_t first, std::span<float> out) {
  SEAM_CHECK(IsFloat(e.dtype), fmt::format("'{}' is not a tensor of floats", e.name));
  SEAM_CHECK(first <= e.count && out.size() <= e.count - first, fmt::format("elements outside '{}'", e.name));
  const size_t item = ItemSize(e.dtype);
  const uint8_t* p = data + e.begin + first * item;
  if (e.dtype == StDtype::kF32) {
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = std::bit_cast<float>(static_cast<uint32_t>(Load(p + i * item, item)));
  } else {
    for (size_t i = 0; i < out.size(); ++i) out[i] = FromBf16Bits(static_cast<uint16_t>(Load(p + i * item, item)));
  }
}

StTensor Decode(const Entry& e, const uint8_t* data) {
  StTensor t{.name = e.name, .dtype = e.dtype, .shape = e.shape};
  const size_t n = static_cast<size_t>(e.count);
  const size_t item = ItemSize(e.dtype);
  const uint8_t* p = data + e.begin;
  switch (e.dtype) {
    case StDtype::kF32:
    case StDtype::kBf16:
      t.floats.resize(n);
      DecodeFloats(e, data, 0, t.floats);
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

}  // namespace seam::st
