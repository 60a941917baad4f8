// libFuzzer target: seam.trace's JSON-lines reader on arbitrary bytes. A
// trace either fails with a kMalformed error or reads into ranks in
// increasing order, each event's elements its shape's product within the
// bound; nothing crashes, hangs or trips a sanitizer. Run it with
// scripts/fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "seam/trace.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const seam::Expected<std::vector<seam::RankTrace>> t = seam::ReadJsonlTrace(text);
  if (!t) {
    Require(t.error().code == seam::ErrorCode::kMalformed);
    return 0;
  }
  int last = -1;
  for (const seam::RankTrace& r : *t) {
    Require(r.rank > last);
    last = r.rank;
    for (const seam::TraceEvent& e : r.events) {
      int64_t product = 1;
      for (int64_t d : e.shape) product *= d;
      Require(product == e.elements && e.elements <= seam::kMaxTraceElements);
    }
  }
  return 0;
}
