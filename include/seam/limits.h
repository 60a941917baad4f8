// seam/limits.h — the bounds every front door (the command line, the Python
// package) puts on the numbers it reads, so that a size no machine has is
// refused as bad input before anything grows with it.
//
//   if (tp > kMaxRanks) return InvalidArgument(...);
#pragma once

namespace seam {

inline constexpr int kMaxRanks = 65536;        // tp, attn_dp, dense_tp, ep, pp
inline constexpr int kMaxLayerCount = 100000;  // layers, each pp_split count (a config's own limit)
inline constexpr int kMaxTokens = 1 << 20;     // tokens, requests; compare's batch, prefill and context
inline constexpr int kMaxGpus = 1024;          // compare's GPUs and nodes: the enumeration grows with divisors
inline constexpr double kMinSeconds = 1e-3;    // a run's timeout
inline constexpr double kMaxSeconds = 86400;   // a day

}  // namespace seam
