// The MPI process: its lifetime, agreement on every rank's status, aborts.
#include <fmt/format.h>
#include <malloc.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "mpi/bytes.h"
#include "mpi/wait.h"
#include "mpi/watchdog.h"
#include "seam/runtime/mpi.h"

namespace seam {

namespace {}  // namespace

MpiProcess::MpiProcess(int* argc, char*** argv, double join_timeout_seconds) {
  // A rank asks for buffers of the same sizes step after step (a layer's
  // activations, each collective's output). glibc would map the big ones
  // fresh every time and return them to the system on free, paying a page
  // fault per 4 KiB each step; keep them in the heap instead.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    const mpi::Watchdog watchdog(join_timeout_seconds,
                                 fmt::format("not every process of the job started MPI within --timeout {:g} s (one "
                                             "is not seam, or is stopped)",
                                             join_timeout_seconds));
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  }
  // Errors come back as codes (checked by mpi::Check), not as MPI's own abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiProcess::~MpiProcess() {
  // No deadline here: the other ranks wait in MPI_Finalize while rank 0
  // checks the run against the reference, for as long as that takes.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

Status MpiProcess::Agree(const Status& mine, double timeout_seconds) const {
  mpi::Bytes out;
  out.Int(mine.ok() ? -1 : static_cast<int>(mine.error().code));
  out.String(mine.ok() ? "" : mine.error().message);
  std::vector<mpi::Bytes> all;
  try {
    all = mpi::AllGatherBytes(out, MPI_COMM_WORLD, timeout_seconds, "the ranks' setup");
  } catch (const mpi::PeerTimeout& e) {
    Abort(fmt::format("rank {} stopped waiting: {}", rank_, e.what()), ExitStatusOf(e.error().code),
          AbortGrace(timeout_seconds));
  }
  int first = -1;
  bool same = true;
  std::string message;
  int code = -1;
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    mpi::Reader in(all[static_cast<size_t>(r)]);
    const int c = static_cast<int>(in.Int());
    const std::string m = in.String();
    if (c < 0) {
      same = false;
      continue;
    }
    if (first < 0) {
      first = r;
      code = c;
      message = m;
    } else {
      same &= c == code && m == message;
    }
  }
  if (first < 0) return Status::Ok();
  return Error{static_cast<ErrorCode>(code), same ? message : fmt::format("rank {} failed: {}", first, message)};
}

Status MpiProcess::AgreeOn(std::string_view what, const std::string& mine, double timeout_seconds) const {
  mpi::Bytes out;
  out.String(mine);
  std::vector<mpi::Bytes> all;
  try {
    all = mpi::AllGatherBytes(out, MPI_COMM_WORLD, timeout_seconds, "the ranks' " + std::string(what));
  } catch (const mpi::PeerTimeout& e) {
    Abort(fmt::format("rank {} stopped waiting: {}", rank_, e.what()), ExitStatusOf(e.error().code),
          AbortGrace(timeout_seconds));
  }
  const std::string first = mpi::Reader(all.front()).String();
  for (int r = 1; r < static_cast<int>(all.size()); ++r) {
    const std::string theirs = mpi::Reader(all[static_cast<size_t>(r)]).String();
    if (theirs != first) {
      return InvalidArgument(
          fmt::format("the ranks disagree on {}: rank {} has {} but rank 0 has {}; start every rank "
                      "with the same flags",
                      what, r, theirs, first));
    }
  }
  return Status::Ok();
}

void MpiProcess::Abort(const std::string& message, int code, double grace_seconds) const {
  // One write, so the lines of ranks failing together do not interleave.
  const std::string line = "seam: " + message + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
  if (grace_seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(grace_seconds));
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);  // MPI_Abort does not return; this is for the compiler
}

}  // namespace seam
