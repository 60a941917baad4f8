#include <fmt/format.h>

#include <mutex>
#include <thread>

#include "comm/world.h"

namespace seam {

Status RunOnRanks(Backend backend, int size, const std::function<void(int rank, Comm& comm)>& fn,
                  double timeout_seconds) {
  SEAM_CHECK(size > 0, "a run of no ranks");
  comm::ThreadWorld world(size, timeout_seconds);
  std::mutex mu;
  int failed = -1;
  std::string failure;
  auto body = [&](int rank) {
    std::unique_ptr<Comm> c = backend == Backend::kThreads ? world.CommFor(rank) : MakeRecordComm(rank);
    try {
      fn(rank, *c);
    } catch (const comm::RankAborted&) {
      // Another rank failed first; its failure is the one reported.
    } catch (const std::exception& e) {
      world.Abort(rank, e.what());
      const std::lock_guard<std::mutex> lock(mu);
      if (failed < 0) {
        failed = rank;
        failure = e.what();
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();
  if (failed >= 0) return FailedCheck(fmt::format("rank {} failed: {}", failed, failure));
  return Status::Ok();
}

}  // namespace seam
