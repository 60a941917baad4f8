// seam/runtime/mpi.h — ranks as MPI processes, behind the same Comm interface.
//
// One process per global rank (`mpirun -np N`, N = tp x pp). The groups of
// the topology (attention TP, TP, attention-DP peers, the dense FFN's) become
// MPI communicators once, when the Comm is made. Two modes:
//   canonical  every collective built from point-to-point exchanges and the
//              canonical tree, as the threads backend does: the same bits;
//   native     MPI's own collectives (MPI_Allreduce, MPI_Reduce_scatter, ...):
//              MPI's summation order, checked within a tolerance.
// Every wait is bounded: a rank that stops answering makes the ranks waiting
// on it fail, naming it, and a failed rank aborts the whole job.
//
//   MpiProcess mpi(&argc, &argv);
//   Expected<RunOutput> out = RunPlansOnMpi(mpi, model, plans, weights, batch, {}, {});
//   if (mpi.root()) ... out->hidden ...
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "seam/runtime/comm.h"
#include "seam/runtime/exec.h"
#include "seam/runtime/generate.h"
#include "seam/runtime/mpi_options.h"
#include "seam/topology.h"

namespace seam {

// This process's place in the MPI job: MPI is initialised while it lives.
class MpiProcess {
 public:
  // With `join_timeout_seconds` above 0, a job one of whose processes never
  // starts MPI (not seam, or stopped) ends within it, exit 3, instead of
  // waiting in MPI_Init for as long as that process lives.
  MpiProcess(int* argc, char*** argv, double join_timeout_seconds = 0);
  ~MpiProcess();
  MpiProcess(const MpiProcess&) = delete;
  MpiProcess& operator=(const MpiProcess&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }
  // Every rank's status, agreed by all within the timeout: ok when every
  // rank is; otherwise the first failure, its rank named unless every rank
  // failed the same way. A rank that does not answer in time ends the job.
  Status Agree(const Status& mine, double timeout_seconds) const;
  // Whether every rank holds the same `mine` (a digest of its flags, model
  // and seed): when one differs, an InvalidArgument naming it and both values.
  Status AgreeOn(std::string_view what, const std::string& mine, double timeout_seconds) const;
  // Prints "seam: <message>" and, after `grace_seconds`, ends every
  // process of the job with `code` (the grace lets other ranks that gave
  // up waiting say whom they waited for).
  [[noreturn]] void Abort(const std::string& message, int code, double grace_seconds = 0) const;
  // The grace a rank that gave up waiting leaves the others: ranks waiting on
  // one silent rank give up within about this much of each other, so a hang
  // ends within --timeout plus this, not twice --timeout.
  static double AbortGrace(double timeout_seconds) { return timeout_seconds < 2.0 ? timeout_seconds : 2.0; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

// The Comm of this process's rank for a configuration: collective over the
// world (every rank builds the groups together).
std::unique_ptr<Comm> MakeMpiComm(const MpiProcess& p, const ParallelConfig& cfg, const MpiOptions& o);
// The communication calls an MPI rank has made (the count --fault's CALL refers to).
int CommunicationCalls(const Comm& comm);

// Runs this process's rank of the plans. Rank 0 receives the whole output
// (every DP group's rows in batch order, every rank's stats); the others an
// output without rows. The job needs tp x pp processes. A rank that fails
// during the run aborts the job, naming itself.
Expected<RunOutput> RunPlansOnMpi(const MpiProcess& p, const Model& m, const Pipeline& plans, const Weights& w,
                                  const Batch& b, const RunOptions& options, const MpiOptions& mpi);
// Serves `requests` (seam/runtime/generate.h) with this process as its rank
// of the job: its caches kept between steps, every step's rows gathered to
// every process, so each picks the same tokens and holds the whole
// generation. A rank that fails ends the job as in RunPlansOnMpi.
Expected<Generation> GenerateOnMpi(const MpiProcess& p, const Model& m, const Pipeline& plans, const Weights& w,
                                   const std::vector<Request>& requests, const ServeOptions& serve,
                                   const RunOptions& options, const MpiOptions& mpi);

}  // namespace seam
