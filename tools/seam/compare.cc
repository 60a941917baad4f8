// `seam compare`: every configuration of a model on a number of GPUs, ranked
// by the communication time of the busiest rank.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli.h"
#include "seam/compare.h"
#include "seam/disaggregate.h"
#include "seam/printable.h"

namespace seam::cli {
namespace {

std::string Micros(double seconds) { return fmt::format("{:.1f}", seconds * 1e6); }
std::string Gigabytes(double bytes) { return fmt::format("{:.1f}", bytes / 1e9); }

std::string Millis(double seconds) { return fmt::format("{:.1f}", seconds * 1e3); }

// The workload line: a fixed batch, or the best within the targets.
std::string Workload(const CompareOptions& o) {
  const Targets& t = o.targets;
  std::string out =
      o.best_batch ? "batch: the best within the targets and memory" : fmt::format("batch {}", o.load.batch);
  out += fmt::format("; prefill: {} tokens; cache: {} tokens a sequence", o.load.prefill, o.load.context);
  if (t.osl > 0) out += fmt::format("; {} output tokens a request", t.osl);
  if (t.ttft > 0) out += fmt::format("; TTFT <= {} ms", Millis(t.ttft));
  if (t.tpot > 0) out += fmt::format("; TPOT <= {} ms", Millis(t.tpot));
  if (o.objective != Objective::kThroughput) out += fmt::format("; objective: {}", Name(o.objective));
  return out;
}

// How the engine fills each GPU's memory.
std::string Filling(const MemoryOptions& m) {
  const bool sglang = m.fill == MemoryFill::kSglang;
  const std::string share = m.fraction > 0 ? fmt::format("{:g}", m.fraction)
                            : sglang       ? "its default --mem-fraction-static for each configuration"
                                           : "0.9";
  const std::string chunk = m.prefill_chunk > 0 ? fmt::format(", prefill chunks of {}", m.prefill_chunk) : "";
  return sglang ? fmt::format("memory: as SGLang fills it ({} of the GPU for weights and caches{})", share, chunk)
                : fmt::format("memory: as vLLM fills it ({} of the GPU, less activations and all-to-all buffers{})",
                              share, chunk);
}

std::string Header(const Model& m, const CompareOptions& o) {
  return fmt::format(
      "{} on {} GPUs ({} node{} of {}, {}: {})\ndecode: {}; weights {:g} byte{} a parameter; wire: {} activations, "
      "{} dispatch\n{}\n",
      Printable(m.name), o.gpus, o.nodes, o.nodes > 1 ? "s" : "", o.gpus / o.nodes, Printable(o.hardware.name),
      Printable(o.hardware.summary), Workload(o), o.memory.weight_bytes, o.memory.weight_bytes == 1 ? "" : "s",
      Name(o.wire.act), Name(o.wire.dispatch), Filling(o.memory));
}

// "yes", "no" (not in memory) or "slow" (in memory, past a target).
std::string_view Verdict(const Candidate& k) {
  if (!k.fits) return "no";
  return k.meets ? "yes" : "slow";
}

std::string TableHead() {
  return fmt::format("{:>4}  {:>9}  {:>10}  {:>6}  {:>8}  {:>8}  {:>9}  {:>11}  {:>11}  {:>7}  {:<4}  {}\n", "rank",
                     "tok/s/GPU", "tok/s/user", "batch", "TTFT ms", "TPOT ms", "decode us", "bytes/token",
                     "network B/t", "GB/GPU", "fits", "configuration");
}

std::string Row(const Candidate& k, size_t rank) {
  return fmt::format("{:>4}  {:>9.0f}  {:>10.1f}  {:>6}  {:>8}  {:>8}  {:>9}  {:>11}  {:>11}  {:>7}  {:<4}  {}\n", rank,
                     k.tokens_per_gpu, 1 / k.tpot_seconds, k.batch, Millis(k.ttft_seconds), Millis(k.tpot_seconds),
                     Micros(k.cost.decode_seconds), BytesText(k.cost.bytes_per_token),
                     BytesText(k.cost.network_bytes_per_token), Gigabytes(k.memory.total()), Verdict(k), FlagsOf(k));
}

std::string Table(const Comparison& c, int top) {
  std::string out = TableHead();
  for (size_t i = 0; i < c.ranked.size() && i < static_cast<size_t>(top); ++i) out += Row(c.ranked[i], i + 1);
  int fit = 0;
  for (const Candidate& k : c.ranked) fit += k.fits ? 1 : 0;
  out += fmt::format(
      "\n{} configurations: {} bind ({} fit in memory), {} the same steps as a narrower --reduction, {} "
      "rejected\n",
      c.considered, c.ranked.size(), fit, c.merged, c.considered - static_cast<int>(c.ranked.size()) - c.merged);
  std::vector<std::pair<int, std::string>> reasons;
  for (const auto& [reason, n] : c.rejected) reasons.push_back({-n, reason});
  std::sort(reasons.begin(), reasons.end());
  for (const auto& [n, reason] : reasons) out += fmt::format("  {:>6}  {}\n", -n, reason);
  return out;
}

// --disaggregate: the best splits of the GPUs into a prefill and a decode
// pool, against the best co-located configuration at the same targets.
std::string DisaggregatedTable(const std::vector<Disaggregated>& d, const Comparison& c, int top) {
  std::string out = "\ndisaggregated prefill and decode (each pool its own layout, the KV cache sent between them):\n";
  out += fmt::format("{:>4}  {:>9}  {:>8}  {:>8}  {:>11}  {:<40}  {}\n", "rank", "tok/s/GPU", "TTFT ms", "TPOT ms",
                     "KV send ms", "prefill pool", "decode pool");
  for (size_t i = 0; i < d.size() && i < static_cast<size_t>(top); ++i) {
    const Disaggregated& x = d[i];
    const std::string prefill =
        fmt::format("{} GPUs: {} x{}", x.prefill.gpus, SeamFlags(x.prefill.layout.config, {}), x.prefill.instances);
    const std::string decode =
        fmt::format("{} GPUs: {} x{}, batch {}{}", x.decode.gpus, SeamFlags(x.decode.layout.config, {}),
                    x.decode.instances, x.decode.layout.batch, x.decode.layout.overlapped ? ", two-batch overlap" : "");
    out += fmt::format("{:>4}  {:>9.0f}  {:>8}  {:>8}  {:>11}  {:<40}  {}{}\n", i + 1, x.tokens_per_gpu,
                       Millis(x.ttft_seconds), Millis(x.tpot_seconds), Millis(x.kv_transfer_seconds), prefill, decode,
                       x.meets ? "" : "  (misses a target)");
  }
  if (d.empty()) out += "  no split fits the model in both pools\n";
  if (!c.ranked.empty()) {
    const Candidate& best = c.ranked.front();
    out += fmt::format(
        "co-located, the best at the same targets: {:.0f} tok/s/GPU ({}){}\n", best.tokens_per_gpu, FlagsOf(best),
        !d.empty() && d.front().meets && best.meets
            ? fmt::format("; disaggregated makes {:.2f}x that", d.front().tokens_per_gpu / best.tokens_per_gpu)
            : "");
  }
  return out;
}

// --pareto: the frontier, the fastest for a user first.
std::string FrontierTable(const Comparison& c) {
  std::string out = fmt::format(
      "\nthe frontier of output per GPU against per user ({} points within the targets, the fastest for a user "
      "first):\n",
      c.frontier.size());
  out += TableHead();
  for (size_t i = 0; i < c.frontier.size(); ++i) out += Row(c.frontier[i], i + 1);
  return out;
}

// --explain K: candidate K's decode step, each pipeline rank's work and collectives.
std::string ExplainTable(const Explained& e, const Candidate& k, size_t rank) {
  std::string out =
      fmt::format("\n#{} ({}) at batch {}, a decode step of {} ms", rank, FlagsOf(k), k.batch, Millis(k.step_seconds));
  if (e.micro_batches > 1) out += fmt::format(", {} micro-batches through the pipeline", e.micro_batches);
  if (e.overlapped) out += ", each as two overlapped halves";
  if (k.tpot_seconds > k.step_seconds) {
    out += fmt::format("; {} ms a token with the prefills run between steps", Millis(k.tpot_seconds));
  }
  out += ":\n";
  for (const Explained::Rank& r : e.ranks) {
    out += fmt::format("pipeline rank {}: work {} ms, collectives {} ms", r.pp_rank, Millis(r.work_seconds),
                       Millis(r.collective_seconds));
    if (e.overlapped) out += fmt::format(", overlap hides {} ms", Millis(r.hidden_seconds));
    out += fmt::format(", a pass {} ms, idle {} ms a step\n", Millis(r.pass_seconds), Millis(r.idle_seconds));
    out += fmt::format("  {:<24} {:>6} {:>9} {:>10} {:>10}\n", "work", "count", "ms", "TFLOP", "GB read");
    for (const RankWork::Part& p : r.work) {
      out += fmt::format("  {:<24} {:>6} {:>9} {:>10.3f} {:>10.3f}\n", p.what, p.count, Millis(p.work.seconds),
                         p.work.flops / 1e12, p.work.bytes / 1e9);
    }
    out += fmt::format("  {:<24} {:>6} {:>9} {:>10}\n", "collectives", "count", "ms", "MB moved");
    for (const Explained::Collective& c : r.collectives) {
      out += fmt::format("  {:<24} {:>6} {:>9} {:>10.3f}{}\n", c.what, c.count, Millis(c.seconds), c.bytes / 1e6,
                         c.crosses_nodes ? "  across nodes" : "");
    }
  }
  return out;
}

Json ExplainJson(const Explained& e, size_t rank) {
  Json ranks = Json::array();
  for (const Explained::Rank& r : e.ranks) {
    Json work = Json::array();
    for (const RankWork::Part& p : r.work) {
      work.push_back({{"what", p.what},
                      {"count", p.count},
                      {"seconds", p.work.seconds},
                      {"flops", p.work.flops},
                      {"bytes", p.work.bytes}});
    }
    Json collectives = Json::array();
    for (const Explained::Collective& c : r.collectives) {
      collectives.push_back({{"what", c.what},
                             {"count", c.count},
                             {"seconds", c.seconds},
                             {"bytes", c.bytes},
                             {"crosses_nodes", c.crosses_nodes}});
    }
    ranks.push_back({{"pp_rank", r.pp_rank},
                     {"work_seconds", r.work_seconds},
                     {"collective_seconds", r.collective_seconds},
                     {"pass_seconds", r.pass_seconds},
                     {"hidden_seconds", r.hidden_seconds},
                     {"idle_seconds", r.idle_seconds},
                     {"work", work},
                     {"collectives", collectives}});
  }
  return {{"rank", rank},
          {"micro_batches", e.micro_batches},
          {"overlapped", e.overlapped},
          {"step_seconds", e.step_seconds},
          {"ranks", ranks}};
}

// With --emit: each printed candidate's launch lines, or why it has none.
using Launches = std::vector<Expected<EngineLines>>;

Json LaunchJson(const Launches& launches, size_t i, std::optional<Engine> emit) {
  if (!emit || i >= launches.size()) return nullptr;
  const Expected<EngineLines>& l = launches[i];
  if (!l) return {{"engine", Name(*emit)}, {"refused", l.error().message}};
  return {{"engine", Name(*emit)}, {"lines", l->lines}, {"notes", l->notes}};
}

std::string LaunchTable(const Launches& launches, Engine emit) {
  std::string out = fmt::format("\n{} launch lines:\n", DisplayName(emit));
  for (size_t i = 0; i < launches.size(); ++i) {
    const Expected<EngineLines>& l = launches[i];
    if (!l) {
      out += fmt::format("{:>4}  none: {}\n", i + 1, l.error().message);
      continue;
    }
    for (size_t node = 0; node < l->lines.size(); ++node) {
      const std::string prefix = node == 0 ? fmt::format("{:>4}", i + 1) : "    ";
      const std::string where = l->lines.size() > 1 ? fmt::format("node {}: ", node) : "";
      out += fmt::format("{}  {}{}\n", prefix, where, l->lines[node]);
    }
    for (const std::string& n : l->notes) out += fmt::format("      ({})\n", n);
  }
  return out;
}

// The document of docs/schemas/compare.schema.json.
Json CompareJson(const Model& m, const CompareOptions& o, const Comparison& c, int top, Json engine,
                 const Launches& launches, std::optional<Engine> emit) {
  Json ranked = Json::array();
  for (size_t i = 0; i < c.ranked.size() && i < static_cast<size_t>(top); ++i) {
    ranked.push_back(CandidateJson(c.ranked[i], static_cast<int>(i) + 1));
    ranked.back()["launch"] = LaunchJson(launches, i, emit);
  }
  Json frontier = nullptr;
  if (o.pareto) {
    frontier = Json::array();
    for (size_t i = 0; i < c.frontier.size(); ++i) {
      frontier.push_back(CandidateJson(c.frontier[i], static_cast<int>(i) + 1));
      frontier.back()["launch"] = nullptr;
    }
  }
  Json rejected = Json::object();
  for (const auto& [reason, n] : c.rejected) rejected[reason] = n;
  int fit = 0;
  for (const Candidate& k : c.ranked) fit += k.fits ? 1 : 0;
  return {{"seam_compare", 1},
          {"model", m.name},
          {"gpus", o.gpus},
          {"nodes", o.nodes},
          {"gpus_per_node", o.gpus / o.nodes},
          {"hardware", o.hardware.name},
          {"hardware_summary", o.hardware.summary},
          {"batch", o.load.batch},
          {"prefill", o.load.prefill},
          {"context", o.load.context},
          {"best_batch", o.best_batch},
          {"objective", Name(o.objective)},
          {"targets", {{"ttft_seconds", o.targets.ttft}, {"tpot_seconds", o.targets.tpot}, {"osl", o.targets.osl}}},
          {"weight_bytes", o.memory.weight_bytes},
          {"memory_fill", o.memory.fill == MemoryFill::kSglang ? "sglang" : "vllm"},
          {"act_dtype", Name(o.wire.act)},
          {"dispatch_dtype", Name(o.wire.dispatch)},
          {"considered", c.considered},
          {"bound", c.ranked.size()},
          {"fit", fit},
          {"merged", c.merged},
          {"ranked", ranked},
          {"frontier", std::move(frontier)},
          {"rejected", rejected},
          {"engine", std::move(engine)}};
}

// The engine's own configuration first: its row and a verdict against the best.
std::string WhereIs(const EngineChoice& e, const Comparison& c, std::string_view engine) {
  const std::optional<size_t> i = RankOf(c, e.config, e.replicas);
  if (!i && e.config.cp > 1) {
    return fmt::format(
        "the {} configuration ({}) is not among the configurations of these GPUs: compare does not "
        "rank context-parallel layouts yet (the engines run each decode token on every CP rank, "
        "which its cost model does not price)\n",
        engine, SeamFlags(e.config, {}));
  }
  if (!i) {
    return fmt::format("the {} configuration ({}) is not among the configurations of these GPUs\n", engine,
                       SeamFlags(e.config, {}));
  }
  const Candidate& k = c.ranked[*i];
  const Candidate& best = c.ranked.front();
  const std::string verdict = !k.fits    ? "does not fit in memory"
                              : !k.meets ? "misses a target"
                                         : fmt::format("{:.0f}% of the best's output per GPU ({})",
                                                       100 * k.tokens_per_gpu / best.tokens_per_gpu, FlagsOf(best));
  return fmt::format("the {} configuration ({}{}) ranks {} of {}: {}\n{}{}", engine, SeamFlags(e.config, {}),
                     e.replicas > 1 ? fmt::format(", x{} replicas", e.replicas) : "", *i + 1, c.ranked.size(), verdict,
                     TableHead(), Row(k, *i + 1));
}

// With --engine: the engine, its configuration and where it ranks (null
// when it is not among the configurations); without, null.
Json EngineJson(const std::optional<EngineChoice>& e, std::optional<Engine> name, const Comparison& c) {
  if (!e || !name) return nullptr;
  const std::optional<size_t> i = RankOf(c, e->config, e->replicas);
  return {{"name", Name(*name)},
          {"flags", SeamFlags(e->config, {})},
          {"replicas", e->replicas},
          {"rank", i ? Json(*i + 1) : Json(nullptr)}};
}

// The engine's wire dtypes, each unless seam's own flag says otherwise (a
// dispatch the engine sends in the activations' dtype follows --act-dtype).
WireDtypes EngineWire(const CompareArgs& a, const WireDtypes& engine) {
  const WireDtype act = a.act_given ? a.wire.act : engine.act;
  const WireDtype dispatch = engine.dispatch == engine.act ? act : engine.dispatch;
  return {.act = act, .dispatch = a.wire.dispatch.value_or(dispatch)};
}

// The request for each printed candidate: the model's config, the
// comparison's nodes and dtypes, the weights as the engine or --weight-dtype says.
Expected<Launches> LaunchesOf(const CompareArgs& a, const Model& m, const CompareOptions& o, const Comparison& c,
                              const std::optional<EngineChoice>& engine) {
  Launches out;
  if (!a.emit) return out;
  Expected<std::string> path = engine ? engine->hf_config : EmitModelPath(a.model, a.hf_config, a.layers);
  if (!path) return path.error();
  Expected<CheckpointQuant> checkpoint = CheckpointQuantOf(*path);
  if (!checkpoint) return checkpoint.error();
  Expected<std::string> quantization = engine && !a.weight_given ? engine->quantization : std::string();
  if (a.weight_given) quantization = QuantizationFor(o.memory.weight_bytes, *checkpoint, o.wire.act);
  if (!quantization) return quantization.error();
  for (size_t i = 0; i < c.ranked.size() && i < static_cast<size_t>(a.top); ++i) {
    const Candidate& k = c.ranked[i];
    out.push_back(EmitLaunch({.engine = *a.emit,
                              .model_path = *path,
                              .config = k.config,
                              .replicas = k.replicas,
                              .nodes = o.nodes,
                              .wire = o.wire,
                              .quantization = *quantization,
                              .kv = o.memory.kv,
                              .two_batch_overlap = k.overlapped},
                             m, *checkpoint));
  }
  return out;
}

}  // namespace

// What a comparison runs with: seam's flags, or the engine's line with
// seam's flags over it where given.
struct Setting {
  int gpus = 0;
  int nodes = 1;
  double weight_bytes = 2;
  WireDtypes wire;
  std::optional<WireDtype> kv;
  std::optional<EngineChoice> engine;
};

// The engine's model, GPUs, placement, weights, cache and wire dtypes,
// unless seam's own flags say otherwise.
Status FromEngineLine(const CompareArgs& a, Setting& s) {
  Expected<EngineChoice> e = FromEngine(a.engine, a.layers);
  if (!e) return e.error();
  if (a.gpus == 0) s.gpus = WorldSize(e->config) * e->replicas;
  if (!a.nodes_given) s.nodes = e->nodes;
  s.kv = e->kv;
  s.wire = EngineWire(a, e->wire);
  if (!a.weight_given) {
    if (e->weights.bytes <= 0) {
      return InvalidArgument(
          fmt::format("the weights are {}, whose bytes a parameter seam does not know: give "
                      "--weight-dtype",
                      Printable(e->weights.name)));
    }
    s.weight_bytes = e->weights.bytes;
  }
  if (!s.kv) return InvalidArgument("seam cannot count the engine's --kv-cache-dtype: give seam's --act-dtype");
  s.engine = *std::move(e);
  return Status::Ok();
}

int RunCompare(const CompareArgs& a) {
  if (Status s = CheckEngineArgs(a.engine); !s.ok()) return Fail(s.error());
  Expected<WireDtypes> wire = ToWire(a.wire);
  if (!wire) return Fail(wire.error());
  Expected<Hardware> hw = LoadHardware(a.hardware);
  if (!hw) return Fail(hw.error());
  Setting s{.gpus = a.gpus > 0 ? a.gpus : a.nodes * hw->gpus_per_node,
            .nodes = a.nodes,
            .weight_bytes = a.weight_bytes,
            .wire = *wire,
            .kv = wire->act};
  if (a.engine.engine) {  // the model the engine's flags name; seam ranks every configuration of it
    if (Status st = FromEngineLine(a, s); !st.ok()) return Fail(st.error());
  }
  const std::optional<EngineChoice>& engine = s.engine;
  Expected<Model> model = engine ? Expected<Model>(engine->model) : ChooseModel(a.model, a.hf_config, a.layers);
  if (!model) return Fail(model.error());
  CompareOptions o{.gpus = s.gpus,
                   .nodes = s.nodes,
                   .hardware = *hw,
                   .wire = s.wire,
                   .memory = {.weight_bytes = s.weight_bytes, .kv = *s.kv}};
  if (engine) FillAs(*a.engine.engine, *engine, o.memory);
  ApplyAsk(a.ask, o);
  o.objective = a.objective;
  o.pareto = a.pareto;
  if (const double t = EstimatedSeconds(*model, o) + (a.disaggregate ? EstimatedDisaggregateSeconds(*model, o) : 0);
      t > a.max_seconds) {
    return Fail(InvalidArgument(fmt::format(
        "comparing every configuration of {} layers on {} GPUs would take about {:.0f} s; --max-seconds {:g} refuses "
        "it (fewer --gpus or --layers, or a larger --max-seconds)",
        model->num_layers, s.gpus, t, a.max_seconds)));
  }
  Expected<Comparison> c = Compare(*model, o);
  if (!c) return Fail(c.error());
  std::optional<std::vector<Disaggregated>> split;
  if (a.disaggregate) {
    Expected<std::vector<Disaggregated>> d = Disaggregate(*model, o);
    if (!d) return Fail(d.error());
    split = *std::move(d);
  }
  Expected<Launches> launches = LaunchesOf(a, *model, o, *c, engine);
  if (!launches) return Fail(launches.error());
  std::optional<Explained> explained;
  if (a.explain > 0) {
    if (static_cast<size_t>(a.explain) > c->ranked.size()) {
      return Fail(
          InvalidArgument(fmt::format("--explain {}: only {} configurations bind", a.explain, c->ranked.size())));
    }
    Expected<Explained> e = Explain(*model, c->ranked[static_cast<size_t>(a.explain) - 1], o);
    if (!e) return Fail(e.error());
    explained = *std::move(e);
  }
  if (a.json) {
    Json doc = CompareJson(*model, o, *c, a.top, EngineJson(engine, a.engine.engine, *c), *launches, a.emit);
    doc["explain"] = explained ? ExplainJson(*explained, static_cast<size_t>(a.explain)) : Json(nullptr);
    Json disaggregated = nullptr;
    if (split) {
      disaggregated = Json::array();
      for (size_t i = 0; i < split->size() && i < static_cast<size_t>(a.top); ++i) {
        disaggregated.push_back(DisaggregatedJson((*split)[i], static_cast<int>(i) + 1));
      }
    }
    doc["disaggregated"] = std::move(disaggregated);
    PrintJson(doc);
  } else {
    std::cout << Header(*model, o) << "\n";
    if (engine) std::cout << WhereIs(*engine, *c, DisplayName(*a.engine.engine)) << "\n";
    std::cout << Table(*c, a.top);
    if (o.pareto) std::cout << FrontierTable(*c);
    if (split) std::cout << DisaggregatedTable(*split, *c, a.top);
    if (a.emit) std::cout << LaunchTable(*launches, *a.emit);
    if (explained) {
      const size_t k = static_cast<size_t>(a.explain);
      std::cout << ExplainTable(*explained, c->ranked[k - 1], k);
    }
  }
  return kOk;
}

}  // namespace seam::cli
