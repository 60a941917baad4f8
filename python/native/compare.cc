// seam.compare: every configuration of a model on a number of GPUs, ranked.
#include "compare.h"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "config.h"
#include "errors.h"
#include "seam/compare.h"
#include "seam/limits.h"

namespace py = pybind11;

namespace seam::python {
namespace {

void CheckCount(const char* name, int value, int hi) {
  if (value < 1 || value > hi) Raise(InvalidArgument(fmt::format("{}={} is not in [1, {}]", name, value, hi)));
}

struct CompareArgs {
  int gpus = 8;
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

py::dict CompareModel(const std::string& model, const std::string& hf_config, int layers, const CompareArgs& a) {
  CheckCount("gpus", a.gpus, kMaxGpus);
  CheckCount("nodes", a.nodes, kMaxGpus);
  for (const auto& [name, v] : {std::pair{"batch", a.batch}, {"prefill", a.prefill}, {"context", a.context}}) {
    CheckCount(name, v, kMaxTokens);
  }
  const Hardware hw = Take(LoadHardware(a.hardware));
  const WireDtypes wire = WireOf(a.act_dtype, a.dispatch_dtype);
  const Model m = ModelOf(model, hf_config, layers);
  const CompareOptions o{.gpus = a.gpus,
                         .nodes = a.nodes,
                         .hardware = hw,
                         .load = {.batch = a.batch, .prefill = a.prefill, .context = a.context},
                         .wire = wire,
                         .memory = {.weight_bytes = Take(ParseWeightBytes(a.weight_dtype)), .kv = wire.act}};
  if (const double t = EstimatedSeconds(m, o); t > a.max_seconds) {
    Raise(InvalidArgument(fmt::format("comparing every configuration of {} layers on {} GPUs would take about {:.0f} "
                                      "s; max_seconds={:g} refuses it (fewer gpus or layers, or a larger max_seconds)",
                                      m.num_layers, a.gpus, t, a.max_seconds)));
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
  out["ranked"] = ranked;
  out["rejected"] = done.rejected;
  out["considered"] = done.considered;
  out["merged"] = done.merged;
  return out;
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
}

}  // namespace seam::python
