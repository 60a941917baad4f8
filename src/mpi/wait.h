// Bounded waits on MPI requests (internal). Every wait polls with a deadline
// instead of blocking, so a rank that stops answering cannot hang the job.
#pragma once

#include <mpi.h>

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam::mpi {

// A wait that ran out: the rank waited on did not answer in time.
class PeerTimeout : public Failure {
 public:
  explicit PeerTimeout(std::string message) : Failure(DeadlineExceeded(std::move(message))) {}
};

// Waits for every request until `timeout_seconds` pass. `peers[i]` names the
// rank request i waits on (-1 for a collective of the whole group); on a
// timeout the error names the first rank still missing and `what`.
void WaitAll(std::span<MPI_Request> requests, std::span<const int> peers, double timeout_seconds,
             std::string_view what);

// Fails when an MPI call does not return MPI_SUCCESS.
void Check(int rc, std::string_view call);

}  // namespace seam::mpi
