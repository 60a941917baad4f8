// seam.run: a plan run on one thread per rank against the unsharded
// reference, the outputs as numpy arrays.
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>

#include "compare.h"
#include "config.h"
#include "errors.h"
#include "seam/checked.h"
#include "seam/limits.h"
#include "seam/runtime/exec.h"

namespace py = pybind11;

namespace seam::python {
namespace {

struct RunArgs {
  int tokens = 32;
  int requests = 4;
  std::string dtype = "fp32";
  uint64_t seed = 1;
  double timeout = 60;       // seconds a rank waits for another
  int64_t max_memory = 0;    // bytes the run may take; 0: what the system has available
  double max_seconds = 600;  // the attention it may compute, in estimated seconds
};

py::array_t<float> ArrayOf(const Tensor& t) {
  py::array_t<float> a({t.rows(), t.cols()});
  if (t.size() > 0) std::memcpy(a.mutable_data(), t.data(), t.size() * sizeof(float));
  return a;
}

struct Finished {
  RunOutput out;
  Tensor reference;
  Tensor reference_logits;
};

py::dict RunModel(const std::string& model, const std::string& hf_config, int layers, const py::dict& knobs,
                  const RunArgs& a) {
  for (const auto& [name, v] : {std::pair{"tokens", a.tokens}, {"requests", a.requests}}) {
    if (v < 1 || v > kMaxTokens) Raise(InvalidArgument(fmt::format("{}={} is not in [1, {}]", name, v, kMaxTokens)));
  }
  CheckSeconds("timeout", a.timeout);
  CheckSeconds("max_seconds", a.max_seconds);
  const ParallelConfig cfg = ConfigOf(knobs);
  const Dtype dtype = TakeArg("dtype", ParseDtype(a.dtype));
  const Model m = ModelOf(model, hf_config, layers);
  Check(CheckRunnable(m, cfg));
  Check(CheckRunMemory(m, cfg, a.tokens, dtype, RunMemoryLimit(a.max_memory)));
  const Pipeline plans = Take(BindPipelineChecked(m, cfg));
  const Batch batch = Take(RandomBatch(a.tokens, a.requests, m.dims->vocab, a.seed));
  Check(CheckRunSeconds(m, batch, a.max_seconds));
  Expected<Finished> done = [&]() -> Expected<Finished> {
    py::gil_scoped_release unlocked;
    SEAM_ASSIGN_OR_RETURN(const Weights w, GenerateWeights(m, a.seed, dtype));
    SEAM_ASSIGN_OR_RETURN(RunOutput out, RunPlans(m, plans, w, batch, {.dtype = dtype, .timeout_seconds = a.timeout}));
    SEAM_ASSIGN_OR_RETURN(Tensor ref, RunReference(m, w, batch, NumericsOf(cfg, dtype)));
    Tensor logits = ReferenceLogits(ref, w, dtype);
    return Finished{std::move(out), std::move(ref), std::move(logits)};
  }();
  const Finished& f = Take(std::move(done));
  Check(CheckFinite(f.out, f.reference, f.reference_logits));
  py::list ranks;
  for (const CommStats& s : f.out.ranks) {
    py::dict r;
    r["collectives"] = s.calls();
    r["bytes_sent"] = BytesSent(s.elements_sent());
    ranks.append(r);
  }
  py::dict d;
  d["hidden"] = ArrayOf(f.out.hidden);
  d["logits"] = ArrayOf(f.out.logits);
  d["reference"] = ArrayOf(f.reference);
  d["reference_logits"] = ArrayOf(f.reference_logits);
  d["identical"] = f.out.hidden == f.reference && f.out.logits == f.reference_logits;
  d["seconds"] = f.out.seconds;
  d["ranks"] = ranks;
  d["dtype"] = a.dtype;
  return d;
}

}  // namespace

void AddRun(py::module_& m) {
  py::class_<RunArgs>(m, "RunArgs")
      .def(py::init<>())
      .def_readwrite("tokens", &RunArgs::tokens)
      .def_readwrite("requests", &RunArgs::requests)
      .def_readwrite("dtype", &RunArgs::dtype)
      .def_readwrite("seed", &RunArgs::seed)
      .def_readwrite("timeout", &RunArgs::timeout)
      .def_readwrite("max_memory", &RunArgs::max_memory)
      .def_readwrite("max_seconds", &RunArgs::max_seconds);
  m.def("run", &RunModel, py::arg("model"), py::arg("hf_config"), py::arg("layers"), py::arg("config"), py::arg("args"),
        "Runs the model's plans on threads and its unsharded reference.");
}

}  // namespace seam::python
