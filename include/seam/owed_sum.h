// seam/owed_sum.h — a value that still owes a sum, as a type of its own.
//
// An owed sum offers the group it is owed over and one way out: completing
// it. It has no rows, size, device or data, so nothing can be read off a
// partial sum — a later pipeline rank reads its batch from the positions it
// is handed (the Batch), never from what arrives with them.
//
//   OwedSum<Tensor> owed(std::move(partial), Owed::kAttnTp);
//   Tensor full = std::move(owed).Complete([&](Tensor t, Owed g) { return comm.AllReduce(t, g); });
#pragma once

#include <span>
#include <utility>

#include "seam/layout.h"

namespace seam {

template <class T>
class OwedSum {
 public:
  OwedSum(T partial, Owed group) : partial_(std::move(partial)), group_(group) {
    SEAM_CHECK(group != Owed::kNothing, "a complete value is not an owed sum");
  }
  OwedSum(const OwedSum&) = delete;  // a sum completes once: the handle moves, never copies
  OwedSum& operator=(const OwedSum&) = delete;
  OwedSum(OwedSum&&) noexcept = default;
  OwedSum& operator=(OwedSum&&) noexcept = default;

  Owed group() const { return group_; }

  // Completes the sum with `reduce(partial, group)`, consuming the handle.
  template <class Reduce>
  T Complete(Reduce&& reduce) && {
    return std::forward<Reduce>(reduce)(std::move(partial_), group_);
  }

 private:
  T partial_;
  Owed group_;
};

}  // namespace seam
