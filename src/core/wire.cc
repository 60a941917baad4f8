#include "seam/wire.h"

#include <fmt/format.h>

#include "core/enum_text.h"

namespace seam {
namespace {

constexpr auto kDtypes = EnumNames<WireDtype>(
    "wire dtype",
    {{WireDtype::kFp32, "fp32"}, {WireDtype::kBf16, "bf16"}, {WireDtype::kFp16, "fp16"}, {WireDtype::kFp8, "fp8"}});

}  // namespace

double ElementBytes(WireDtype d) {
  switch (d) {
    case WireDtype::kFp32: return 4;
    case WireDtype::kBf16:
    case WireDtype::kFp16: return 2;
    case WireDtype::kFp8: return 1;
  }
  return 4;
}

double RowBytes(WireDtype d, int width) {
  const double scales = d == WireDtype::kFp8 ? 4.0 * ((width + kFp8ScaleBlock - 1) / kFp8ScaleBlock) : 0;
  return ElementBytes(d) * width + scales;
}

Status Validate(const WireDtypes& w) {
  if (w.act == WireDtype::kFp8) {
    return InvalidArgument(
        "the activation dtype is bf16, fp16 or fp32: fp8 applies only to the all-to-all dispatch (as DeepEP sends it)");
  }
  return Status();
}

std::string_view Name(WireDtype d) { return kDtypes.Name(d); }
Expected<WireDtype> ParseWireDtype(std::string_view text) { return kDtypes.Parse(text); }

}  // namespace seam
