// Gemm's code paths, for the tests that compare them bit for bit.
#pragma once

#include "seam/runtime/tensor.h"

namespace seam::gemm_internal {

// kReference is the contract written out per element; kPortable, kAvx2 and
// kAvx512 are the blocked kernel compiled for the x86-64 baseline, AVX2 and
// AVX-512F. Gemm runs the widest the CPU supports, but AVX2 for one or two
// rows (measured faster there: bench_gemm's BM_SeamPath).
enum class Path { kReference, kPortable, kAvx2, kAvx512 };
bool Supported(Path path);
Tensor GemmOn(Path path, const Tensor& x, MatrixView w);

}  // namespace seam::gemm_internal
