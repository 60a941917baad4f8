// The threads backend: ranks are threads of one process, collectives meet
// in a shared slot per group, point-to-point goes through a mailbox per pair.
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "comm/world.h"

namespace seam::comm {
namespace {

using Clock = std::chrono::steady_clock;

// Where the members of one group meet, round after round.
struct GroupSlot {
  std::mutex m;
  std::condition_variable cv;
  bool reading = false;  // false: members are publishing; true: reading
  int arrived = 0;
  int departed = 0;
  uint64_t round = 0;
  // Each member's tensors, owned here so a member that fails while others
  // still read cannot free them from under the readers.
  std::vector<std::shared_ptr<const std::vector<Tensor>>> published;
};

struct Mailbox {
  std::mutex m;
  std::condition_variable cv;
  std::deque<Tensor> queue;
};

}  // namespace

struct ThreadWorld::State {
  explicit State(int n, double timeout) : size(n), timeout_seconds(timeout) {}
  int size;
  double timeout_seconds;
  std::mutex mu;
  std::atomic<bool> aborted{false};
  int failed_rank = -1;
  std::string failure;
  std::map<std::vector<int>, std::shared_ptr<GroupSlot>> groups;
  std::map<std::pair<int, int>, std::shared_ptr<Mailbox>> mailboxes;

  std::shared_ptr<GroupSlot> Group(const std::vector<int>& ranks) {
    const std::lock_guard<std::mutex> lock(mu);
    auto& slot = groups[ranks];
    if (!slot) {
      slot = std::make_shared<GroupSlot>();
      slot->published.resize(ranks.size());
    }
    return slot;
  }

  std::shared_ptr<Mailbox> Box(int from, int to) {
    const std::lock_guard<std::mutex> lock(mu);
    auto& box = mailboxes[{from, to}];
    if (!box) box = std::make_shared<Mailbox>();
    return box;
  }

  // Waits on cv until done() holds; fails when the world aborts or the wait
  // outlasts the timeout. Wakes up now and then to look at the abort flag.
  template <class Done>
  void Wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, int me, std::string_view what, Done done) {
    const auto start = Clock::now();
    while (!done()) {
      if (aborted) throw RankAborted(AbortMessage());
      if (std::chrono::duration<double>(Clock::now() - start).count() > timeout_seconds) {
        throw Failure(
            DeadlineExceeded(fmt::format("rank {} waited more than {:.3g} s for {}", me, timeout_seconds, what)));
      }
      cv.wait_for(lock, std::chrono::milliseconds(20));
    }
  }

  std::string AbortMessage() {
    const std::lock_guard<std::mutex> lock(mu);
    return fmt::format("rank {} failed: {}", failed_rank, failure);
  }
};

namespace {

class ThreadComm final : public Comm {
 public:
  ThreadComm(int rank, std::shared_ptr<ThreadWorld::State> state) : Comm(rank), state_(std::move(state)) {}
  std::string_view backend() const override { return "threads"; }

 protected:
  std::vector<Tensor> Exchange(const RankGroup& g, std::vector<Tensor> to_each,
                               std::span<const Shape> expect) override {
    const int n = g.size();
    const int me = g.IndexOf(rank());
    SEAM_CHECK(static_cast<int>(to_each.size()) == n, "one tensor per member");
    GroupSlot& slot = *state_->Group(g.ranks);
    std::unique_lock<std::mutex> lock(slot.m);
    state_->Wait(lock, slot.cv, rank(), "the previous collective to finish", [&] { return !slot.reading; });
    const uint64_t round = slot.round;
    slot.published[static_cast<size_t>(me)] = std::make_shared<const std::vector<Tensor>>(std::move(to_each));
    if (++slot.arrived == n) {
      slot.arrived = 0;
      slot.reading = true;
      slot.cv.notify_all();
    }
    state_->Wait(lock, slot.cv, rank(), "the group's members to arrive",
                 [&] { return slot.reading && slot.round == round; });
    const auto published = slot.published;  // keeps every member's tensors alive while we read
    lock.unlock();
    std::vector<Tensor> from(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j)
      from[static_cast<size_t>(j)] = (*published[static_cast<size_t>(j)])[static_cast<size_t>(me)];
    lock.lock();
    if (++slot.departed == n) {
      slot.departed = 0;
      slot.reading = false;
      ++slot.round;
      slot.cv.notify_all();
    }
    state_->Wait(lock, slot.cv, rank(), "the group's members to read", [&] { return slot.round != round; });
    CheckShapes(g, from, expect);
    return from;
  }

  void SendTo(int peer, const Tensor& t) override {
    Mailbox& box = *state_->Box(rank(), peer);
    const std::lock_guard<std::mutex> lock(box.m);
    box.queue.push_back(t);
    box.cv.notify_all();
  }

  Tensor RecvFrom(int peer, Shape expect) override {
    Mailbox& box = *state_->Box(peer, rank());
    std::unique_lock<std::mutex> lock(box.m);
    state_->Wait(lock, box.cv, rank(), fmt::format("a message from rank {}", peer), [&] { return !box.queue.empty(); });
    Tensor t = std::move(box.queue.front());
    box.queue.pop_front();
    if (t.rows() != expect.rows || t.cols() != expect.cols) {
      throw Failure(FailedCheck(fmt::format("rank {} sent [{}, {}] where rank {} expected [{}, {}]", peer, t.rows(),
                                            t.cols(), rank(), expect.rows, expect.cols)));
    }
    return t;
  }

 private:
  void CheckShapes(const RankGroup& g, const std::vector<Tensor>& from, std::span<const Shape> expect) const {
    for (size_t j = 0; j < expect.size() && j < from.size(); ++j) {
      const Shape e = expect[j];
      if (e.rows >= 0 && (from[j].rows() != e.rows || from[j].cols() != e.cols)) {
        throw Failure(FailedCheck(fmt::format("rank {} sent [{}, {}] where rank {} expected [{}, {}]", g.ranks[j],
                                              from[j].rows(), from[j].cols(), rank(), e.rows, e.cols)));
      }
    }
  }

  std::shared_ptr<ThreadWorld::State> state_;
};

}  // namespace

ThreadWorld::ThreadWorld(int size, double timeout_seconds) : state_(std::make_shared<State>(size, timeout_seconds)) {}
ThreadWorld::~ThreadWorld() = default;
int ThreadWorld::size() const { return state_->size; }

std::unique_ptr<Comm> ThreadWorld::CommFor(int rank) { return std::make_unique<ThreadComm>(rank, state_); }

void ThreadWorld::Abort(int failed_rank, const std::string& what) {
  {
    const std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->failed_rank >= 0) return;  // the first failure is the one to report
    state_->failed_rank = failed_rank;
    state_->failure = what;
  }
  state_->aborted = true;
}

}  // namespace seam::comm
