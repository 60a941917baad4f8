#include "mpi/wait.h"

#include <fmt/format.h>

#include <chrono>
#include <stdexcept>
#include <thread>

namespace seam::mpi {

void Check(int rc, std::string_view call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Failure(FailedCheck(fmt::format("{} failed: {}", call, std::string_view(text, static_cast<size_t>(length)))));
}

void WaitAll(std::span<MPI_Request> requests, std::span<const int> peers, double timeout_seconds,
             std::string_view what) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (true) {
    int done = 0;
    Check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (done) return;
    if (Clock::now() > deadline) break;
    // Ranks may share cores (--oversubscribe): give the others a turn.
    std::this_thread::yield();
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    int done = 0;
    Check(MPI_Test(&requests[i], &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) continue;
    const int peer = i < peers.size() ? peers[i] : -1;
    if (peer >= 0) {
      throw PeerTimeout(fmt::format("rank {} did not answer within {:.3g} s ({})", peer, timeout_seconds, what));
    }
    throw PeerTimeout(fmt::format("the group did not complete {} within {:.3g} s", what, timeout_seconds));
  }
}

}  // namespace seam::mpi
