#include "run/a2a.h"

#include <fmt/format.h>

#include <map>
#include <stdexcept>

namespace seam::exec {

std::vector<Tensor> A2aExchange::Pack(const MoeKernel& moe, Tensor input, int members) {
  input_ = std::move(input);
  routes_ = moe.Route(input_);
  sent_.assign(static_cast<size_t>(members), {});
  for (int r = 0; r < input_.rows(); ++r) {
    const Routing& route = routes_[static_cast<size_t>(r)];
    for (size_t slot = 0; slot < route.experts.size(); ++slot) {
      if (moe.IsSkip(route.experts[slot])) continue;  // passes the input through, here
      sent_[static_cast<size_t>(moe.OwnerOf(route.experts[slot]))].push_back({r, static_cast<int>(slot)});
    }
  }
  std::vector<Tensor> to_each;
  const int h = moe.hidden();
  for (const auto& rows : sent_) {
    Tensor t(static_cast<int>(rows.size()), h + 1);  // the row, then its expert's id
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto [r, slot] = rows[i];
      std::copy(input_.row(r), input_.row(r) + h, t.row(static_cast<int>(i)));
      t.at(static_cast<int>(i), h) =
          static_cast<float>(routes_[static_cast<size_t>(r)].experts[static_cast<size_t>(slot)]);
    }
    to_each.push_back(std::move(t));
  }
  return to_each;
}

std::vector<Tensor> A2aExchange::RunExperts(const MoeKernel& moe, const std::vector<Tensor>& received) const {
  const int h = moe.hidden();
  std::vector<Tensor> outputs;
  for (const Tensor& got : received) {
    Tensor out(got.rows(), h);
    std::map<int, std::vector<int>> rows_of;  // expert -> received rows, in order
    for (int r = 0; r < got.rows(); ++r) rows_of[static_cast<int>(got.at(r, h))].push_back(r);
    for (const auto& [expert, rows] : rows_of) {
      Tensor x(static_cast<int>(rows.size()), h);
      for (size_t i = 0; i < rows.size(); ++i) {
        std::copy(got.row(rows[i]), got.row(rows[i]) + h, x.row(static_cast<int>(i)));
      }
      const Tensor y = moe.Expert(expert, x);
      for (size_t i = 0; i < rows.size(); ++i) {
        std::copy(y.row(static_cast<int>(i)), y.row(static_cast<int>(i)) + h, out.row(rows[i]));
      }
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

Tensor A2aExchange::Fold(const MoeKernel& moe, const std::vector<Tensor>& back, bool has_data, int experts) const {
  const int h = moe.hidden();
  const Tensor zeros(1, h);
  std::vector<std::vector<const float*>> outputs(static_cast<size_t>(input_.rows()));
  for (auto& o : outputs) o.assign(static_cast<size_t>(experts), nullptr);
  for (size_t j = 0; j < sent_.size(); ++j) {
    const auto& rows = sent_[j];
    if (has_data && back[j].rows() != static_cast<int>(rows.size())) {
      throw Failure(
          FailedCheck(fmt::format("the a2a combine returned {} rows for {} sent", back[j].rows(), rows.size())));
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      const float* p = static_cast<int>(i) < back[j].rows() ? back[j].row(static_cast<int>(i)) : zeros.row(0);
      outputs[static_cast<size_t>(rows[i].first)][static_cast<size_t>(rows[i].second)] = p;
    }
  }
  const Tensor shared = moe.Shared(input_);
  Tensor out(input_.rows(), h);
  for (int r = 0; r < out.rows(); ++r) {
    const Routing& route = routes_[static_cast<size_t>(r)];
    std::vector<const float*> slots(outputs[static_cast<size_t>(r)].begin(),
                                    outputs[static_cast<size_t>(r)].begin() + static_cast<long>(route.experts.size()));
    for (size_t slot = 0; slot < route.experts.size(); ++slot) {
      if (moe.IsSkip(route.experts[slot])) slots[slot] = input_.row(r);
    }
    moe.Fold(route, slots, shared.empty() ? nullptr : shared.row(r), out.row(r));
  }
  return out;
}

}  // namespace seam::exec
