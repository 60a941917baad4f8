// libFuzzer target: every trace reader on arbitrary bytes (seam.trace's
// JSON lines, an NCCL log, a PyTorch profiler trace; the input split at
// its first NUL into two files for the last two). A trace either fails with
// a kMalformed error or reads into ranks in increasing order, each event's
// elements within the bound (and, where it has a shape, its product);
// nothing crashes, hangs or trips a sanitizer. Run it with scripts/fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "seam/trace.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

void CheckRead(const seam::Expected<std::vector<seam::RankTrace>>& t) {
  if (!t) {
    Require(t.error().code == seam::ErrorCode::kMalformed);
    return;
  }
  int last = -1;
  for (const seam::RankTrace& r : *t) {
    Require(r.rank > last);
    last = r.rank;
    for (const seam::TraceEvent& e : r.events) {
      int64_t product = 1;
      for (int64_t d : e.shape) product *= d;
      Require(product == e.elements && e.elements >= 0 && e.elements <= seam::kMaxTraceElements);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckRead(seam::ReadJsonlTrace(text));
  const size_t nul = text.find('\0');
  std::vector<std::string> files = {std::string(text.substr(0, nul))};
  if (nul != std::string_view::npos) files.emplace_back(text.substr(nul + 1));
  CheckRead(seam::ReadNcclLogs(files));
  CheckRead(seam::ReadTorchTraces(files));
  return 0;
}
