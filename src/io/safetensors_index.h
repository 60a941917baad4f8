// A safetensors file's validated header: where each tensor's bytes are in
// the data section. Decoding is separate, so a reader can map a file and
// decode only the tensors it needs, one at a time.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seam/runtime/safetensors.h"

namespace seam::st {

inline constexpr const char* kMetadataKey = "__metadata__";

struct Entry {
  std::string name;
  StDtype dtype = StDtype::kF32;
  std::vector<int64_t> shape;
  uint64_t count = 0;  // elements
  uint64_t begin = 0;  // byte range in the data section
  uint64_t end = 0;
  size_t header_index = 0;
};

struct Index {
  std::vector<Entry> entries;  // in data order (ties in header order)
  std::map<std::string, std::string> metadata;
  std::span<const uint8_t> data;  // the data section of the bytes indexed
};

// Validates the header of `bytes` and that the tensors tile its data
// section; errors are kMalformed and start with `where`.
Expected<Index> IndexOf(std::span<const uint8_t> bytes, std::string_view where);
StTensor Decode(const Entry& e, const uint8_t* data);
// Elements [first, first + out.size()) of an F32 or BF16 tensor, as floats.
void DecodeFloats(const Entry& e, const uint8_t* data, uint64_t first, std::span<float> out);

bool IsFloat(StDtype d);
std::string ShapeText(std::span<const int64_t> shape);
// The element count of a shape; false when it does not fit in an int64.
bool ElementCount(std::span<const int64_t> shape, uint64_t& count);

}  // namespace seam::st
