// seam/wire.h — the dtypes activations cross the wire in, and the bytes a
// row of them takes.
//
// Engines run activations in bf16, so every collective moves 2 bytes an
// element by default. DeepEP may dispatch in fp8 with one fp32 scale per
// block of 128 elements (the combine stays in the activation dtype), so a
// dispatched row of h elements is h + 4 * ceil(h / 128) bytes.
//
//   WireDtypes w{.act = WireDtype::kBf16, .dispatch = WireDtype::kFp8};
//   double b = RowBytes(w.dispatch, 7168);   // 7392
#pragma once

#include <string_view>

#include "seam/error.h"

namespace seam {

enum class WireDtype { kFp32, kBf16, kFp16, kFp8 };

// Elements that share one fp32 scale in an fp8 row (DeepEP's block).
inline constexpr int kFp8ScaleBlock = 128;

struct WireDtypes {
  WireDtype act = WireDtype::kBf16;       // every collective but the dispatch
  WireDtype dispatch = WireDtype::kBf16;  // the all-to-all dispatch of a MoE
  bool operator==(const WireDtypes&) const = default;
};

// Bytes of one element of `d`, without scales (an fp8 value is 1).
double ElementBytes(WireDtype d);
// Bytes of one row of `width` elements in `d`, scales included.
double RowBytes(WireDtype d, int width);

// fp8 is a dispatch dtype only: the sums and gathers of activations are not
// quantised by any engine seam models.
Status Validate(const WireDtypes& w);

std::string_view Name(WireDtype d);
Expected<WireDtype> ParseWireDtype(std::string_view text);

}  // namespace seam
