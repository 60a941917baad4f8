// seam/runtime/safetensors.h — reading and writing the safetensors format.
//
// A file is an 8-byte little-endian header length N, N bytes of UTF-8 JSON
// (tensor name -> {"dtype", "shape", "data_offsets": [begin, end]}, plus an
// optional "__metadata__" object of strings), padded with spaces so the data
// section starts 8-byte aligned, then the raw little-endian tensor data.
//
// The reader is strict and never trusts the file: every malformed case (a
// short file, a bad header, overlapping or uncovered data, ...) is a
// kMalformed Error that names the file and the tensor or field, never a crash
// and never an allocation larger than the data actually present.
//
//   std::vector<StTensor> t = {{.name = "w", .dtype = StDtype::kBf16, .shape = {2, 3},
//                               .floats = {1, 2, 3, 4, 5, 6}}};
//   Status s = WriteSafetensors("w.safetensors", t, {{"format", "pt"}});
//   Expected<std::vector<StTensor>> back = ReadSafetensors("w.safetensors");
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam {

enum class StDtype { kF32, kBf16, kI32, kI64 };
std::string_view Name(StDtype d);  // "F32", "BF16", "I32", "I64"
Expected<StDtype> ParseStDtype(std::string_view text);
size_t ItemSize(StDtype d);  // bytes per element: 4, 2, 4, 8

struct StTensor {
  std::string name;
  StDtype dtype = StDtype::kF32;
  std::vector<int64_t> shape;  // {} is a 0-d tensor (one element)
  std::vector<float> floats;   // F32 and BF16 (BF16 values held as floats; written rounded with Bf16Bits)
  std::vector<int64_t> ints;   // I32 and I64
  bool operator==(const StTensor&) const = default;
};

// Writes the tensors in the given order, contiguous, after a header padded to
// 8 bytes. An inconsistent tensor (values not matching the shape, a duplicate
// or empty name, an I32 value out of range, ...) or a failed write is an
// error; nothing is written then.
Status WriteSafetensors(const std::string& path, const std::vector<StTensor>& tensors,
                        const std::map<std::string, std::string>& metadata = {});

// The tensors of a file, in the order of their data offsets (tensors with the
// same offsets in header order). Errors start with the path.
Expected<std::vector<StTensor>> ReadSafetensors(const std::string& path);
// The same from memory; errors start with "safetensors buffer".
Expected<std::vector<StTensor>> ParseSafetensors(std::span<const uint8_t> bytes);

// A file opened to read its tensors one at a time: mapped, its header and
// layout validated as ReadSafetensors does, nothing decoded until asked, so
// reading a checkpoint needs the memory of its values once, not twice.
struct StTensorInfo {
  std::string name;
  StDtype dtype = StDtype::kF32;
  std::vector<int64_t> shape;
};
class SafetensorsFile {
 public:
  static Expected<SafetensorsFile> Open(const std::string& path);
  const std::string& path() const;
  const std::vector<StTensorInfo>& tensors() const;  // in data order
  const std::map<std::string, std::string>& metadata() const;
  const StTensorInfo* Find(std::string_view name) const;  // null when absent
  StTensor Read(std::string_view name) const;             // it must exist
  // Elements [first, first + out.size()) of an F32 or BF16 tensor (which
  // must exist and hold them), as floats: a tensor read a block at a time.
  void ReadFloats(std::string_view name, uint64_t first, std::span<float> out) const;

 private:
  struct State;
  explicit SafetensorsFile(std::shared_ptr<const State> s) : state_(std::move(s)) {}
  std::shared_ptr<const State> state_;
};

// The "__metadata__" object of a file (empty when absent); the whole file is
// validated as ReadSafetensors does.
Expected<std::map<std::string, std::string>> ReadSafetensorsMetadata(const std::string& path);

}  // namespace seam
