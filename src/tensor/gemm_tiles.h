// The GEMM kernel's register tiles (see src/tensor/gemm.cc for the contract
// they perform): one output element's eight lanes as one vector, loading
// rows of w (floats, or bf16 halves widened exactly), packing rows of x step
// by step, a tile of rows of x by rows of w over a K-block, and the sum of
// each element's lanes in the contract's order. gemm.cc blocks the product
// and compiles these once per instruction set, so every function here is
// inlined into its caller and takes the caller's target.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

// No fused multiply-add, whatever the target (see gemm.cc): a fused product
// changes the bits.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

#define SEAM_INLINE [[gnu::always_inline]] inline

namespace seam::gemm_tiles {

// One output element's eight lanes (GCC vector extension: the same source
// becomes one ymm register under AVX2 and two xmm registers on the baseline).
typedef float V8 __attribute__((vector_size(32)));

// Eight lanes of P elements side by side: P = 1 is one ymm register (two xmm
// on the baseline), P = 2 one zmm register holding two elements.
template <int P>
struct Lanes;
template <>
struct Lanes<1> {
  typedef float V __attribute__((vector_size(32)));
};
template <>
struct Lanes<2> {
  typedef float V __attribute__((vector_size(64)));
};

// Eight floats of a row of w, once per element of the lane vector. (Vectors
// go by reference: passing them by value outside AVX code is an ABI change
// the compiler warns about.)
template <int P>
SEAM_INLINE void LoadW(const float* w, typename Lanes<P>::V& out) {
  if constexpr (P == 1) {
    std::memcpy(&out, w, sizeof(V8));
  } else {
    // One broadcast load. GCC 12 turns the portable spelling,
    // __builtin_shufflevector(v, v, 0..7, 0..7), into a load and a shuffle on
    // the port the adds need, and the intrinsic cannot be inlined into this
    // target-neutral template; only the AVX-512 path instantiates P = 2.
    typedef float V8u __attribute__((vector_size(32), aligned(4)));
    asm("vbroadcastf64x4 %1, %0" : "=v"(out) : "m"(*reinterpret_cast<const V8u*>(w)));
  }
}

// Eight bf16 values of a row of w, widened (exact: a bf16 value is the upper
// half of its float): what a tile reads of a weight kept in 16 bits when
// widening a panel first would not pay (a single tile of x reads it). Each
// half goes to the upper 16 bits of a 32-bit lane by interleaving it with
// zeros: a permute and an unpack under AVX2, where a widening convert and a
// shift took six instructions.
template <int P>
SEAM_INLINE void LoadW(const uint16_t* w, typename Lanes<P>::V& out) {
  typedef uint16_t H8 __attribute__((vector_size(16)));
  typedef uint16_t H16 __attribute__((vector_size(32)));
  H8 h;
  std::memcpy(&h, w, sizeof(H8));
  const H8 zero = {};
  const H16 interleaved = __builtin_shufflevector(zero, h, 0, 8, 0, 9, 0, 10, 0, 11, 0, 12, 0, 13, 0, 14, 0, 15);
  V8 v;
  std::memcpy(&v, &interleaved, sizeof(V8));
  if constexpr (P == 1) {
    out = v;
  } else {
    out = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
  }
}

// The lanes of P elements, element h at lanes + h * ld, into one vector and
// back. (Whole-vector moves only: taking the address of a half would keep the
// accumulators out of registers.)
template <int P>
SEAM_INLINE void LoadLanes(const float* lanes, size_t ld, typename Lanes<P>::V& out) {
  if constexpr (P == 1) {
    std::memcpy(&out, lanes, sizeof(V8));
  } else {
    V8 lo, hi;
    std::memcpy(&lo, lanes, sizeof(V8));
    std::memcpy(&hi, lanes + ld, sizeof(V8));
    out = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  }
}

template <int P>
SEAM_INLINE void StoreLanes(const typename Lanes<P>::V& v, float* lanes, size_t ld) {
  if constexpr (P == 1) {
    std::memcpy(lanes, &v, sizeof(V8));
  } else {
    const V8 lo = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
    const V8 hi = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    std::memcpy(lanes, &lo, sizeof(V8));
    std::memcpy(lanes + ld, &hi, sizeof(V8));
  }
}

// Copies rows [0, rows) of x (ldx floats apart, k columns) into tiles of
// `mr` rows (the last may be shorter). A tile of r rows holds its rows step
// by step, [step][row][8 floats], its tail step padded with +0, so a tile's
// K-block is one sequential stream and rows i, i+1 of a step are adjacent.
SEAM_INLINE void PackX(const float* x, size_t ldx, int rows, int k, int mr, float* out) {
  const int full = k / 8;
  const int tail = k - full * 8;
  const size_t steps = static_cast<size_t>((k + 7) / 8);
  for (int t0 = 0; t0 < rows; t0 += mr) {
    const int r = std::min(mr, rows - t0);
    float* tile = out + static_cast<size_t>(t0) * steps * 8;
    for (int i = 0; i < r; ++i) {
      const float* src = x + static_cast<size_t>(t0 + i) * ldx;
      float* dst = tile + static_cast<size_t>(i) * 8;
      const size_t stride = static_cast<size_t>(r) * 8;
      for (int s = 0; s < full; ++s) std::memcpy(dst + static_cast<size_t>(s) * stride, src + s * 8, sizeof(V8));
      if (tail > 0) {
        float* last = dst + static_cast<size_t>(full) * stride;
        std::fill_n(last, 8, 0.0f);
        std::memcpy(last, src + full * 8, static_cast<size_t>(tail) * sizeof(float));
      }
    }
  }
}

// One step of eight K-columns: each group's P rows of x (packed at xs) times
// each of the NR rows of w (loaded in wv), added lane by lane.
template <int P, int IP, int NR, class V>
SEAM_INLINE void Accumulate(V (&acc)[IP][NR], const float* xs, const V (&wv)[NR]) {
#pragma GCC unroll 8
  for (int g = 0; g < IP; ++g) {
    V xv;
    std::memcpy(&xv, xs + g * P * 8, sizeof(V));
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) acc[g][j] = acc[g][j] + xv * wv[j];
  }
}

// One tile: IP groups of P rows of x by NR rows of w, over kc columns. Row i
// of x at step s is xp[s * xstep + i * 8] (packed, tail padded); w's rows are
// ldw floats apart. The lanes of element (i, j) live at
// lanes + i * lanes_ld + j * 8; `first` starts them at +0.
template <int P, int IP, int NR, class W>
SEAM_INLINE void Tile(const float* xp, size_t xstep, const W* w, size_t ldw, int kc, bool first, float* lanes,
                      size_t lanes_ld) {
  using V = typename Lanes<P>::V;
  V acc[IP][NR];
#pragma GCC unroll 8
  for (int g = 0; g < IP; ++g) {
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) {
      if (first) {
        acc[g][j] = V{};
      } else {
        LoadLanes<P>(lanes + static_cast<size_t>(g * P) * lanes_ld + static_cast<size_t>(j) * 8, lanes_ld, acc[g][j]);
      }
    }
  }
  const int full = kc / 8;
  for (int s = 0; s < full; ++s) {
    V wv[NR];
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) LoadW<P>(w + static_cast<size_t>(j) * ldw + static_cast<size_t>(s) * 8, wv[j]);
    const float* xs = xp + static_cast<size_t>(s) * xstep;
    Accumulate<P, IP, NR>(acc, xs, wv);
  }
  if (const int tail = kc - full * 8; tail > 0) {
    // Lanes 0..tail-1 of one more step; the rest see +0 * +0 (see the top).
    V wv[NR];
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) {
      W padded[8] = {};  // +0 as a float and as bf16 halves
      std::memcpy(padded, w + static_cast<size_t>(j) * ldw + static_cast<size_t>(full) * 8,
                  static_cast<size_t>(tail) * sizeof(W));
      LoadW<P>(padded, wv[j]);
    }
    const float* xs = xp + static_cast<size_t>(full) * xstep;
    Accumulate<P, IP, NR>(acc, xs, wv);
  }
#pragma GCC unroll 8
  for (int g = 0; g < IP; ++g) {
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) {
      StoreLanes<P>(acc[g][j], lanes + static_cast<size_t>(g * P) * lanes_ld + static_cast<size_t>(j) * 8, lanes_ld);
    }
  }
}

// A tile of ip groups by nr rows of w (at most IP x NR), through the
// instantiation of that size.
template <int P, int IP, int NR, class W>
SEAM_INLINE void EdgeTile(int ip, int nr, const float* xp, size_t xstep, const W* w, size_t ldw, int kc, bool first,
                          float* lanes, size_t lanes_ld) {
  if constexpr (IP > 1) {
    if (ip < IP) return EdgeTile<P, IP - 1, NR, W>(ip, nr, xp, xstep, w, ldw, kc, first, lanes, lanes_ld);
  }
  if constexpr (NR > 1) {
    if (nr < NR) return EdgeTile<P, IP, NR - 1, W>(ip, nr, xp, xstep, w, ldw, kc, first, lanes, lanes_ld);
  }
  Tile<P, IP, NR, W>(xp, xstep, w, ldw, kc, first, lanes, lanes_ld);
}

// A tile of r < P * IP rows or nr < NR columns: whole groups of P rows, then
// any rows left one at a time (one element per lane vector).
template <int P, int IP, int NR, class W>
SEAM_INLINE void PartTile(int r, int nr, const float* xp, size_t xstep, const W* w, size_t ldw, int kc, bool first,
                          float* lanes, size_t lanes_ld) {
  const int groups = r / P;
  if (groups > 0) EdgeTile<P, IP, NR, W>(groups, nr, xp, xstep, w, ldw, kc, first, lanes, lanes_ld);
  if constexpr (P > 1) {
    for (int i = groups * P; i < r; ++i) {
      EdgeTile<1, 1, NR, W>(1, nr, xp + static_cast<size_t>(i) * 8, xstep, w, ldw, kc, first,
                            lanes + static_cast<size_t>(i) * lanes_ld, lanes_ld);
    }
  }
}

// Sums `count` consecutive lane groups (8 floats each) into y[0, count) in the
// contract's order ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). Eight at a time by a
// transposed pairwise sum: each level adds the even lanes to the odd lanes of
// two vectors, so level one forms l0+l1, l2+l3, l4+l5, l6+l7, level two their
// pairs, level three the two halves, and the result is in element order.
SEAM_INLINE void ReduceLanes(const float* lanes, int count, float* y) {
  typedef int I8 __attribute__((vector_size(32)));
  const I8 even = {0, 2, 4, 6, 8, 10, 12, 14};
  const I8 odd = {1, 3, 5, 7, 9, 11, 13, 15};
  int n = 0;
  for (; n + 8 <= count; n += 8) {
    V8 a[8];
    std::memcpy(a, lanes + static_cast<size_t>(n) * 8, sizeof(a));
    V8 b[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      b[i] = __builtin_shuffle(a[2 * i], a[2 * i + 1], even) + __builtin_shuffle(a[2 * i], a[2 * i + 1], odd);
    }
    V8 c[2];
#pragma GCC unroll 2
    for (int i = 0; i < 2; ++i) {
      c[i] = __builtin_shuffle(b[2 * i], b[2 * i + 1], even) + __builtin_shuffle(b[2 * i], b[2 * i + 1], odd);
    }
    const V8 sum = __builtin_shuffle(c[0], c[1], even) + __builtin_shuffle(c[0], c[1], odd);
    std::memcpy(y + n, &sum, sizeof(V8));
  }
  for (; n < count; ++n) {
    const float* l = lanes + static_cast<size_t>(n) * 8;
    y[n] = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
  }
}

}  // namespace seam::gemm_tiles

#pragma GCC pop_options
