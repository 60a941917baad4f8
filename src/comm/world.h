// Backends behind the Comm interface (internal).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "seam/runtime/comm.h"

namespace seam::comm {

// Thrown in a rank that was waiting when another rank failed.
class RankAborted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The shared state of one threads run.
class ThreadWorld {
 public:
  ThreadWorld(int size, double timeout_seconds);
  ~ThreadWorld();
  int size() const;
  std::unique_ptr<Comm> CommFor(int rank);
  // Records the first failure and wakes every waiting rank.
  void Abort(int failed_rank, const std::string& what);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace seam::comm

namespace seam {
// The record backend (see Backend::kRecord).
std::unique_ptr<Comm> MakeRecordComm(int rank);
}  // namespace seam
