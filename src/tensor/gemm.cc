// The row- and column-invariant matrix product (see seam/runtime/gemm.h).
//
// Every output element is one dot product of a row of x and a row of w held in
// eight lanes: lane j accumulates k = j, j+8, ... (acc = acc + x*w from +0),
// a K that is not a multiple of 8 puts its tail in lanes 0..r-1 of one more
// step, and the lanes are summed ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). One
// vector of eight floats is one element's lanes, so the vector code performs
// exactly the scalar contract, element by element.
//
// Kernel (its register tiles in gemm_tiles.h, the blocking here): x is
// packed once per block of MC rows into tiles of MR rows, step by step
// (rows side by side, K tail padded). A register tile of MR rows of x
// by NR rows of w walks a K-block of KC columns; its lanes are parked in a
// buffer between K-blocks (a store and a load keep every bit), and once K is
// done the buffer is reduced eight elements at a time by a transposed
// pairwise sum in the contract's order. Blocks of NC rows of w and the loop
// order keep each tile's w panel in L1 and the packed x panel in L2. The
// same source is compiled three times: for the x86-64 baseline (an element's
// lanes in two SSE registers), AVX2 (one ymm register) and AVX-512 (one zmm
// register holds two elements: two rows of x against one row of w). Each
// does the same float operations per lane in the same order, so all agree
// bit for bit; Gemm runs the widest the CPU has. No threads: callers
// parallelise by rank. A weight kept as bf16 halves is widened to floats
// (exactly) as a tile loads it, or once per panel where several tiles of x
// read the panel. One row of x (decode) is not blocked: the AVX2 path reads
// several rows of w at a time over the whole K (OneRow).
//
// The tail trick: lanes r..7 of the last step see x = w = +0, a product of
// +0, and acc + (+0) == acc for every value a lane can hold (a lane starts at
// +0 and becomes -0 only where x + (-x) rounds to -0, i.e. rounding
// downward, where -0 + +0 is -0 as well; NaN stays NaN, inf stays inf), so
// padding is the same as leaving those lanes alone.
#include "seam/runtime/gemm.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "seam/error.h"
#include "tensor/gemm_internal.h"
#include "tensor/gemm_tiles.h"

// No fused multiply-add, whatever the target: GCC contracts a*b+c (and
// _mm256_add_ps(_mm256_mul_ps(..))) into an FMA in C++ even with -std=c++20
// whenever the target has FMA (e.g. -march=native), and a fused product
// changes the bits. This keeps every function below separately rounded.
#pragma GCC optimize("fp-contract=off")

namespace seam {
namespace {

using gemm_internal::Path;
using namespace gemm_tiles;  // the kernel's register tiles

// A product of x's rows [0, M) and w's rows [0, N) over K columns; rows are
// ld elements apart; y rows are ldy floats apart. w is floats, or bf16
// values as their upper halves (wb, with w null).
struct Problem {
  const float* x;
  size_t ldx;
  const float* w;
  size_t ldw;
  const uint16_t* wb;
  float* y;
  size_t ldy;
  int m;
  int n;
  int k;
};

// The reference: the contract, element by element.
float ReferenceDot(const float* x, const float* w, int k) {
  float lane[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  int i = 0;
  for (; i + 8 <= k; i += 8) {
    for (int j = 0; j < 8; ++j) lane[j] = lane[j] + x[i + j] * w[i + j];
  }
  for (int j = 0; i + j < k; ++j) lane[j] = lane[j] + x[i + j] * w[i + j];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// `rows` rows of bf16 values, `ld` apart, k of each, widened to floats
// (exact: a bf16 value is the upper half of its float) into rows `out_ld`
// apart.
SEAM_INLINE void Widen(const uint16_t* w, size_t ld, int rows, int k, float* out, size_t out_ld) {
  for (int r = 0; r < rows; ++r) {
    const uint16_t* from = w + static_cast<size_t>(r) * ld;
    float* to = out + static_cast<size_t>(r) * out_ld;
    for (int i = 0; i < k; ++i) to[i] = std::bit_cast<float>(static_cast<uint32_t>(from[i]) << 16);
  }
}

void RunReference(const Problem& p) {
  std::vector<float> widened(p.wb != nullptr ? static_cast<size_t>(p.k) : 0);
  for (int n = 0; n < p.n; ++n) {
    const float* w = p.w + static_cast<size_t>(n) * p.ldw;
    if (p.wb != nullptr) {
      Widen(p.wb + static_cast<size_t>(n) * p.ldw, p.ldw, 1, p.k, widened.data(), 0);
      w = widened.data();
    }
    for (int m = 0; m < p.m; ++m) {
      p.y[static_cast<size_t>(m) * p.ldy + static_cast<size_t>(n)] =
          ReferenceDot(p.x + static_cast<size_t>(m) * p.ldx, w, p.k);
    }
  }
}

// Per-thread scratch, grown on demand; Release drops it when it got large
// (many rows of a very long K) rather than hold it for the thread's life.
float* Scratch(std::vector<float>& buffer, size_t floats) {
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

void Release(std::vector<float>& buffer) {
  constexpr size_t kKeep = size_t{1} << 20;  // floats (4 MiB)
  if (buffer.size() > kKeep) std::vector<float>().swap(buffer);
}

// The tiles of a packed block of mc rows of x against one tile of nr rows
// of w at a K-block of kc columns; w is floats or bf16 halves, ldw apart.
struct TilesOfX {
  const float* packed;  // the block of x, packed
  size_t steps;         // of the whole K
  int k0, mc, nr, kc;
  bool first;
  float* lanes;  // of the tile of w's first column
  size_t lanes_ld;

  template <int P, int IP, int NR, class W>
  SEAM_INLINE void Run(const W* w, size_t ldw) const {
    constexpr int MR = P * IP;
    for (int mt = 0; mt < mc; mt += MR) {
      const int r = std::min(MR, mc - mt);
      const size_t xstep = static_cast<size_t>(r) * 8;
      const float* xp = packed + static_cast<size_t>(mt) * steps * 8 + static_cast<size_t>(k0 / 8) * xstep;
      float* l = lanes + static_cast<size_t>(mt) * lanes_ld;
      if (r == MR && nr == NR) {
        Tile<P, IP, NR, W>(xp, xstep, w, ldw, kc, first, l, lanes_ld);
      } else {
        PartTile<P, IP, NR, W>(r, nr, xp, xstep, w, ldw, kc, first, l, lanes_ld);
      }
    }
  }
};

// The blocked product with tiles of P * IP rows of x by NR rows of w. Loops:
// MC rows of x (packed once), NC rows of w, KC columns, then NR-row tiles of w
// (the w panel stays in L1) and tiles of x (the packed MC x KC panel stays in
// L2). The lanes of the MC x NC block wait in a buffer between K-blocks.
template <int P, int IP, int NR, int MC, int NC, int KC>
SEAM_INLINE void Blocked(const Problem& p) {
  constexpr int MR = P * IP;
  static_assert(KC % 8 == 0 && MC % MR == 0 && NC % NR == 0);
  if (p.m == 0 || p.n == 0) return;
  if (p.k == 0) {  // no step at all: every lane, hence every sum, is +0
    for (int m = 0; m < p.m; ++m) std::fill_n(p.y + static_cast<size_t>(m) * p.ldy, p.n, 0.0f);
    return;
  }
  thread_local std::vector<float> packed_buffer, lanes_buffer, panel_buffer;
  const size_t steps = static_cast<size_t>((p.k + 7) / 8);
  float* packed = Scratch(packed_buffer, static_cast<size_t>(std::min(MC, p.m)) * steps * 8);
  float* lanes =
      Scratch(lanes_buffer, static_cast<size_t>(std::min(MC, p.m)) * static_cast<size_t>(std::min(NC, p.n)) * 8);
  float* panel = p.wb != nullptr ? Scratch(panel_buffer, static_cast<size_t>(NR) * KC) : nullptr;
  for (int m0 = 0; m0 < p.m; m0 += MC) {
    const int mc = std::min(MC, p.m - m0);
    PackX(p.x + static_cast<size_t>(m0) * p.ldx, p.ldx, mc, p.k, MR, packed);
    for (int n0 = 0; n0 < p.n; n0 += NC) {
      const int nc = std::min(NC, p.n - n0);
      const size_t lanes_ld = static_cast<size_t>(nc) * 8;
      for (int k0 = 0; k0 < p.k; k0 += KC) {
        const int kc = std::min(KC, p.k - k0);
        const bool first = k0 == 0;
        for (int nt = 0; nt < nc; nt += NR) {
          const int nr = std::min(NR, nc - nt);
          const size_t at = static_cast<size_t>(n0 + nt) * p.ldw + static_cast<size_t>(k0);
          float* l = lanes + static_cast<size_t>(nt) * 8;
          const TilesOfX tiles{.packed = packed,
                               .steps = steps,
                               .k0 = k0,
                               .mc = mc,
                               .nr = nr,
                               .kc = kc,
                               .first = first,
                               .lanes = l,
                               .lanes_ld = lanes_ld};
          if (p.wb == nullptr) {
            tiles.Run<P, IP, NR>(p.w + at, p.ldw);
          } else if (mc <= MR) {
            tiles.Run<P, IP, NR>(p.wb + at, p.ldw);  // one tile of x: widened as it is read
          } else {
            // Several tiles of x read the panel: widened once into floats.
            Widen(p.wb + at, p.ldw, nr, kc, panel, KC);
            tiles.Run<P, IP, NR>(static_cast<const float*>(panel), KC);
          }
        }
      }
      for (int i = 0; i < mc; ++i) {
        ReduceLanes(lanes + static_cast<size_t>(i) * lanes_ld, nc,
                    p.y + static_cast<size_t>(m0 + i) * p.ldy + static_cast<size_t>(n0));
      }
    }
  }
  Release(packed_buffer);
}

// One row of x (decode): the tile of one row of x by NR rows of w over the
// whole K, neither blocked nor held in a buffer of lanes between K-blocks.
// Its lanes stay in registers from the first step to the last, and NR
// chains of adds run side by side, where the blocked product's one-row edge
// tile runs three. The row is packed (its K tail padded) like any other.
template <int NR, class W>
SEAM_INLINE void OneRow(const Problem& p, const W* w) {
  thread_local std::vector<float> packed_buffer;
  float* packed = Scratch(packed_buffer, static_cast<size_t>((p.k + 7) / 8) * 8);
  PackX(p.x, p.ldx, 1, p.k, 1, packed);
  // Room for eight elements' lanes: ReduceLanes reads eight at a time where
  // it has them, and GCC cannot always see that nr < 8 never does.
  float lanes[std::max(NR, 8) * 8];
  for (int n = 0; n < p.n; n += NR) {
    const int nr = std::min(NR, p.n - n);
    EdgeTile<1, 1, NR, W>(1, nr, packed, 8, w + static_cast<size_t>(n) * p.ldw, p.ldw, p.k, true, lanes, NR * 8);
    ReduceLanes(lanes, nr, p.y + n);
  }
  Release(packed_buffer);
}

// One row of x against w's K-blocks (GemmBlocks, decode): block b of every
// output is exactly OneRow's of the block's columns, but each group of NR
// rows of w is read once, block after block, instead of once a block: the
// reads run along each row of w rather than jumping a row's length every
// block's width, which is what keeps one row bound by memory's bandwidth.
template <int NR, class W>
SEAM_INLINE void OneRowBlocks(const Problem& p, const W* w, int blocks, float* const* ys) {
  const int kb = p.k / blocks;
  const size_t steps = static_cast<size_t>((kb + 7) / 8);
  thread_local std::vector<float> packed_buffer;
  float* packed = Scratch(packed_buffer, static_cast<size_t>(blocks) * steps * 8);
  for (int b = 0; b < blocks; ++b) {
    PackX(p.x + static_cast<size_t>(b) * static_cast<size_t>(kb), p.ldx, 1, kb, 1,
          packed + static_cast<size_t>(b) * steps * 8);
  }
  float lanes[std::max(NR, 8) * 8];
  for (int n = 0; n < p.n; n += NR) {
    const int nr = std::min(NR, p.n - n);
    for (int b = 0; b < blocks; ++b) {
      const size_t k0 = static_cast<size_t>(b) * static_cast<size_t>(kb);
      EdgeTile<1, 1, NR, W>(1, nr, packed + static_cast<size_t>(b) * steps * 8, 8,
                            w + static_cast<size_t>(n) * p.ldw + k0, p.ldw, kb, true, lanes, NR * 8);
      ReduceLanes(lanes, nr, ys[b] + n);
    }
  }
  Release(packed_buffer);
}

// The x86-64 baseline: an element's lanes take two SSE registers, so a 2 x 2
// tile (8 registers of lanes) fits the 16 registers.
void RunPortable(const Problem& p) { Blocked<1, 2, 2, 64, 64, 512>(p); }

#if defined(__x86_64__) || defined(__i386__)
// AVX2 (used for AVX only, never FMA): one ymm register per element; 3 x 3
// leaves room in the 16 registers for the operands. One row of x: six rows
// of w at a time (measured against four, eight and ten: with W streamed
// from L3, six chains of adds keep up with the reads), in a function of
// its own, where the blocked product's state does not crowd out the row
// pointers.
[[gnu::target("avx2"), gnu::noinline]] void RunAvx2OneRow(const Problem& p) {
  if (p.wb != nullptr) return OneRow<6>(p, p.wb);
  OneRow<6>(p, p.w);
}

[[gnu::target("avx2"), gnu::noinline]] void RunAvx2OneRowBlocks(const Problem& p, int blocks, float* const* ys) {
  if (p.wb != nullptr) return OneRowBlocks<6>(p, p.wb, blocks, ys);
  OneRowBlocks<6>(p, p.w, blocks, ys);
}

[[gnu::target("avx2")]] void RunAvx2(const Problem& p) {
  if (p.m == 1) return RunAvx2OneRow(p);
  Blocked<1, 3, 3, 96, 48, 512>(p);
}

// AVX-512: one zmm register per two elements (two rows of x, one of w), a
// tile of 8 rows of x by 5 of w in 20 of the 32 registers.
[[gnu::target("avx512f")]] void RunAvx512(const Problem& p) { Blocked<2, 4, 5, 96, 100, 512>(p); }
#else
void RunAvx2OneRowBlocks(const Problem&, int, float* const*) {}
void RunAvx2(const Problem&) {}
void RunAvx512(const Problem&) {}
#endif

bool CpuHas(Path path) {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  static const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") != 0;
#else
  constexpr bool avx2 = false, avx512 = false;  // elsewhere only the portable kernel
#endif
  switch (path) {
    case Path::kReference:
    case Path::kPortable: return true;
    case Path::kAvx2: return avx2;
    case Path::kAvx512: return avx512;
  }
  return false;
}

void Run(Path path, const Problem& p) {
  switch (path) {
    case Path::kReference: RunReference(p); return;
    case Path::kPortable: RunPortable(p); return;
    case Path::kAvx2:
      SEAM_CHECK(CpuHas(path), "the AVX2 gemm path on a CPU without AVX2");
      RunAvx2(p);
      return;
    case Path::kAvx512:
      SEAM_CHECK(CpuHas(path), "the AVX-512 gemm path on a CPU without AVX-512");
      RunAvx512(p);
      return;
  }
  SEAM_CHECK(false, "unknown gemm path");
}

// The fastest path for m rows. Every path gives the same bits, so the choice
// is speed alone: AVX-512's register tile holds two rows of x, half of it
// idle for one row, where AVX2's one-row tile streams w at the same width.
Path BestPath(int m) {
  static const Path best = CpuHas(Path::kAvx512) ? Path::kAvx512 : CpuHas(Path::kAvx2) ? Path::kAvx2 : Path::kPortable;
  return m <= 2 && best == Path::kAvx512 ? Path::kAvx2 : best;
}

// w's elements: floats or bf16 halves, one of the two.
const float* Floats(MatrixView w) { return w.storage() == Dtype::kF32 ? w.data() : nullptr; }
const uint16_t* Halves(MatrixView w) { return w.storage() == Dtype::kBf16 ? w.bf16_data() : nullptr; }

// x's rows against w's into y's columns [0, w.rows()), y's rows ldy apart.
void GemmInto(Path path, const Tensor& x, MatrixView w, float* y, size_t ldy) {
  SEAM_CHECK(x.cols() == w.cols(), "gemm: x and w differ in K (w is [out, in])");
  if (x.rows() == 0 || w.rows() == 0) return;  // no data to point into
  Run(path, {.x = x.data(),
             .ldx = static_cast<size_t>(x.cols()),
             .w = Floats(w),
             .ldw = w.stride(),
             .wb = Halves(w),
             .y = y,
             .ldy = ldy,
             .m = x.rows(),
             .n = w.rows(),
             .k = x.cols()});
}

// Every element of y is written (an empty K gives +0), so y starts unset.
Tensor GemmWith(Path path, const Tensor& x, MatrixView w) {
  Tensor y = Tensor::Uninitialized(x.rows(), w.rows());
  GemmInto(path, x, w, y.data(), static_cast<size_t>(w.rows()));
  return y;
}

}  // namespace

namespace gemm_internal {

bool Supported(Path path) { return CpuHas(path); }

Tensor GemmOn(Path path, const Tensor& x, MatrixView w) { return GemmWith(path, x, w); }

}  // namespace gemm_internal

Tensor Gemm(const Tensor& x, MatrixView w) { return GemmWith(BestPath(x.rows()), x, w); }

Tensor GemmStacked(const Tensor& x, std::span<const MatrixView> parts) {
  int n = 0;
  for (const MatrixView& p : parts) n += p.rows();
  Tensor y = Tensor::Uninitialized(x.rows(), n);
  const Path path = BestPath(x.rows());
  int at = 0;
  for (const MatrixView& p : parts) {
    GemmInto(path, x, p, y.data() + at, static_cast<size_t>(n));
    at += p.rows();
  }
  return y;
}

std::vector<Tensor> GemmBlocks(const Tensor& x, MatrixView w, int blocks) {
  SEAM_CHECK(x.cols() == w.cols(), "gemm: x and w differ in K (w is [out, in])");
  SEAM_CHECK(blocks > 0 && x.cols() % blocks == 0, "gemm blocks: K is not a multiple of the block count");
  const int kb = x.cols() / blocks;
  const Path path = BestPath(x.rows());
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(blocks));
  if (x.rows() == 1 && path == Path::kAvx2 && w.rows() > 0) {  // decode: every block in one pass over w
    std::vector<float*> ys;
    for (int b = 0; b < blocks; ++b) {
      out.push_back(Tensor::Uninitialized(1, w.rows()));
      ys.push_back(out.back().data());
    }
    RunAvx2OneRowBlocks({.x = x.data(),
                         .ldx = static_cast<size_t>(x.cols()),
                         .w = Floats(w),
                         .ldw = w.stride(),
                         .wb = Halves(w),
                         .y = nullptr,
                         .ldy = 0,
                         .m = 1,
                         .n = w.rows(),
                         .k = x.cols()},
                        blocks, ys.data());
    return out;
  }
  for (int b = 0; b < blocks; ++b) {
    Tensor y = Tensor::Uninitialized(x.rows(), w.rows());
    const size_t k0 = static_cast<size_t>(b) * static_cast<size_t>(kb);
    // With no rows there is no data to offset into.
    if (!y.empty()) {
      const float* floats = Floats(w);
      const uint16_t* halves = Halves(w);
      Run(path, {.x = x.data() + k0,
                 .ldx = static_cast<size_t>(x.cols()),
                 .w = floats != nullptr ? floats + k0 : nullptr,
                 .ldw = w.stride(),
                 .wb = halves != nullptr ? halves + k0 : nullptr,
                 .y = y.data(),
                 .ldy = static_cast<size_t>(w.rows()),
                 .m = x.rows(),
                 .n = w.rows(),
                 .k = kb});
    }
    out.push_back(std::move(y));
  }
  return out;
}

}  // namespace seam

#undef SEAM_INLINE
