#include "seam/cost.h"
#include "seam/plan_walk.h"

#include <algorithm>
#include <array>
#include <map>

namespace seam {
namespace {

constexpr double kGB = 1e9;
constexpr double kMicro = 1e-6;
constexpr auto kGroups = kEveryGroup;

// Ranks with the same crossings (seam/cost.h) pay the same for every step,
// so each set is priced once however many ranks share it. A GPU has its
// own NIC, rail-aligned, so a group with k members a node crosses over k
// NICs at once, as nccl-tests' multi-node bus bandwidth shows; a send goes
// to the same TP position on the next pipeline rank over one NIC.
int RailsOf(const Crossings& c, const Step& s) {
  if (s.kind == StepKind::kSend) return c.send ? 1 : 0;
  return c.rails[static_cast<size_t>(std::find(kGroups.begin(), kGroups.end(), *s.group) - kGroups.begin())];
}

int RailsOf(const std::vector<int>& peers, Placement at) {
  std::map<int, int> per_node;
  for (int p : peers) ++per_node[at.NodeOf(p)];
  if (per_node.size() < 2) return 0;
  int fewest = static_cast<int>(peers.size());
  for (const auto& [node, n] : per_node) fewest = std::min(fewest, n);
  return fewest;
}

Crossings CrossingsOf(const ParallelConfig& cfg, int rank, Placement at) {
  Crossings c;
  for (size_t i = 0; i < kGroups.size(); ++i) c.rails[i] = RailsOf(GroupRanks(cfg, kGroups[i], rank), at);
  c.send = at.NodeOf(rank + cfg.tp) != at.NodeOf(rank);
  return c;
}

// A step's time: its link's latency plus the bytes a rank moves over the
// bus bandwidth; across nodes, the NICs' together, never more than the
// node's own links carry. An all-to-all takes DeepEP's per-GPU bandwidth.
StepCost Price(const Step& s, const PlanHeader& h, int rails, double tokens, const Hardware& hw) {
  const double bytes = BytesPerToken(s, h) * tokens;
  const bool crosses = rails > 0;
  if (s.kind == StepKind::kDispatch || s.kind == StepKind::kCombine) {
    const double bw = crosses ? hw.a2a_network_gbs : hw.a2a_node_gbs;
    return {.seconds = hw.a2a_latency_us * kMicro + bytes / (bw * kGB), .crosses_nodes = crosses};
  }
  if (!crosses) return {.seconds = hw.node.latency_us * kMicro + bytes / (hw.node.busbw_gbs * kGB)};
  const double bw = std::min(hw.node.busbw_gbs, rails * hw.network.busbw_gbs);
  return {.seconds = hw.network.latency_us * kMicro + bytes / (bw * kGB), .crosses_nodes = true};
}

bool Priced(const Step& s) { return IsCollective(s.kind) && s.group && Spec(s.kind).traffic != Traffic::kAtTheSender; }

struct RankTotals {
  double decode = 0;
  double a2a = 0;  // of the decode, the dispatch and combine
  double prefill = 0;
  double bytes = 0;
  double network_bytes = 0;
};

RankTotals Totals(const Plan& plan, const Crossings& c, double batch, double prefill, const Hardware& hw) {
  RankTotals t;
  if (plan.lines().empty()) return t;  // a plan read from a file may hold no line (VerifyPipeline refuses it)
  ForEachStep(plan.lines().front(), [&](const Step& s) {
    if (!Priced(s)) return;
    const int rails = RailsOf(c, s);
    const double b = BytesPerToken(s, plan.header());
    const double decode = Price(s, plan.header(), rails, batch, hw).seconds;
    t.decode += decode;
    if (s.kind == StepKind::kDispatch || s.kind == StepKind::kCombine) t.a2a += decode;
    t.prefill += Price(s, plan.header(), rails, prefill, hw).seconds;
    t.bytes += b;
    if (rails > 0) t.network_bytes += b;
  });
  return t;
}

}  // namespace

StepCost CostOfStep(const Step& s, const Plan& plan, int rank, double tokens, const Hardware& hw, Placement at) {
  if (!Priced(s)) return {};
  return Price(s, plan.header(), RailsOf(CrossingsOf(plan.config(), rank, at), s), tokens, hw);
}

PlacedPipeline::PlacedPipeline(const Pipeline& ranks, const Hardware& hw, int replicas)
    : ranks_(&ranks), hw_(hw), replicas_(replicas) {
  if (ranks.empty()) return;
  const ParallelConfig& cfg = ranks.front().config();
  for (const Plan& p : ranks) {
    std::vector<Crossings>& kinds = kinds_.emplace_back();
    for (int replica = 0; replica < replicas; ++replica) {
      const Placement at{.gpus_per_node = hw.gpus_per_node, .first_gpu = replica * WorldSize(cfg)};
      for (int r = 0; r < cfg.tp; ++r) {
        const Crossings c = CrossingsOf(cfg, p.header().pp_rank * cfg.tp + r, at);
        if (std::find(kinds.begin(), kinds.end(), c) == kinds.end()) kinds.push_back(c);
      }
    }
  }
}

PlanCost PlacedPipeline::CostAt(const Workload& load) const {
  PlanCost out;
  const double batch = static_cast<double>(load.batch) / replicas_ / load.parts;
  double busiest = -1;
  for (size_t i = 0; i < ranks_->size(); ++i) {
    const Plan& p = (*ranks_)[i];
    RankTotals worst;
    double prefill = 0;
    for (const Crossings& c : kinds_[i]) {
      const RankTotals t = Totals(p, c, batch, load.prefill, hw_);
      if (t.decode > worst.decode || worst.bytes == 0) worst = t;
      prefill = std::max(prefill, t.prefill);
    }
    out.decode_per_pp_rank.push_back(worst.decode);
    out.a2a_per_pp_rank.push_back(worst.a2a);
    out.prefill_per_pp_rank.push_back(prefill);
    out.pipeline_seconds += worst.decode;
    if (worst.decode > busiest) {
      busiest = worst.decode;
      out.decode_seconds = worst.decode;
      out.prefill_seconds_per_token = prefill / load.prefill;
      out.bytes_per_token = worst.bytes;
      out.network_bytes_per_token = worst.network_bytes;
      out.busiest_pp_rank = p.header().pp_rank;
    }
  }
  return out;
}

PlanCost CostOf(const Pipeline& ranks, const Workload& load, const Hardware& hw, int replicas) {
  return PlacedPipeline(ranks, hw, replicas).CostAt(load);
}

}  // namespace seam
