// Running one rank of the plans per MPI process, and collecting the output
// on rank 0.
#include "seam/runtime/mpi.h"

#include <fmt/format.h>
#include <mpi.h>

#include <chrono>

#include "mpi/bytes.h"
#include "mpi/wait.h"
#include "run/rank_step.h"

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

RankOutput Decode(mpi::Reader& in) {
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

Status CheckJob(const MpiProcess& p, const ParallelConfig& cfg, const Fault& fault) {
  if (WorldSize(cfg) != p.size()) {
    return InvalidArgument(
        fmt::format("the job has {} MPI process{} but the configuration has tp x pp = {} x {} = {} "
                    "ranks; start it with mpirun -np {}",
                    p.size(), p.size() == 1 ? "" : "es", cfg.tp, cfg.pp, WorldSize(cfg), WorldSize(cfg)));
  }
  if (fault.rank >= p.size()) {
    return InvalidArgument(fmt::format("--fault names rank {} but the job has ranks 0 to {}: it could never fire",
                                       fault.rank, p.size() - 1));
  }
  return Status::Ok();
}

// A fault asked for at a call this rank never made did not test anything.
Status NeverFired(const Fault& fault, int rank, int calls) {
  if (fault.rank != rank || fault.kind == FaultKind::kInput || calls >= fault.at_call) return Status::Ok();
  return InvalidArgument(fmt::format("--fault {}:{}@{} never fired: rank {} made {} communication calls", fault.rank,
                                     Name(fault.kind), fault.at_call, fault.rank, calls));
}

// Runs `body` as this process's rank. A rank that fails ends the job; a rank
// waiting on one that stopped answering names it first.
template <class Body>
void AsRank(const MpiProcess& p, const MpiOptions& mpi, Body&& body) {
  try {
    body();
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
}

// This process's rank of a generation: its Comm made once, its caches kept
// between steps, every rank's step output gathered to every process.
class MpiSteps : public StepRunner {
 public:
  MpiSteps(const MpiProcess& p, const Model& m, const Pipeline& plans, const Weights& w, const RunOptions& options,
           const MpiOptions& mpi)
      : p_(p),
        m_(m),
        plans_(plans),
        w_(w),
        options_(options),
        mpi_(mpi),
        comm_(MakeMpiComm(p, plans.front().config(), mpi)) {}

  Expected<RunOutput> Step(const Batch& b) override {
    RankOutput mine = exec::RunRankStep(m_, plans_, w_, b, options_, p_.rank(), *comm_, cache_);
    mine.stats = Since(mine.stats);  // the Comm counts every step's calls
    mpi::Bytes bytes = Encode(mine);
    bytes.Int(cache_.bytes());
    std::vector<RankOutput> ranks;
    held_ = 0;
    for (const mpi::Bytes& each : mpi::AllGatherBytes(bytes, MPI_COMM_WORLD, mpi_.timeout_seconds, "a step's rows")) {
      mpi::Reader in(each);
      ranks.push_back(Decode(in));
      held_ += in.Int();
    }
    return AssembleRun(m_, plans_.front().config(), b, std::move(ranks));
  }
  void Finish(int request) override { cache_.Drop(request); }
  int64_t CacheBytes() const override { return held_; }
  int calls() const { return CommunicationCalls(*comm_); }

 private:
  // The calls made since the last step.
  CommStats Since(const CommStats& now) {
    CommStats step = now;
    for (auto& [op, s] : step.ops) {
      s.calls -= before_.ops[op].calls;
      s.elements_sent -= before_.ops[op].elements_sent;
    }
    before_ = now;
    return step;
  }

  const MpiProcess& p_;
  const Model& m_;
  const Pipeline& plans_;
  const Weights& w_;
  RunOptions options_;
  MpiOptions mpi_;
  std::unique_ptr<Comm> comm_;
  exec::RankCache cache_;
  CommStats before_;
  int64_t held_ = 0;
};

}  // namespace

Expected<Generation> GenerateOnMpi(const MpiProcess& p, const Model& m, const Pipeline& plans, const Weights& w,
                                   const std::vector<Request>& requests, const ServeOptions& serve,
                                   const RunOptions& options, const MpiOptions& mpi) {
  SEAM_RETURN_IF_ERROR(CheckGenerate(m, plans, w, requests, options));
  SEAM_RETURN_IF_ERROR(CheckJob(p, plans.front().config(), mpi.fault));
  Expected<Generation> g = InvalidArgument("the generation did not run");
  Status fired = Status::Ok();
  AsRank(p, mpi, [&] {
    MpiSteps runner(p, m, plans, w, options, mpi);
    g = Serve(m, plans.front().config(), requests, serve, runner);
    fired = NeverFired(mpi.fault, p.rank(), runner.calls());
  });
  SEAM_RETURN_IF_ERROR(p.Agree(fired, mpi.timeout_seconds));
  return g;
}

Expected<RunOutput> RunPlansOnMpi(const MpiProcess& p, const Model& m, const Pipeline& plans, const Weights& w,
                                  const Batch& b, const RunOptions& options, const MpiOptions& mpi) {
  SEAM_RETURN_IF_ERROR(CheckRun(m, plans, w, options));
  const ParallelConfig& cfg = plans.front().config();
  const Fault& fault = mpi.fault;
  SEAM_RETURN_IF_ERROR(CheckJob(p, cfg, fault));
  const auto start = std::chrono::steady_clock::now();
  std::vector<mpi::Bytes> all;
  Status fired = Status::Ok();
  AsRank(p, mpi, [&] {
    std::unique_ptr<Comm> comm = MakeMpiComm(p, cfg, mpi);
    const RankOutput mine = RunRankOf(m, plans, w, b, options, p.rank(), *comm);
    fired = NeverFired(fault, p.rank(), CommunicationCalls(*comm));
    all = mpi::GatherBytes(Encode(mine), MPI_COMM_WORLD, mpi.timeout_seconds, "the ranks' results");
  });
  SEAM_RETURN_IF_ERROR(p.Agree(fired, mpi.timeout_seconds));
  if (!p.root()) return RunOutput{};
  std::vector<RankOutput> ranks;
  for (const mpi::Bytes& bytes : all) {
    mpi::Reader in(bytes);
    ranks.push_back(Decode(in));
  }
  RunOutput out = AssembleRun(m, cfg, b, std::move(ranks));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace seam
