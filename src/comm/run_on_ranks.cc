#include <fmt/format.h>

#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "comm/world.h"

namespace seam {

Status RunOnRanks(Backend backend, int size, const std::function<void(int rank, Comm& comm)>& fn,
                  double timeout_seconds) {
  SEAM_CHECK(size > 0, "a run of no ranks");
  comm::ThreadWorld world(size, timeout_seconds);
  std::mutex mu;
  int failed = -1;
  std::optional<Error> failure;
  // The first rank to fail is reported, with its error's code (a deadline
  // is not a failed check); the others are ended.
  auto Record = [&](int rank, const Error& e) {
    world.Abort(rank, e.message);
    const std::lock_guard<std::mutex> lock(mu);
    if (failed < 0) {
      failed = rank;
      failure = e;
    }
  };
  // Exhaustive: a backend added to the enum must say what its ranks talk through.
  const auto comm_for = [&](int rank) -> std::unique_ptr<Comm> {
    switch (backend) {
      case Backend::kThreads: return world.CommFor(rank);
      case Backend::kRecord: return MakeRecordComm(rank);
    }
    SEAM_CHECK(false, "an unknown backend");
  };
  auto body = [&](int rank) {
    std::unique_ptr<Comm> c = comm_for(rank);
    try {
      fn(rank, *c);
    } catch (const comm::RankAborted&) {
      // Another rank failed first; its failure is the one reported.
    } catch (const Failure& e) {
      Record(rank, e.error());
    } catch (const InternalError& e) {
      Record(rank, Internal(e.what()));
    } catch (const std::bad_alloc&) {
      Record(rank, OutOfMemory());  // not a check that failed
    } catch (const std::exception& e) {
      // A rank's runtime check: the plan or the run is not what it claims.
      Record(rank, FailedCheck(e.what()));
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();
  if (failure) return Error{failure->code, fmt::format("rank {} failed: {}", failed, failure->message)};
  return Status::Ok();
}

}  // namespace seam
