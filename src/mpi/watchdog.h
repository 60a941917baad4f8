// Ends the process when a blocking MPI call has not returned within the
// timeout (internal). MPI_Init, the communicators' creation and
// MPI_Finalize have no deadline of their own: a rank stopped or cut off
// while the others are in one would hold them forever. Exit status 3 (a
// deadline) reaches mpirun, which then ends the job's other processes.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "seam/error.h"

namespace seam::mpi {

class Watchdog {
 public:
  // `what` ends "seam: rank R: " on stderr when the time runs out.
  Watchdog(double seconds, std::string what) {
    if (seconds <= 0) return;
    thread_ = std::thread([this, seconds, what = std::move(what)] {
      std::unique_lock<std::mutex> lock(mu_);
      if (done_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) return;
      const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
      const std::string line = fmt::format("seam: rank {}: {}; ending the job\n", rank != nullptr ? rank : "?", what);
      std::fwrite(line.data(), 1, line.size(), stderr);
      std::fflush(stderr);
      std::_Exit(ExitStatusOf(ErrorCode::kDeadlineExceeded));
    });
  }
  ~Watchdog() {
    if (!thread_.joinable()) return;
    {
      const std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    done_cv_.notify_one();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace seam::mpi
