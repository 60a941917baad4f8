#include "seam/compare.h"
#include "seam/plan_walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "seam/checked.h"
#include "seam/engine.h"
#include "seam/limits.h"
#include "seam/plan_io.h"
#include "seam/printable.h"
#include "seam/weight_specs.h"

namespace seam {
namespace {

std::vector<int> Divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// A rejection's reason without its numbers, so equal reasons count together:
// "num_attention_heads = 64 does not split over attn_tp = 3 (...)" ->
// "num_attention_heads does not split over attn_tp".
std::string ReasonOf(const Error& e) {
  if (!e.rule.empty()) return e.rule;
  std::string text = e.message.substr(0, e.message.find_first_of(";(:"));
  std::string out;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '=') continue;
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The DCP sizes an attention-TP group of `attn_tp` may split a cache over:
// 1, and each divisor of it that divides the canonical key classes (the
// binder refuses those whose ranks hold different key/value heads).
std::vector<int> DcpSizes(int attn_tp) {
  std::vector<int> out;
  for (int d : Divisors(attn_tp)) {
    if (kKeyClasses % d == 0) out.push_back(d);
  }
  return out;
}

// Every configuration of `tp` ranks per pipeline rank, narrowest reduction first.
std::vector<ParallelConfig> ConfigsOf(int tp, int pp, bool moe, bool a2a) {
  std::vector<ParallelConfig> out;
  for (int dp : Divisors(tp)) {
    std::vector<int> dense = {0};
    if (tp / dp != tp) dense.push_back(tp / dp);
    if (tp > 1 && tp / dp != 1) dense.push_back(1);
    for (int d : dense) {
      for (MoeMode m : {MoeMode::kTp, MoeMode::kA2a}) {
        if (m == MoeMode::kA2a && !(moe && a2a && tp > 1)) continue;
        // An all-to-all MoE over every expert group that divides tp (tp itself is the default).
        std::vector<int> eps = {0};
        if (m == MoeMode::kA2a) {
          for (int ep : Divisors(tp)) {
            if (ep != tp) eps.push_back(ep);
          }
        }
        for (int ep : eps) {
          for (bool dp_head : {false, true}) {  // under attention DP: where the LM head runs
            if (dp_head && dp == 1) continue;
            for (bool scattered : {false, true}) {
              if (scattered && (dp > 1 || tp == 1)) continue;
              for (int dcp : DcpSizes(tp / dp)) {
                for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
                  out.push_back({.tp = tp,
                                 .attn_dp = dp,
                                 .dcp = dcp,
                                 .dense_tp = d,
                                 .moe = m,
                                 .ep = ep,
                                 .dp_lm_head = dp_head,
                                 .input_scattered = scattered,
                                 .reduction = r,
                                 .pp = pp});
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

bool SameSteps(const Pipeline& a, const Pipeline& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].lines() != b[i].lines()) return false;
  }
  return true;
}

// Fitting configurations within the targets by the objective, then by
// output per GPU and their collectives' time; those past a target after
// them; those that do not fit by how close they come (a configuration that
// cannot hold its weights is no answer, however little it moves).
bool Better(const Candidate& a, const Candidate& b, Objective objective) {
  if (a.fits != b.fits) return a.fits;
  if (!a.fits && a.memory.total() != b.memory.total()) return a.memory.total() < b.memory.total();
  if (a.meets != b.meets) return a.meets;
  switch (objective) {
    case Objective::kThroughput: break;
    case Objective::kLatency:
      if (a.tpot_seconds != b.tpot_seconds) return a.tpot_seconds < b.tpot_seconds;
      break;
    case Objective::kTtft:
      if (a.ttft_seconds != b.ttft_seconds) return a.ttft_seconds < b.ttft_seconds;
      break;
  }
  if (a.tokens_per_gpu != b.tokens_per_gpu) return a.tokens_per_gpu > b.tokens_per_gpu;
  if (a.cost.decode_seconds != b.cost.decode_seconds) return a.cost.decode_seconds < b.cost.decode_seconds;
  if (a.cost.prefill_seconds_per_token != b.cost.prefill_seconds_per_token) {
    return a.cost.prefill_seconds_per_token < b.cost.prefill_seconds_per_token;
  }
  return a.memory.total() < b.memory.total();
}

// What one configuration needs to price a batch: its plans, its weights
// and the memory its cache takes per batch of one sequence a DP group.
struct Priced {
  const Model& model;
  const ModelWeights& weights;
  const Pipeline& plans;
  const CompareOptions& options;
  const Hardware& hw;            // the GPUs of each node this deployment uses
  const PlacedPipeline& placed;  // the plans placed on them
  MemoryBudget budget;           // what the engine lets weights, cache and states take on a GPU
};

// Sequences that give each DP group of every replica one.
int Unit(const Candidate& c) { return c.replicas * c.config.attn_dp; }

// The micro-batches a pipeline decodes at once: one a rank, as the
// engines schedule them (vLLM's max_concurrent_batches is the pipeline's
// size; SGLang's event_loop_pp keeps pp micro-batches in flight), but no
// more than each DP group of a replica has sequences.
int MicroBatches(const Candidate& c, int batch) { return std::clamp(batch / Unit(c), 1, c.config.pp); }

// One decode pass of a micro-batch and a prefill, per pipeline rank: the
// rank's work and collectives, each with its own time.
struct Pass {
  std::vector<double> decode;  // work + collectives
  std::vector<double> prefill;
  PlanCost cost;
};
Expected<Pass> PassOf(const Priced& p, const Candidate& c, const Workload& load) {
  const CompareOptions& o = p.options;
  Pass out{.cost = p.placed.CostAt(load)};
  Expected<RankWork> work = WorkOf(p.model, p.weights, c.config, c.replicas, load, p.hw,
                                   {.weight_bytes = o.memory.weight_bytes, .kv = o.memory.kv, .fill = o.memory.fill});
  if (!work) return work.error();
  for (size_t r = 0; r < work->decode.size(); ++r) {
    out.decode.push_back(work->decode[r].seconds + out.cost.decode_per_pp_rank[r]);
    out.prefill.push_back(work->prefill[r].seconds + out.cost.prefill_per_pp_rank[r]);
  }
  return out;
}

// Two-batch overlap's halves on each rank: one half's dispatch and combine
// run while the other half computes (SGLang's operations strategies yield
// around them), so a rank takes its other collectives for both halves and
// the longer of the halves' compute and all-to-alls.
std::vector<double> Overlapped(const Pass& half) {
  std::vector<double> out;
  for (size_t r = 0; r < half.decode.size(); ++r) {
    const double a2a = half.cost.a2a_per_pp_rank[r];
    const double rest = half.decode[r] - a2a;  // work and the other collectives
    const double collectives = half.cost.decode_per_pp_rank[r] - a2a;
    out.push_back(2 * (collectives + std::max(rest - collectives, a2a)));
  }
  return out;
}

// A step of `micro` micro-batches through the pipeline: each micro-batch
// passes every rank in turn, and each rank serves every micro-batch, so
// the step takes the longer of one pass end to end and `micro` passes of
// the slowest rank.
double StepOf(const std::vector<double>& ranks, int micro) {
  double sum = 0, slowest = 0;
  for (double t : ranks) {
    sum += t;
    slowest = std::max(slowest, t);
  }
  return std::max(sum, micro * slowest);
}

// The candidate at `batch` sequences: a decode step and a prefill through
// the pipeline, the memory, the targets, the output tokens per GPU.
Status AtBatch(const Priced& p, int batch, Candidate& c) {
  const CompareOptions& o = p.options;
  Workload load = o.load;
  // A replica or DP group decodes whole sequences: with fewer sequences than
  // them, the busy ones run one each and the rest wait (they still hold
  // their weights), so a step is priced at a sequence a DP group at least.
  load.batch = std::max(batch, Unit(c));
  load.parts = c.micro_batches = MicroBatches(c, batch);
  c.batch = batch;
  Expected<Pass> pass = PassOf(p, c, load);
  if (!pass) return pass.error();
  c.cost = pass->cost;
  c.step_seconds = StepOf(pass->decode, c.micro_batches);
  c.overlapped = false;
  if (o.overlap && c.config.moe == MoeMode::kA2a) {
    load.parts *= 2;
    Expected<Pass> halves = PassOf(p, c, load);
    if (!halves) return halves.error();
    const double overlapped = StepOf(Overlapped(*halves), c.micro_batches);
    if (overlapped < c.step_seconds) {
      c.step_seconds = overlapped;
      c.overlapped = true;
    }
  }
  c.ttft_seconds = 0;
  double slowest_prefill = 0;
  for (double t : pass->prefill) {
    c.ttft_seconds += t;
    slowest_prefill = std::max(slowest_prefill, t);
  }
  c.prefill_interval = slowest_prefill;
  // A replica serves its requests' prefills one after another through its
  // slowest pipeline rank between its decode steps: while a request makes
  // its osl tokens, each of the replica's requests is replaced once, so a
  // token waits for a step and that share of the prefills (the TPOT a
  // serving benchmark measures).
  const int osl = o.targets.osl;
  const double per_replica = static_cast<double>(batch) / c.replicas;
  c.tpot_seconds = osl > 0 ? c.step_seconds + per_replica * slowest_prefill / osl : c.step_seconds;
  c.tokens_per_gpu = batch / c.tpot_seconds / o.gpus;
  c.meets = (o.targets.tpot <= 0 || c.tpot_seconds <= o.targets.tpot) &&
            (o.targets.ttft <= 0 || c.ttft_seconds <= o.targets.ttft);
  return Status::Ok();
}

// The batch that serves the objective best within the targets and the
// memory: one sequence a DP group of every replica, doubled while the
// cache fits (it grows with the batch; the weights do not), then the
// largest that fits between the last double that did and the first that
// did not (an engine fills its memory, not a power of two). Each batch
// that fits and meets the targets is also a point for the frontier.
Status BestBatch(const Priced& p, Candidate& c, std::vector<Candidate>* points) {
  const int unit = Unit(c);
  Workload one = p.options.load;
  one.batch = unit;
  const MemoryUse m = MemoryOf(p.model, p.weights, c.config, c.replicas, one, p.options.memory);
  const auto held = [&](int batch) {
    const double scale = static_cast<double>(batch) / unit;
    return MemoryUse{.weights = m.weights, .cache = m.cache * scale, .states = m.states * scale, .pp_rank = m.pp_rank};
  };
  Candidate best = c;
  bool found = false;
  const auto at = [&](int batch) -> Status {
    Candidate k = c;
    k.memory = held(batch);
    k.fits = Fits(k.memory, p.budget);
    SEAM_RETURN_IF_ERROR(AtBatch(p, batch, k));
    if (points && k.fits && k.meets) points->push_back(k);
    if (!found || Better(k, best, p.options.objective)) best = k;
    found = true;
    return Status::Ok();
  };
  int fitting = 0, over = 0;  // the largest double that fits, the first that does not
  for (int batch = unit; batch <= kMaxTokens; batch *= 2) {
    if (!Fits(held(batch), p.budget)) {
      over = batch;
      if (batch == unit) SEAM_RETURN_IF_ERROR(at(batch));  // none fits: how close the smallest comes
      break;
    }
    fitting = batch;
    SEAM_RETURN_IF_ERROR(at(batch));
  }
  if (fitting > 0 && over > 0) {
    int lo = fitting / unit, hi = over / unit;  // in units: lo fits, hi does not
    while (hi - lo > 1) {
      const int mid = lo + (hi - lo) / 2;
      (Fits(held(mid * unit), p.budget) ? lo : hi) = mid;
    }
    if (lo * unit > fitting) SEAM_RETURN_IF_ERROR(at(lo * unit));
  }
  c = best;
  return Status::Ok();
}

// The points no other beats on both tokens a second per user (the shorter
// step) and per GPU: by step, and of each the one whose output per GPU
// passes every faster point's.
std::vector<Candidate> Frontier(std::vector<Candidate> points) {
  std::stable_sort(points.begin(), points.end(), [](const Candidate& a, const Candidate& b) {
    if (a.tpot_seconds != b.tpot_seconds) return a.tpot_seconds < b.tpot_seconds;
    return a.tokens_per_gpu > b.tokens_per_gpu;
  });
  std::vector<Candidate> out;
  for (Candidate& k : points) {
    if (out.empty() || k.tokens_per_gpu > out.back().tokens_per_gpu) out.push_back(std::move(k));
  }
  return out;
}

Status CheckOptions(const CompareOptions& o) {
  if (o.gpus < 1 || o.nodes < 1 || o.gpus % o.nodes != 0) {
    return InvalidArgument(fmt::format("--gpus {} does not split over --nodes {}", o.gpus, o.nodes));
  }
  if (o.gpus / o.nodes > o.hardware.gpus_per_node) {
    return InvalidArgument(fmt::format("{} GPUs on {} node(s) is {} a node, more than the {} a {} node has", o.gpus,
                                       o.nodes, o.gpus / o.nodes, o.hardware.gpus_per_node,
                                       Printable(o.hardware.name)));
  }
  if (o.load.batch < 1 || o.load.prefill < 1 || o.load.context < 1) {
    return InvalidArgument("the batch, the prefill length and the context are each at least 1");
  }
  return Status::Ok();
}

}  // namespace

double EstimatedSeconds(const Model& m, const CompareOptions& o) {
  const bool moe = HasStageKind(m, StageKind::kSparseFfn);
  const bool a2a = MoeDispatchesA2a(m);
  double configs = 0;
  for (int replicas : Divisors(o.gpus)) {
    if (o.replicas > 0 && replicas != o.replicas) continue;
    for (int pp : Divisors(o.gpus / replicas)) {
      configs += static_cast<double>(ConfigsOf(o.gpus / replicas / pp, pp, moe, a2a).size());
    }
  }
  return configs * m.num_layers * kSecondsPerConfigLayer;
}

std::string_view Name(Objective o) {
  switch (o) {
    case Objective::kThroughput: return "throughput";
    case Objective::kLatency: return "latency";
    case Objective::kTtft: return "ttft";
  }
  SEAM_CHECK(false, "an unknown objective");
}

Expected<Objective> ParseObjective(std::string_view text) {
  for (Objective o : {Objective::kThroughput, Objective::kLatency, Objective::kTtft}) {
    if (Name(o) == text) return o;
  }
  return InvalidArgument(
      fmt::format("'{}' is not an objective: throughput (output tokens a second per GPU), latency (per user) or "
                  "ttft (time to the first token)",
                  Printable(text)));
}

void ApplyAsk(const Ask& a, CompareOptions& o) {
  const bool request = a.isl > 0 || a.osl > 0;
  const int prefill = a.isl > 0 ? a.isl : a.prefill;
  o.load = {.batch = a.batch, .prefill = prefill, .context = request ? prefill + a.osl / 2 : a.context};
  o.targets = {.ttft = a.ttft, .tpot = a.tpot, .osl = a.osl};
  o.best_batch = !a.batch_given && (request || a.ttft > 0 || a.tpot > 0);
}

void FillAs(Engine e, const EngineChoice& line, MemoryOptions& m) {
  m.fill = e == Engine::kSglang ? MemoryFill::kSglang : MemoryFill::kVllm;
  m.fraction = line.memory_fraction;
  m.prefill_chunk = line.prefill_chunk;
}

std::string FlagsOf(const Candidate& c) {
  std::string flags = SeamFlags(c.config, {});
  if (c.replicas > 1) flags += fmt::format(" (x{} replicas)", c.replicas);
  if (c.overlapped) flags += " (two-batch overlap)";
  return flags;
}

nlohmann::ordered_json CandidateJson(const Candidate& k, int rank) {
  return {{"rank", rank},
          {"flags", SeamFlags(k.config, {})},
          {"replicas", k.replicas},
          {"config", ConfigJson(k.config)},
          {"batch", k.batch},
          {"micro_batches", k.micro_batches},
          {"overlapped", k.overlapped},
          {"tokens_per_gpu", k.tokens_per_gpu},
          {"step_seconds", k.step_seconds},
          {"tpot_seconds", k.tpot_seconds},
          {"ttft_seconds", k.ttft_seconds},
          {"meets", k.meets},
          {"decode_seconds", k.cost.decode_seconds},
          {"pipeline_seconds", k.cost.pipeline_seconds},
          {"prefill_seconds_per_token", k.cost.prefill_seconds_per_token},
          {"bytes_per_token", k.cost.bytes_per_token},
          {"network_bytes_per_token", k.cost.network_bytes_per_token},
          {"busiest_pp_rank", k.cost.busiest_pp_rank},
          {"weight_bytes_per_gpu", k.memory.weights},
          {"cache_bytes_per_gpu", k.memory.cache},
          {"state_bytes_per_gpu", k.memory.states},
          {"usable_bytes_per_gpu", k.budget.usable},
          {"fits", k.fits}};
}

Expected<Comparison> Compare(const Model& m, const CompareOptions& o) {
  SEAM_RETURN_IF_ERROR(CheckOptions(o));
  SEAM_RETURN_IF_ERROR(Validate(o.wire));
  CompareOptions placed = o;
  placed.hardware.gpus_per_node = o.gpus / o.nodes;  // the GPUs of each node this deployment uses
  const bool moe = HasStageKind(m, StageKind::kSparseFfn);
  const bool a2a = MoeDispatchesA2a(m);
  Expected<std::vector<WeightSpec>> weights = WeightSpecs(m);
  if (!weights) return weights.error();
  const std::vector<WeightSpec>& specs = *weights;
  Expected<ModelWeights> summed = SumWeights(m, specs);
  if (!summed) return summed.error();
  Comparison out;
  std::vector<Candidate> points;  // every candidate at every batch, for the frontier
  for (int replicas : Divisors(o.gpus)) {
    if (o.replicas > 0 && replicas != o.replicas) continue;
    for (int pp : Divisors(o.gpus / replicas)) {
      const int tp = o.gpus / replicas / pp;
      // The plans bound so far for this layout under a narrower reduction.
      std::vector<Pipeline> narrower;
      for (const ParallelConfig& cfg : ConfigsOf(tp, pp, moe, a2a)) {
        ++out.considered;
        if (cfg.reduction == Reduction::kAr) narrower.clear();
        Expected<Pipeline> plans = BindPipelineChecked(m, cfg, {.wire = o.wire});
        if (!plans) {
          ++out.rejected[ReasonOf(plans.error())];
          continue;
        }
        if (std::any_of(narrower.begin(), narrower.end(), [&](const Pipeline& p) { return SameSteps(p, *plans); })) {
          ++out.merged;  // a wider reduction that binds the same steps is the same plan
          continue;
        }
        narrower.push_back(*plans);
        Candidate c{.config = cfg, .replicas = replicas};
        const PlacedPipeline on(*plans, placed.hardware, replicas);
        const Priced p{.model = m,
                       .weights = *summed,
                       .plans = *plans,
                       .options = o,
                       .hw = placed.hardware,
                       .placed = on,
                       .budget = BudgetOf(m, cfg, o.hardware, o.memory)};
        c.budget = p.budget;
        if (o.pareto) {
          Candidate swept = c;
          SEAM_RETURN_IF_ERROR(BestBatch(p, swept, &points));
          if (o.best_batch) c = swept;
        }
        if (o.best_batch) {
          if (!o.pareto) SEAM_RETURN_IF_ERROR(BestBatch(p, c, nullptr));
        } else {
          Workload held = o.load;
          held.batch = std::max(held.batch, Unit(c));  // a busy rank holds one sequence at least
          c.memory = MemoryOf(m, *summed, cfg, replicas, held, o.memory);
          c.fits = Fits(c.memory, p.budget);
          SEAM_RETURN_IF_ERROR(AtBatch(p, o.load.batch, c));
        }
        out.ranked.push_back(std::move(c));
      }
    }
  }
  std::stable_sort(out.ranked.begin(), out.ranked.end(),
                   [&](const Candidate& a, const Candidate& b) { return Better(a, b, o.objective); });
  if (o.pareto) out.frontier = Frontier(std::move(points));
  return out;
}

namespace {

std::vector<Explained::Collective> CollectivesOf(const Plan& plan, int rank, double tokens, const Hardware& hw) {
  std::vector<Explained::Collective> out;
  if (plan.lines().empty()) return out;
  ForEachStep(plan.lines().front(), [&](const Step& s) {
    const StepCost cost = CostOfStep(s, plan, rank, tokens, hw, {.gpus_per_node = hw.gpus_per_node});
    if (cost.seconds <= 0 || !s.group) return;
    const std::string what = fmt::format("{}({})", Name(s.kind), Name(*s.group));
    auto c = std::find_if(out.begin(), out.end(), [&](const Explained::Collective& x) { return x.what == what; });
    if (c == out.end()) c = out.insert(out.end(), {.what = what});
    ++c->count;
    c->seconds += cost.seconds;
    c->bytes += BytesPerToken(s, plan.header()) * tokens;
    c->crosses_nodes = c->crosses_nodes || cost.crosses_nodes;
  });
  return out;
}

}  // namespace

Expected<Explained> Explain(const Model& m, const Candidate& k, const CompareOptions& o) {
  Expected<Pipeline> plans = BindPipelineChecked(m, k.config, {.wire = o.wire});
  if (!plans) return plans.error();
  Expected<std::vector<WeightSpec>> specs = WeightSpecs(m);
  if (!specs) return specs.error();
  Expected<ModelWeights> weights = SumWeights(m, *specs);
  if (!weights) return weights.error();
  Hardware hw = o.hardware;
  hw.gpus_per_node = o.gpus / o.nodes;
  Workload load = o.load;
  load.batch = k.batch;
  load.parts = k.micro_batches;
  Expected<RankWork> work =
      WorkOf(m, *weights, k.config, k.replicas, load, hw,
             {.weight_bytes = o.memory.weight_bytes, .kv = o.memory.kv, .fill = o.memory.fill, .parts = true});
  if (!work) return work.error();
  const PlacedPipeline on(*plans, hw, k.replicas);
  const Priced p{.model = m, .weights = *weights, .plans = *plans, .options = o, .hw = hw, .placed = on};
  Expected<Pass> pass = PassOf(p, k, load);
  if (!pass) return pass.error();
  std::vector<double> passes = pass->decode;
  if (k.overlapped) {
    load.parts *= 2;
    Expected<Pass> halves = PassOf(p, k, load);
    if (!halves) return halves.error();
    passes = Overlapped(*halves);
  }
  Explained out{.micro_batches = k.micro_batches, .overlapped = k.overlapped, .step_seconds = k.step_seconds};
  const double tokens = static_cast<double>(k.batch) / k.replicas / k.micro_batches;
  for (size_t r = 0; r < plans->size(); ++r) {
    Explained::Rank rank{.pp_rank = static_cast<int>(r), .work = work->decode_parts[r]};
    rank.collectives = CollectivesOf((*plans)[r], static_cast<int>(r) * k.config.tp, tokens, hw);
    rank.work_seconds = work->decode[r].seconds;
    for (const Explained::Collective& c : rank.collectives) rank.collective_seconds += c.seconds;
    rank.pass_seconds = passes[r];
    rank.hidden_seconds = pass->decode[r] - passes[r];
    rank.idle_seconds = k.step_seconds - k.micro_batches * passes[r];
    out.ranks.push_back(std::move(rank));
  }
  return out;
}

std::optional<size_t> RankOf(const Comparison& c, const ParallelConfig& cfg, int replicas) {
  ParallelConfig mine = cfg;
  mine.reduction = Reduction::kAr;
  const std::string layout = SeamFlags(mine, {});
  for (size_t i = 0; i < c.ranked.size(); ++i) {
    ParallelConfig theirs = c.ranked[i].config;
    theirs.reduction = Reduction::kAr;
    if (SeamFlags(theirs, {}) == layout && c.ranked[i].replicas == replicas) return i;
  }
  return std::nullopt;
}

}  // namespace seam
