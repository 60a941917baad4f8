// seam.compare: every configuration of a model on a number of GPUs, ranked.
#include "compare.h"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

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

struct CompareArgs {
  int gpus = 0;  // 0: as many as the engine runs, or every GPU of the nodes
  int nodes = 1;
  std::string hardware = "h100";
  int batch = 64;
  int prefill = 4096;
  int context = 4096;
  std::string weight_dtype = "bf16";
  std::string act_dtype = "bf16";
  std::optional<std::string> dispatch_dtype;
  double max_seconds = 600;
};

// gpus 0: the engine's own GPUs (its world size times its replicas), or
// every GPU of the nodes without an engine, as `seam compare` counts them.
py::dict CompareOf(const Model& m, const std::optional<EngineChoice>& engine, const std::optional<Engine>& name,
                   const CompareArgs& a) {
  if (a.gpus != 0) CheckCount("gpus", a.gpus, kMaxGpus);
  CheckCount("nodes", a.nodes, kMaxGpus);
  for (const auto& [arg, v] : {std::pair{"batch", a.batch}, {"prefill", a.prefill}, {"context", a.context}}) {
    CheckCount(arg, v, kMaxTokens);
  }
  CheckSeconds("max_seconds", a.max_seconds);
  const Hardware hw = Take(LoadHardware(a.hardware));
  const WireDtypes wire = WireOf(a.act_dtype, a.dispatch_dtype);
  int gpus = a.gpus;
  if (gpus == 0) gpus = engine ? WorldSize(engine->config) * engine->replicas : a.nodes * hw.gpus_per_node;
  CheckCount("gpus", gpus, kMaxGpus);
  const CompareOptions o{
      .gpus = gpus,
      .nodes = a.nodes,
      .hardware = hw,
      .load = {.batch = a.batch, .prefill = a.prefill, .context = a.context},
      .wire = wire,
      .memory = {.weight_bytes = TakeArg("weight_dtype", ParseWeightBytes(a.weight_dtype)), .kv = wire.act}};
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
  out["ranked"] = ranked;
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
      .def_readwrite("weight_dtype", &CompareArgs::weight_dtype)
      .def_readwrite("act_dtype", &CompareArgs::act_dtype)
      .def_readwrite("dispatch_dtype", &CompareArgs::dispatch_dtype)
      .def_readwrite("max_seconds", &CompareArgs::max_seconds);
  m.def("compare", &CompareModel, py::arg("model"), py::arg("hf_config"), py::arg("layers"), py::arg("args"),
        "Every configuration of the model on the GPUs, bound, verified and ranked by cost.");
  m.def("compare_engine", &CompareEngine, py::arg("engine"), py::arg("flags"), py::arg("layers"), py::arg("args"),
        "Every configuration of the model an engine's own flags name, ranked, with where the engine's ranks.");
}

}  // namespace seam::python
