// libFuzzer target: the plan readers (JSON and the text form) on arbitrary
// bytes. A plan either fails with a kMalformed error, or reads into plans
// that write back and read again to the same plans; nothing crashes, hangs
// or trips a sanitizer. Run it with scripts/fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "seam/plan_io.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

// Whatever reads must survive its own round trip.
void RoundTrips(const seam::Pipeline& plans) {
  seam::Expected<seam::Pipeline> again = seam::PipelineFromJson(seam::ToJson(plans));
  Require(again.ok());
  Require(again->size() == plans.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  seam::Expected<seam::Pipeline> json = seam::PipelineFromJson(text);
  if (json) {
    RoundTrips(*json);
  } else {
    Require(json.error().code == seam::ErrorCode::kMalformed);
  }
  seam::Expected<seam::Pipeline> plain = seam::PipelineFromText(text, "fuzz.txt");
  if (plain) {
    RoundTrips(*plain);
  } else {
    Require(plain.error().code == seam::ErrorCode::kMalformed);
  }
  return 0;
}
