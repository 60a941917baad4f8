// `seam compare`: every configuration of a model on a number of GPUs, ranked
// by the communication time of the busiest rank.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli.h"
#include "seam/compare.h"
#include "seam/printable.h"

namespace seam::cli {
namespace {

std::string Micros(double seconds) { return fmt::format("{:.1f}", seconds * 1e6); }
std::string Nanos(double seconds) { return fmt::format("{:.2f}", seconds * 1e9); }
std::string Gigabytes(double bytes) { return fmt::format("{:.1f}", bytes / 1e9); }

std::string Header(const Model& m, const CompareOptions& o) {
  return fmt::format(
      "{} on {} GPUs ({} node{} of {}, {}: {})\ndecode: batch {}; prefill: {} tokens; cache: {} tokens a sequence; "
      "weights {:g} byte{} a parameter; wire: {} activations, {} dispatch\n",
      Printable(m.name), o.gpus, o.nodes, o.nodes > 1 ? "s" : "", o.gpus / o.nodes, Printable(o.hardware.name),
      Printable(o.hardware.summary), o.load.batch, o.load.prefill, o.load.context, o.memory.weight_bytes,
      o.memory.weight_bytes == 1 ? "" : "s", Name(o.wire.act), Name(o.wire.dispatch));
}

std::string Table(const Comparison& c, int top) {
  std::string out =
      fmt::format("{:>4}  {:>10}  {:>10}  {:>10}  {:>11}  {:>11}  {:>7}  {:<4}  {}\n", "rank", "decode us",
                  "pipeline us", "prefill ns", "bytes/token", "network B/t", "GB/GPU", "fits", "configuration");
  for (size_t i = 0; i < c.ranked.size() && i < static_cast<size_t>(top); ++i) {
    const Candidate& k = c.ranked[i];
    out += fmt::format(
        "{:>4}  {:>10}  {:>11}  {:>10}  {:>11}  {:>11}  {:>7}  {:<4}  {}\n", i + 1, Micros(k.cost.decode_seconds),
        Micros(k.cost.pipeline_seconds), Nanos(k.cost.prefill_seconds_per_token), BytesText(k.cost.bytes_per_token),
        BytesText(k.cost.network_bytes_per_token), Gigabytes(k.memory.total()), k.fits ? "yes" : "no", FlagsOf(k));
  }
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

// The document of docs/schemas/compare.schema.json.
Json CompareJson(const Model& m, const CompareOptions& o, const Comparison& c, int top, Json engine) {
  Json ranked = Json::array();
  for (size_t i = 0; i < c.ranked.size() && i < static_cast<size_t>(top); ++i) {
    ranked.push_back(CandidateJson(c.ranked[i], static_cast<int>(i) + 1));
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
          {"weight_bytes", o.memory.weight_bytes},
          {"act_dtype", Name(o.wire.act)},
          {"dispatch_dtype", Name(o.wire.dispatch)},
          {"considered", c.considered},
          {"bound", c.ranked.size()},
          {"fit", fit},
          {"merged", c.merged},
          {"ranked", ranked},
          {"rejected", rejected},
          {"engine", std::move(engine)}};
}

std::string WhereIs(const EngineChoice& e, const Comparison& c, std::string_view engine) {
  if (const std::optional<size_t> i = RankOf(c, e.config, e.replicas)) {
    return fmt::format("the {} configuration ({}{}) ranks {} of {}", engine, SeamFlags(e.config, {}),
                       e.replicas > 1 ? fmt::format(", x{} replicas", e.replicas) : "", *i + 1, c.ranked.size());
  }
  return fmt::format("the {} configuration ({}) is not among the configurations of these GPUs", engine,
                     SeamFlags(e.config, {}));
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

}  // namespace

int RunCompare(const CompareArgs& a) {
  if (Status s = CheckEngineArgs(a.engine); !s.ok()) return Fail(s.error());
  Expected<WireDtypes> wire = ToWire(a.wire);
  if (!wire) return Fail(wire.error());
  Expected<Hardware> hw = LoadHardware(a.hardware);
  if (!hw) return Fail(hw.error());
  Expected<Model> model = InvalidArgument("no model");
  std::optional<EngineChoice> engine;
  int gpus = a.gpus > 0 ? a.gpus : a.nodes * hw->gpus_per_node;
  int nodes = a.nodes;
  double weight_bytes = a.weight_bytes;
  std::optional<WireDtype> kv = wire->act;
  if (a.engine.engine) {  // the model the engine's flags name; seam ranks every configuration of it
    Expected<EngineChoice> e = FromEngine(a.engine, a.layers);
    if (!e) return Fail(e.error());
    model = e->model;
    engine = *std::move(e);
    if (a.gpus == 0) gpus = WorldSize(engine->config) * engine->replicas;
    // The engine's placement, weights and cache, unless seam's own flags say otherwise.
    if (!a.nodes_given) nodes = engine->nodes;
    kv = engine->kv;
    if (!a.weight_given) {
      if (engine->weights.bytes <= 0) {
        return Fail(
            InvalidArgument(fmt::format("the weights are {}, whose bytes a parameter seam does not know: give "
                                        "--weight-dtype",
                                        Printable(engine->weights.name))));
      }
      weight_bytes = engine->weights.bytes;
    }
    if (!kv) return Fail(InvalidArgument("seam cannot count the engine's --kv-cache-dtype: give seam's --act-dtype"));
  } else {
    model = ChooseModel(a.model, a.hf_config, a.layers);
  }
  if (!model) return Fail(model.error());
  const CompareOptions o{.gpus = gpus,
                         .nodes = nodes,
                         .hardware = *hw,
                         .load = {.batch = a.batch, .prefill = a.prefill, .context = a.context},
                         .wire = *wire,
                         .memory = {.weight_bytes = weight_bytes, .kv = *kv}};
  if (const double t = EstimatedSeconds(*model, o); t > a.max_seconds) {
    return Fail(InvalidArgument(fmt::format(
        "comparing every configuration of {} layers on {} GPUs would take about {:.0f} s; --max-seconds {:g} refuses "
        "it (fewer --gpus or --layers, or a larger --max-seconds)",
        model->num_layers, gpus, t, a.max_seconds)));
  }
  Expected<Comparison> c = Compare(*model, o);
  if (!c) return Fail(c.error());
  if (a.json) {
    PrintJson(CompareJson(*model, o, *c, a.top, EngineJson(engine, a.engine.engine, *c)));
  } else {
    std::cout << Header(*model, o) << "\n" << Table(*c, a.top);
    if (engine) std::cout << "\n" << WhereIs(*engine, *c, DisplayName(*a.engine.engine)) << "\n";
  }
  return kOk;
}

}  // namespace seam::cli
