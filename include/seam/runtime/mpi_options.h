// seam/runtime/mpi_options.h — how an MPI job runs: its collectives' mode, its
// deadline and an injected fault. Apart from seam/runtime/mpi.h so that a caller
// built without MPI (the command line) can parse and check them too.
//
//   Expected<Fault> f = ParseFault("3:kill@2");
#pragma once

#include <string_view>

#include "seam/error.h"

namespace seam {

enum class MpiMode { kCanonical, kNative };
std::string_view Name(MpiMode m);
Expected<MpiMode> ParseMpiMode(std::string_view text);

// A fault to inject, for testing how a job fails: at its `at_call`-th
// communication call rank `rank` throws, kills itself (SIGKILL) or stops
// answering; `input` fails the rank's setup as bad input would.
enum class FaultKind { kThrow, kKill, kHang, kInput };
std::string_view Name(FaultKind k);
struct Fault {
  int rank = -1;  // -1: none
  FaultKind kind = FaultKind::kThrow;
  int at_call = 3;
};
// "RANK:KIND" or "RANK:KIND@CALL", e.g. "3:kill", "1:hang@5".
Expected<Fault> ParseFault(std::string_view text);

struct MpiOptions {
  MpiMode mode = MpiMode::kCanonical;
  double timeout_seconds = 60.0;  // the longest any rank waits for another
  Fault fault;
};

}  // namespace seam
