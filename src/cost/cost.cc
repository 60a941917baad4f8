#include "seam/cost.h"

#include <algorithm>
#include <array>

namespace seam {
namespace {

constexpr double kGB = 1e9;
constexpr double kMicro = 1e-6;
constexpr auto kGroups = kEveryGroup;

// Which of a rank's collectives leave its node: one flag per group, and its
// send, which goes to the same TP position on the next pipeline rank. Ranks
// with the same flags pay the same for every step, so each set is priced
// once however many ranks share it.
struct Crossings {
  std::array<bool, kGroups.size()> group{};
  bool send = false;
  bool operator==(const Crossings&) const = default;
  bool Of(const Step& s) const {
    if (s.kind == StepKind::kSend) return send;
    return group[static_cast<size_t>(std::find(kGroups.begin(), kGroups.end(), *s.group) - kGroups.begin())];
  }
};

Crossings CrossingsOf(const ParallelConfig& cfg, int rank, Placement at) {
  Crossings c;
  for (size_t i = 0; i < kGroups.size(); ++i) {
    const std::vector<int> peers = GroupRanks(cfg, kGroups[i], rank);
    const auto [lo, hi] = std::minmax_element(peers.begin(), peers.end());  // nodes grow with ranks
    c.group[i] = at.NodeOf(*lo) != at.NodeOf(*hi);
  }
  c.send = at.NodeOf(rank + cfg.tp) != at.NodeOf(rank);
  return c;
}

StepCost Price(const Step& s, const PlanHeader& h, bool crosses, double tokens, const Hardware& hw) {
  const double bytes = BytesPerToken(s, h) * tokens;
  if (s.kind == StepKind::kDispatch || s.kind == StepKind::kCombine) {
    const double bw = crosses ? hw.a2a_network_gbs : hw.a2a_node_gbs;
    return {.seconds = hw.a2a_latency_us * kMicro + bytes / (bw * kGB), .crosses_nodes = crosses};
  }
  const Link& link = crosses ? hw.network : hw.node;
  return {.seconds = link.latency_us * kMicro + bytes / (link.busbw_gbs * kGB), .crosses_nodes = crosses};
}

bool Priced(const Step& s) { return IsCollective(s.kind) && s.group && Spec(s.kind).traffic != Traffic::kAtTheSender; }

struct RankTotals {
  double decode = 0;
  double prefill = 0;
  double bytes = 0;
  double network_bytes = 0;
};

RankTotals Totals(const Plan& plan, const Crossings& c, double batch, double prefill, const Hardware& hw) {
  RankTotals t;
  if (plan.lines().empty()) return t;  // a plan read from a file may hold no line (VerifyPipeline refuses it)
  ForEachStep(plan.lines().front(), [&](const Step& s) {
    if (!Priced(s)) return;
    const bool crosses = c.Of(s);
    const double b = BytesPerToken(s, plan.header());
    t.decode += Price(s, plan.header(), crosses, batch, hw).seconds;
    t.prefill += Price(s, plan.header(), crosses, prefill, hw).seconds;
    t.bytes += b;
    if (crosses) t.network_bytes += b;
  });
  return t;
}

}  // namespace

StepCost CostOfStep(const Step& s, const Plan& plan, int rank, double tokens, const Hardware& hw, Placement at) {
  if (!Priced(s)) return {};
  return Price(s, plan.header(), CrossingsOf(plan.config(), rank, at).Of(s), tokens, hw);
}

PlanCost CostOf(const Pipeline& ranks, const Workload& load, const Hardware& hw, int replicas) {
  PlanCost out;
  if (ranks.empty()) return out;
  const ParallelConfig& cfg = ranks.front().config();
  const double batch = static_cast<double>(load.batch) / replicas;
  double busiest = -1;
  for (const Plan& p : ranks) {
    std::vector<Crossings> kinds;
    for (int replica = 0; replica < replicas; ++replica) {
      const Placement at{.gpus_per_node = hw.gpus_per_node, .first_gpu = replica * WorldSize(cfg)};
      for (int r = 0; r < cfg.tp; ++r) {
        const Crossings c = CrossingsOf(cfg, p.header().pp_rank * cfg.tp + r, at);
        if (std::find(kinds.begin(), kinds.end(), c) == kinds.end()) kinds.push_back(c);
      }
    }
    RankTotals worst;
    double prefill = 0;
    for (const Crossings& c : kinds) {
      const RankTotals t = Totals(p, c, batch, load.prefill, hw);
      if (t.decode > worst.decode || worst.bytes == 0) worst = t;
      prefill = std::max(prefill, t.prefill);
    }
    out.decode_per_pp_rank.push_back(worst.decode);
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

}  // namespace seam
