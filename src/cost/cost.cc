#include "seam/cost.h"

#include <algorithm>

namespace seam {
namespace {

constexpr double kGB = 1e9;
constexpr double kMicro = 1e-6;

// Whether the step's peers sit on other nodes: a send goes to the same TP
// position on the next pipeline rank; a collective spans its group.
bool Crosses(const ParallelConfig& cfg, const Step& s, int rank, Placement at) {
  if (s.kind == StepKind::kSend) return at.NodeOf(rank + cfg.tp) != at.NodeOf(rank);
  const std::vector<int> peers = GroupRanks(cfg, *s.group, rank);
  return std::any_of(peers.begin(), peers.end(), [&](int p) { return at.NodeOf(p) != at.NodeOf(rank); });
}

// The steps of a line, in order.
template <class F>
void ForEachStep(const LinePlan& line, F f) {
  for (const Step& s : line.receive) f(s, -1);
  for (const StagePlan& st : line.stages) {
    for (const auto* list : {&st.entry, &st.compute, &st.exit}) {
      for (const Step& s : *list) f(s, st.layer);
    }
  }
  for (const Step& s : line.end.steps) f(s, -1);
}

struct RankTotals {
  double seconds = 0;
  double bytes = 0;
  double network_bytes = 0;
};

RankTotals Totals(const Plan& plan, int rank, double tokens, const Hardware& hw, Placement at) {
  RankTotals t;
  ForEachStep(plan.lines().front(), [&](const Step& s, int) {
    const StepCost c = CostOfStep(s, plan, rank, tokens, hw, at);
    const double b = BytesPerToken(s, plan.header());
    t.seconds += c.seconds;
    t.bytes += b;
    if (c.crosses_nodes) t.network_bytes += b;
  });
  return t;
}

}  // namespace

StepCost CostOfStep(const Step& s, const Plan& plan, int rank, double tokens, const Hardware& hw, Placement at) {
  if (!IsCollective(s.kind) || !s.group || Spec(s.kind).traffic == Traffic::kAtTheSender) return {};
  const ParallelConfig& cfg = plan.config();
  const bool crosses = Crosses(cfg, s, rank, at);
  const double bytes = BytesPerToken(s, plan.header()) * tokens;
  const bool a2a = s.kind == StepKind::kDispatch || s.kind == StepKind::kCombine;
  if (a2a) {
    const double bw = crosses ? hw.a2a_network_gbs : hw.a2a_node_gbs;
    return {.seconds = hw.a2a_latency_us * kMicro + bytes / (bw * kGB), .crosses_nodes = crosses};
  }
  const Link& link = crosses ? hw.network : hw.node;
  return {.seconds = link.latency_us * kMicro + bytes / (link.busbw_gbs * kGB), .crosses_nodes = crosses};
}

PlanCost CostOf(const Pipeline& ranks, const Workload& load, const Hardware& hw, int replicas) {
  PlanCost out;
  const Placement at{hw.gpus_per_node};
  const ParallelConfig& cfg = ranks.front().config();
  const double batch = static_cast<double>(load.batch) / replicas;
  double busiest = -1;
  for (const Plan& p : ranks) {
    double decode = 0;
    double prefill = 0;
    RankTotals bytes;
    for (int replica = 0; replica < replicas; ++replica) {
      for (int r = 0; r < cfg.tp; ++r) {
        const int global = p.header().pp_rank * cfg.tp + r;
        const Placement shifted{.gpus_per_node = at.gpus_per_node, .first_gpu = replica * WorldSize(cfg)};
        const RankTotals d = Totals(p, global, batch, hw, shifted);
        if (d.seconds > decode) {
          decode = d.seconds;
          bytes = d;
        }
        prefill = std::max(prefill, Totals(p, global, load.prefill, hw, shifted).seconds);
      }
    }
    out.decode_per_pp_rank.push_back(decode);
    out.pipeline_seconds += decode;
    if (decode > busiest) {
      busiest = decode;
      out.decode_seconds = decode;
      out.prefill_seconds_per_token = prefill / load.prefill;
      out.bytes_per_token = bytes.bytes;
      out.network_bytes_per_token = bytes.network_bytes;
      out.busiest_pp_rank = p.header().pp_rank;
    }
  }
  return out;
}

}  // namespace seam
