// The record backend: no data moves. Calls are checked and counted by the
// Comm base; what the rank would receive comes back as zeros of the shape it
// expects (empty where only the sender knows the size).
#include <fmt/format.h>

#include "comm/world.h"

namespace seam {
namespace {

class RecordComm final : public Comm {
 public:
  explicit RecordComm(int rank) : Comm(rank) {}
  std::string_view backend() const override { return "record"; }
  bool moves_data() const override { return false; }

 protected:
  std::vector<Tensor> Exchange(const RankGroup& g, std::vector<Tensor> to_each,
                               std::span<const Shape> expect) override {
    const int me = g.IndexOf(rank());
    SEAM_CHECK(static_cast<int>(to_each.size()) == g.size(), "one tensor per member");
    const int cols = to_each[static_cast<size_t>(me)].cols();
    std::vector<Tensor> from;
    for (int j = 0; j < g.size(); ++j) {
      if (j == me) {
        from.push_back(std::move(to_each[static_cast<size_t>(j)]));
      } else if (static_cast<size_t>(j) < expect.size() && expect[static_cast<size_t>(j)].rows >= 0) {
        from.emplace_back(expect[static_cast<size_t>(j)].rows, expect[static_cast<size_t>(j)].cols);
      } else {
        from.emplace_back(0, cols);
      }
    }
    return from;
  }

  void SendTo(int peer, const Tensor&) override { SEAM_CHECK(peer >= 0 && peer != rank(), "a send to no other rank"); }

  Tensor RecvFrom(int peer, Shape expect) override {
    SEAM_CHECK(peer >= 0 && peer != rank() && expect.rows >= 0, "a receive from no other rank");
    return Tensor(expect.rows, expect.cols);
  }
};

}  // namespace

std::unique_ptr<Comm> MakeRecordComm(int rank) { return std::make_unique<RecordComm>(rank); }

}  // namespace seam
