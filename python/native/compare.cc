// seam.compare: every configuration of a model on a number of GPUs, ranked.
#include "compare.h"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>
#include <tuple>

#include "config.h"
#include "errors.h"
#include "seam/compare.h"
#include "seam/engine.h"
#include "seam/limits.h"

namespace py = pybind11;

namespace seam::python {
namespace {

void CheckCount(const char* name, int value, int hi) {
  if (value < 1 || value > hi) Raise(InvalidArgument(fmt::format("{}={} is not in [1, {}]", name, value, hi)));
}

// None where a keyword was not given: the workload is then as `seam
// compare` takes it without that flag.
struct CompareArgs {
  int gpus = 0;  // 0: as many as the engine runs, or every GPU of the nodes
  int nodes = 1;
  std::string hardware = "h100";
  std::optional<int> batch;
  std::optional<int> prefill;
  std::optional<int> context;
  std::optional<int> isl;
  std::optional<int> osl;
  std::optional<double> ttft_ms;
  std::optional<double> tpot_ms;
  std::string weight_dtype = "bf16";
  std::string act_dtype = "bf16";
  std::optional<std::string> dispatch_dtype;
  double max_seconds = 600;
  std::string objective = "throughput";
  bool pareto = false;
};

// A keyword that would contradict another, refused as the command line
// refuses the flags together.
void Excludes(const char* given, const char* other, bool both, const char* why) {
  if (both) Raise(InvalidArgument(fmt::format("{} excludes {}: {}", given, other, why)));
}

// The keywords as `seam compare`'s flags: each count in [1, kMaxTokens],
// each target a number of milliseconds, a batch given searched for no best.
Ask AskOf(const CompareArgs& a) {
  Excludes("batch", "ttft_ms", a.batch && a.ttft_ms, "a latency target runs each configuration at its best batch");
  Excludes("batch", "tpot_ms", a.batch && a.tpot_ms, "a latency target runs each configuration at its best batch");
  Excludes("prefill", "isl", a.prefill && a.isl, "a request's input tokens are its prefill");
  Excludes("context", "isl", a.context && a.isl, "a request's lengths say what each sequence caches");
  Excludes("context", "osl", a.context && a.osl, "a request's lengths say what each sequence caches");
  Ask ask;
  for (auto [name, from, to] : {std::tuple{"batch", &a.batch, &ask.batch},
                                {"prefill", &a.prefill, &ask.prefill},
                                {"context", &a.context, &ask.context},
                                {"isl", &a.isl, &ask.isl},
                                {"osl", &a.osl, &ask.osl}}) {
    if (!*from) continue;
    CheckCount(name, **from, kMaxTokens);
    *to = **from;
  }
  ask.batch_given = a.batch.has_value();
  if (a.ttft_ms) ask.ttft = SecondsOfMillis("ttft_ms", *a.ttft_ms);
  if (a.tpot_ms) ask.tpot = SecondsOfMillis("tpot_ms", *a.tpot_ms);
  return ask;
}

// gpus 0: the engine's own GPUs (its world size times its replicas), or
// every GPU of the nodes without an engine, as `seam compare` counts them.
py::dict CompareOf(const Model& m, const std::optional<EngineChoice>& engine, const std::optional<Engine>& name,
                   const CompareArgs& a) {
  if (a.gpus != 0) CheckCount("gpus", a.gpus, kMaxGpus);
  CheckCount("nodes", a.nodes, kMaxGpus);
  const Ask ask = AskOf(a);
  CheckSeconds("max_seconds", a.max_seconds);
  const Hardware hw = Take(LoadHardware(a.hardware));
  const WireDtypes wire = WireOf(a.act_dtype, a.dispatch_dtype);
  int gpus = a.gpus;
  if (gpus == 0) gpus = engine ? WorldSize(engine->config) * engine->replicas : a.nodes * hw.gpus_per_node;
  CheckCount("gpus", gpus, kMaxGpus);
  CompareOptions o{
      .gpus = gpus,
      .nodes = a.nodes,
      .hardware = hw,
      .wire = wire,
      .memory = {.weight_bytes = TakeArg("weight_dtype", ParseWeightBytes(a.weight_dtype)), .kv = wire.act}};
  ApplyAsk(ask, o);
  if (engine && name) FillAs(*name, *engine, o.memory);
  o.objective = TakeArg("objective", ParseObjective(a.objective));
  o.pareto = a.pareto;
  if (const double t = EstimatedSeconds(m, o); t > a.max_seconds) {
    Raise(
        InvalidArgument(fmt::format("comparing every configuration of {} layers on {} GPUs would take about {:.0f} "
                                    "s; max_seconds={:g} refuses it (fewer gpus or layers, or a larger max_seconds)",
                                    m.num_layers, gpus, t, a.max_seconds)));
  }
  Expected<Comparison> c = [&] {
    py::gil_scoped_release unlocked;
    return Compare(m, o);
  }();
  const Comparison& done = Take(std::move(c));
  py::list ranked;  // each candidate's JSON, as seam compare --format json writes it
  for (size_t i = 0; i < done.ranked.size(); ++i) {
    ranked.append(CandidateJson(done.ranked[i], static_cast<int>(i) + 1).dump());
  }
  py::dict out;
  out["model"] = m.name;
  out["hardware"] = hw.name;
  out["gpus"] = gpus;
  // The workload, as seam compare --format json writes it.
  out["batch"] = o.load.batch;
  out["prefill"] = o.load.prefill;
  out["context"] = o.load.context;
  out["best_batch"] = o.best_batch;
  py::dict targets;
  targets["ttft_seconds"] = o.targets.ttft;
  targets["tpot_seconds"] = o.targets.tpot;
  targets["osl"] = o.targets.osl;
  out["targets"] = targets;
  out["objective"] = std::string(Name(o.objective));
  out["ranked"] = ranked;
  py::list frontier;  // with pareto, the frontier's points as the ranked candidates are written
  for (size_t i = 0; i < done.frontier.size(); ++i) {
    frontier.append(CandidateJson(done.frontier[i], static_cast<int>(i) + 1).dump());
  }
  out["frontier"] = o.pareto ? py::object(frontier) : py::object(py::none());
  out["rejected"] = done.rejected;
  out["considered"] = done.considered;
  out["merged"] = done.merged;
  out["engine"] = py::none();
  if (engine && name) {  // as `seam compare --engine --format json` reports it
    const std::optional<size_t> i = RankOf(done, engine->config, engine->replicas);
    py::dict e;
    e["name"] = std::string(Name(*name));
    e["flags"] = SeamFlags(engine->config, {});
    e["replicas"] = engine->replicas;
    e["rank"] = i ? py::object(py::int_(*i + 1)) : py::object(py::none());
    out["engine"] = e;
  }
  return out;
}

py::dict CompareModel(const std::string& model, const std::string& hf_config, int layers, const CompareArgs& a) {
  return CompareOf(ModelOf(model, hf_config, layers), std::nullopt, std::nullopt, a);
}

// The model an engine's own flags name, every configuration of it ranked.
py::dict CompareEngine(const std::string& engine, const std::vector<std::string>& flags, int layers,
                       const CompareArgs& a) {
  const Engine e = TakeArg("engine", ParseEngine(engine));
  EngineChoice c = Take(ChooseEngineLaunch(e, flags, layers));
  const Model m = c.model;
  return CompareOf(m, std::move(c), e, a);
}

}  // namespace

void AddCompare(py::module_& m) {
  py::class_<CompareArgs>(m, "CompareArgs")
      .def(py::init<>())
      .def_readwrite("gpus", &CompareArgs::gpus)
      .def_readwrite("nodes", &CompareArgs::nodes)
      .def_readwrite("hardware", &CompareArgs::hardware)
      .def_readwrite("batch", &CompareArgs::batch)
      .def_readwrite("prefill", &CompareArgs::prefill)
      .def_readwrite("context", &CompareArgs::context)
      .def_readwrite("isl", &CompareArgs::isl)
      .def_readwrite("osl", &CompareArgs::osl)
      .def_readwrite("ttft_ms", &CompareArgs::ttft_ms)
      .def_readwrite("tpot_ms", &CompareArgs::tpot_ms)
      .def_readwrite("weight_dtype", &CompareArgs::weight_dtype)
      .def_readwrite("act_dtype", &CompareArgs::act_dtype)
      .def_readwrite("dispatch_dtype", &CompareArgs::dispatch_dtype)
      .def_readwrite("max_seconds", &CompareArgs::max_seconds)
      .def_readwrite("objective", &CompareArgs::objective)
      .def_readwrite("pareto", &CompareArgs::pareto);
  m.def("compare", &CompareModel, py::arg("model"), py::arg("hf_config"), py::arg("layers"), py::arg("args"),
        "Every configuration of the model on the GPUs, bound, verified and ranked by cost.");
  m.def("compare_engine", &CompareEngine, py::arg("engine"), py::arg("flags"), py::arg("layers"), py::arg("args"),
        "Every configuration of the model an engine's own flags name, ranked, with where the engine's ranks.");
}

}  // namespace seam::python
