#include "seam/disaggregate.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "seam/engine.h"
#include "seam/plan_io.h"

namespace seam {
namespace {

// The best instance of one size for each pool: the prefill layout that
// starts the most prompts a GPU a second within the TTFT target, and the
// decode layout that makes the most output tokens a GPU a second within
// the TPOT target.
struct Instances {
  std::optional<Candidate> prefill;
  std::optional<Candidate> decode;
};

double PromptsPerGpu(const Candidate& c) { return 1 / (c.prefill_interval * WorldSize(c.config)); }
double TokensPerGpu(const Candidate& c) { return c.batch / (c.step_seconds * WorldSize(c.config)); }

// A prompt's KV cache and states (every layer's, once) and the time to send
// them from a prefill instance: each attention-TP rank of each pipeline rank
// sends its share over its own NIC.
double KvBytes(const Model& m, const CompareOptions& o) {
  const Workload one{.batch = 1, .prefill = o.load.prefill, .context = o.load.prefill};
  const MemoryUse u = MemoryOf(m, {.tp = 1}, 1, one, o.memory);
  return u.cache + u.states;
}
double TransferSeconds(double bytes, const Candidate& prefill, const Hardware& hw) {
  const double senders = prefill.config.attn_tp() * prefill.config.pp;
  return hw.network.latency_us * 1e-6 + bytes / (senders * hw.network.busbw_gbs * 1e9);
}

// One instance of `size` GPUs at its best batch within the TPOT target.
CompareOptions OneInstance(const CompareOptions& o, int size) {
  CompareOptions one = o;
  one.gpus = size;
  const int per_node = o.gpus / o.nodes;
  one.nodes = size > per_node ? size / per_node : 1;
  one.replicas = 1;
  one.best_batch = true;
  one.pareto = false;
  one.targets = {.tpot = o.targets.tpot};  // a decode pool runs no prefill between its steps
  return one;
}

Expected<Instances> InstancesOf(const Model& m, const CompareOptions& o, int size, double kv_bytes) {
  Expected<Comparison> c = Compare(m, OneInstance(o, size));
  if (!c) return c.error();
  Instances out;
  for (const Candidate& k : c->ranked) {
    if (!k.fits) continue;
    const double ttft = k.ttft_seconds + TransferSeconds(kv_bytes, k, o.hardware);
    if ((o.targets.ttft <= 0 || ttft <= o.targets.ttft) &&
        (!out.prefill || PromptsPerGpu(k) > PromptsPerGpu(*out.prefill))) {
      out.prefill = k;
    }
    if (k.meets && (!out.decode || TokensPerGpu(k) > TokensPerGpu(*out.decode))) out.decode = k;
  }
  return out;
}

// The pool sizes: whole nodes when the GPUs span several, any count on one.
std::vector<int> PoolSizes(const CompareOptions& o) {
  const int step = o.nodes > 1 ? o.gpus / o.nodes : 1;
  std::vector<int> out;
  for (int p = step; p < o.gpus; p += step) out.push_back(p);
  return out;
}

// The instance sizes a pool of `pool` GPUs may hold copies of: a divisor of
// it that fits in a node or is whole nodes.
bool InstanceFits(int size, int pool, int per_node) {
  return pool % size == 0 && (size <= per_node || size % per_node == 0);
}

// Every instance size some pool may hold copies of.
std::vector<int> InstanceSizes(const CompareOptions& o) {
  std::vector<int> out;
  for (int size = 1; size < o.gpus; ++size) {
    bool used = false;
    for (int pool : PoolSizes(o)) used = used || InstanceFits(size, pool, o.gpus / o.nodes);
    if (used) out.push_back(size);
  }
  return out;
}

// The best instance of a pool of `gpus` among the sizes priced.
std::optional<Pool> BestPool(const std::map<int, Instances>& sizes, int gpus, int per_node, bool prefill) {
  std::optional<Pool> best;
  for (const auto& [size, inst] : sizes) {
    if (!InstanceFits(size, gpus, per_node)) continue;
    const std::optional<Candidate>& k = prefill ? inst.prefill : inst.decode;
    if (!k) continue;
    const double rate = prefill ? PromptsPerGpu(*k) : TokensPerGpu(*k);
    const double best_rate = best ? (prefill ? PromptsPerGpu(best->layout) : TokensPerGpu(best->layout)) : -1;
    if (rate > best_rate) best = Pool{.layout = *k, .gpus = gpus, .instances = gpus / size};
  }
  return best;
}

}  // namespace

Expected<std::vector<Disaggregated>> Disaggregate(const Model& m, const CompareOptions& o) {
  if (o.targets.osl <= 0) {
    return InvalidArgument("disaggregated serving is priced for requests: give their lengths (--isl and --osl)");
  }
  if (o.gpus < 2) return InvalidArgument("disaggregated serving needs at least 2 GPUs, one for each pool");
  const int per_node = o.gpus / o.nodes;
  const double kv_bytes = KvBytes(m, o);
  std::map<int, Instances> sizes;
  for (int size : InstanceSizes(o)) {
    Expected<Instances> inst = InstancesOf(m, o, size, kv_bytes);
    if (!inst) return inst.error();
    sizes[size] = *inst;
  }
  std::vector<Disaggregated> out;
  for (int p : PoolSizes(o)) {
    std::optional<Pool> prefill = BestPool(sizes, p, per_node, true);
    std::optional<Pool> decode = BestPool(sizes, o.gpus - p, per_node, false);
    if (!prefill || !decode) continue;
    Disaggregated d{.prefill = *prefill, .decode = *decode, .kv_bytes = kv_bytes};
    d.kv_transfer_seconds = TransferSeconds(kv_bytes, prefill->layout, o.hardware);
    d.ttft_seconds = prefill->layout.ttft_seconds + d.kv_transfer_seconds;
    d.tpot_seconds = decode->layout.step_seconds;
    const double prompts = prefill->instances / prefill->layout.prefill_interval;
    const double finishing = decode->instances * decode->layout.batch / (o.targets.osl * d.tpot_seconds);
    d.requests_per_second = std::min(prompts, finishing);
    d.tokens_per_gpu = d.requests_per_second * o.targets.osl / o.gpus;
    d.meets = (o.targets.ttft <= 0 || d.ttft_seconds <= o.targets.ttft) &&
              (o.targets.tpot <= 0 || d.tpot_seconds <= o.targets.tpot);
    out.push_back(d);
  }
  std::stable_sort(out.begin(), out.end(), [](const Disaggregated& a, const Disaggregated& b) {
    if (a.meets != b.meets) return a.meets;
    return a.tokens_per_gpu > b.tokens_per_gpu;
  });
  return out;
}

double EstimatedDisaggregateSeconds(const Model& m, const CompareOptions& o) {
  double seconds = 0;
  for (int size : InstanceSizes(o)) seconds += EstimatedSeconds(m, OneInstance(o, size));
  return seconds;
}

nlohmann::ordered_json DisaggregatedJson(const Disaggregated& d, int rank) {
  const auto pool = [](const Pool& p) {
    return nlohmann::ordered_json{{"flags", SeamFlags(p.layout.config, {})},
                                  {"config", ConfigJson(p.layout.config)},
                                  {"gpus", p.gpus},
                                  {"instances", p.instances},
                                  {"batch", p.layout.batch},
                                  {"overlapped", p.layout.overlapped}};
  };
  return {{"rank", rank},
          {"prefill", pool(d.prefill)},
          {"decode", pool(d.decode)},
          {"kv_bytes", d.kv_bytes},
          {"kv_transfer_seconds", d.kv_transfer_seconds},
          {"ttft_seconds", d.ttft_seconds},
          {"tpot_seconds", d.tpot_seconds},
          {"requests_per_second", d.requests_per_second},
          {"tokens_per_gpu", d.tokens_per_gpu},
          {"meets", d.meets}};
}

}  // namespace seam
