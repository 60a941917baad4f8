// Tensor storage (seam/runtime/tensor.h): large blocks recycled per thread.
//
// A run makes the same shapes layer after layer, and a block the size of an
// activation is above malloc's mmap threshold: each fresh one is mapped,
// faulted in page by page and unmapped when freed (a sixth of a run's time
// was page faults). So a thread keeps the large blocks it frees, up to
// kMaxBlocks and kMaxBytes, and hands one back out for a tensor of exactly
// that size. Blocks are plain malloc memory: a block freed on another thread
// than the one that made it is simply kept there. Under AddressSanitizer a
// kept block is poisoned, so a tensor read after it is freed still fails.
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#include "seam/runtime/tensor.h"

// GCC says __SANITIZE_ADDRESS__, clang __has_feature(address_sanitizer).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SEAM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SEAM_ASAN 1
#endif

#if defined(SEAM_ASAN)
#include <sanitizer/asan_interface.h>
#define SEAM_POISON(p, bytes) ASAN_POISON_MEMORY_REGION(p, bytes)
#define SEAM_UNPOISON(p, bytes) ASAN_UNPOISON_MEMORY_REGION(p, bytes)
#else
#define SEAM_POISON(p, bytes) ((void)(p), (void)(bytes))
#define SEAM_UNPOISON(p, bytes) ((void)(p), (void)(bytes))
#endif

namespace seam {
namespace {

// Smaller blocks than kMinBytes are malloc's own business.
constexpr size_t kMinBytes = RecycledBlocks::kMinBytes;
constexpr size_t kMaxBlocks = RecycledBlocks::kMaxBlocks;
constexpr size_t kMaxBytes = RecycledBlocks::kMaxBytes;

struct Block {
  float* data;
  size_t floats;
};

class Recycler {
 public:
  Recycler() = default;
  Recycler(const Recycler&) = delete;
  Recycler& operator=(const Recycler&) = delete;
  ~Recycler();

  float* Take(size_t floats) {
    for (size_t i = kept_.size(); i-- > 0;) {  // the most recently freed first: warm in cache
      if (kept_[i].floats != floats) continue;
      float* p = kept_[i].data;
      kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(i));
      bytes_ -= floats * sizeof(float);
      SEAM_UNPOISON(p, floats * sizeof(float));
      return p;
    }
    return nullptr;
  }

  bool Keep(float* p, size_t floats) {
    const size_t bytes = floats * sizeof(float);
    if (kept_.size() >= kMaxBlocks || bytes_ + bytes > kMaxBytes) return false;
    kept_.push_back({p, floats});
    bytes_ += bytes;
    SEAM_POISON(p, bytes);
    return true;
  }

  RecycledBlocks Held() const { return {kept_.size(), bytes_}; }

 private:
  std::vector<Block> kept_;
  size_t bytes_ = 0;
};

// Set once the thread's recycler is destroyed (a tensor of static storage
// may be freed after it): trivially destructible, so always readable.
thread_local bool recycler_gone = false;

Recycler::~Recycler() {
  for (const Block& b : kept_) {
    SEAM_UNPOISON(b.data, b.floats * sizeof(float));
    std::free(b.data);
  }
  recycler_gone = true;
}

Recycler* ThisThread() {
  if (recycler_gone) return nullptr;
  thread_local Recycler r;
  return &r;
}

}  // namespace

float* TensorAllocator::allocate(size_t n) {
  if (n > SIZE_MAX / sizeof(float)) throw std::bad_alloc();
  if (n * sizeof(float) >= kMinBytes) {
    if (Recycler* r = ThisThread()) {
      if (float* p = r->Take(n)) return p;
    }
  }
  void* p = std::malloc(n * sizeof(float));
  if (p == nullptr && n > 0) throw std::bad_alloc();
  return static_cast<float*>(p);
}

void TensorAllocator::deallocate(float* p, size_t n) noexcept {
  if (p == nullptr) return;
  if (n * sizeof(float) >= kMinBytes) {
    if (Recycler* r = ThisThread(); r != nullptr && r->Keep(p, n)) return;
  }
  std::free(p);
}

RecycledBlocks ThreadRecycledBlocks() {
  const Recycler* r = ThisThread();
  return r != nullptr ? r->Held() : RecycledBlocks{};
}

}  // namespace seam
