// Running one rank of the plans per MPI process, and collecting the output
// on rank 0.
#include "seam/runtime/mpi.h"

#include <fmt/format.h>
#include <mpi.h>

#include <chrono>

#include "mpi/bytes.h"
#include "mpi/wait.h"

namespace seam {
namespace {

void EncodeRows(mpi::Bytes& b, const std::optional<Tensor>& t) {
  b.Int(t ? 1 : 0);
  if (!t) return;
  b.Int(t->rows());
  b.Int(t->cols());
  b.Floats(t->data(), t->size());
}

std::optional<Tensor> DecodeRows(mpi::Reader& in) {
  if (in.Int() == 0) return std::nullopt;
  const int rows = static_cast<int>(in.Int());
  const int cols = static_cast<int>(in.Int());
  Tensor t = Tensor::Uninitialized(rows, cols);  // filled whole from the message
  in.Floats(t.data(), t.size());
  return t;
}

mpi::Bytes Encode(const RankOutput& r) {
  mpi::Bytes b;
  EncodeRows(b, r.rows);
  EncodeRows(b, r.logits);
  b.Int(static_cast<int64_t>(r.stats.ops.size()));
  for (const auto& [kind, op] : r.stats.ops) {
    b.Int(static_cast<int64_t>(kind));
    b.Int(op.calls);
    b.Int(op.elements_sent);
  }
  return b;
}

RankOutput Decode(const mpi::Bytes& bytes) {
  mpi::Reader in(bytes);
  RankOutput r;
  r.rows = DecodeRows(in);
  r.logits = DecodeRows(in);
  for (int64_t i = in.Int(); i > 0; --i) {
    const int64_t kind = in.Int();
    SEAM_CHECK(kind >= 0 && kind < kCommOps, "a rank's statistics name an unknown operation");
    CommStats::Op& op = r.stats.ops[static_cast<CommOp>(kind)];
    op.calls = in.Int();
    op.elements_sent = in.Int();
  }
  return r;
}

}  // namespace

Expected<RunOutput> RunPlansOnMpi(const MpiProcess& p, const Model& m, const Pipeline& plans, const Weights& w,
                                  const Batch& b, const RunOptions& options, const MpiOptions& mpi) {
  SEAM_RETURN_IF_ERROR(CheckRun(m, plans, w, options));
  const ParallelConfig& cfg = plans.front().config();
  if (WorldSize(cfg) != p.size()) {
    return InvalidArgument(
        fmt::format("the job has {} MPI process{} but the configuration has tp x pp = {} x {} = {} "
                    "ranks; start it with mpirun -np {}",
                    p.size(), p.size() == 1 ? "" : "es", cfg.tp, cfg.pp, WorldSize(cfg), WorldSize(cfg)));
  }
  const Fault& fault = mpi.fault;
  if (fault.rank >= p.size()) {
    return InvalidArgument(fmt::format("--fault names rank {} but the job has ranks 0 to {}: it could never fire",
                                       fault.rank, p.size() - 1));
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<mpi::Bytes> all;
  Status fired = Status::Ok();
  try {
    std::unique_ptr<Comm> comm = MakeMpiComm(p, cfg, mpi);
    const RankOutput mine = RunRankOf(m, plans, w, b, options, p.rank(), *comm);
    // A fault asked for at a call this rank never made did not test anything.
    if (fault.rank == p.rank() && fault.kind != FaultKind::kInput && CommunicationCalls(*comm) < fault.at_call) {
      fired =
          InvalidArgument(fmt::format("--fault {}:{}@{} never fired: rank {} made {} communication calls", fault.rank,
                                      Name(fault.kind), fault.at_call, fault.rank, CommunicationCalls(*comm)));
    }
    all = mpi::GatherBytes(Encode(mine), MPI_COMM_WORLD, mpi.timeout_seconds, "the ranks' results");
  } catch (const mpi::PeerTimeout& e) {
    // Ranks waiting on one that stopped answering each name the rank they
    // waited for. A rank that waited longest may wait on a rank that is
    // itself waiting: the grace lets the rank waiting on the silent one say
    // so before the job ends.
    p.Abort(fmt::format("rank {} stopped waiting: {}", p.rank(), e.what()), ExitStatusOf(e.error().code),
            MpiProcess::AbortGrace(mpi.timeout_seconds));
  } catch (const Failure& e) {
    // Every other rank is ended with this one: no rank waits for it in vain.
    p.Abort(fmt::format("rank {} failed: {}", p.rank(), e.what()), ExitStatusOf(e.error().code));
  } catch (const std::exception& e) {
    p.Abort(fmt::format("rank {} failed: {}", p.rank(), e.what()), ExitStatusOf(ErrorCode::kFailedCheck));
  }
  SEAM_RETURN_IF_ERROR(p.Agree(fired, mpi.timeout_seconds));
  if (!p.root()) return RunOutput{};
  std::vector<RankOutput> ranks;
  for (const mpi::Bytes& bytes : all) ranks.push_back(Decode(bytes));
  RunOutput out = AssembleRun(m, cfg, b, std::move(ranks));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace seam
