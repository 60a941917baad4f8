// seam.run: a plan run on one thread per rank against the unsharded
// reference, the outputs as numpy arrays.
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <array>
#include <cstring>

#include "compare.h"
#include "config.h"
#include "errors.h"
#include "seam/checked.h"
#include "seam/limits.h"
#include "seam/runtime/exec.h"
#include "seam/runtime/generate.h"

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
  // seam.generate: each request's (prompt, output, arrival), or none to
  // split `tokens` into `requests` each generating `generate`.
  std::vector<std::array<int, 3>> lengths;
  int generate = 0;
  int chunk = 0;
  bool mixed = false;
};

py::array_t<float> ArrayOf(const Tensor& t) {
  py::array_t<float> a({t.rows(), t.cols()});
  if (t.size() > 0) std::memcpy(a.mutable_data(), t.data(), t.size() * sizeof(float));
  return a;
}

py::list RanksOf(const std::vector<CommStats>& stats) {
  py::list ranks;
  for (const CommStats& s : stats) {
    py::dict r;
    r["collectives"] = s.calls();
    r["bytes_sent"] = BytesSent(s.elements_sent());
    ranks.append(r);
  }
  return ranks;
}

struct Finished {
  RunOutput out;
  Tensor reference;
  Tensor reference_logits;
};

// The sizes and limits of a run, checked as the command line checks its flags.
void CheckArgs(const RunArgs& a) {
  for (const auto& [name, v] : {std::pair{"tokens", a.tokens}, {"requests", a.requests}}) {
    if (v < 1 || v > kMaxTokens) Raise(InvalidArgument(fmt::format("{}={} is not in [1, {}]", name, v, kMaxTokens)));
  }
  int64_t total = 0;
  for (const auto& [prompt, output, arrival] : a.lengths) total += int64_t{prompt} + output;
  if (total > kMaxTokens) Raise(InvalidArgument(fmt::format("requests of more than {} tokens in all", kMaxTokens)));
  CheckSeconds("timeout", a.timeout);
  CheckSeconds("max_seconds", a.max_seconds);
}

// What a run and a generation start from: the arguments checked, the
// configuration, the dtype and a model that can run it.
struct Setup {
  ParallelConfig cfg;
  Dtype dtype;
  Model m;
};

Setup SetUp(const std::string& model, const std::string& hf_config, int layers, const py::dict& knobs,
            const RunArgs& a) {
  CheckArgs(a);
  Setup s{ConfigOf(knobs), TakeArg("dtype", ParseDtype(a.dtype)), ModelOf(model, hf_config, layers)};
  Check(CheckRunnable(s.m, s.cfg));
  return s;
}

py::dict RunModel(const std::string& model, const std::string& hf_config, int layers, const py::dict& knobs,
                  const RunArgs& a) {
  const Setup setup = SetUp(model, hf_config, layers, knobs, a);
  const ParallelConfig& cfg = setup.cfg;
  const Dtype dtype = setup.dtype;
  const Model& m = setup.m;
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
  py::list ranks = RanksOf(f.out.ranks);
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

// The requests to serve: each given length, or `tokens` split at random.
std::vector<Request> RequestsOf(const RunArgs& a, int vocab) {
  if (a.lengths.empty()) {
    const Batch b = Take(RandomBatch(a.tokens, a.requests, vocab, a.seed));
    std::vector<Request> out;
    for (const auto& prompt : b.requests) out.push_back({prompt, a.generate, 0});
    return out;
  }
  std::vector<int> prompts;
  for (const auto& [prompt, output, arrival] : a.lengths) prompts.push_back(prompt);
  const Batch b = Take(RandomPrompts(prompts, vocab, a.seed));
  std::vector<Request> out;
  for (size_t i = 0; i < a.lengths.size(); ++i) {
    const auto& [prompt, output, arrival] = a.lengths[i];
    out.push_back({b.requests[i], output > 0 ? output : a.generate, arrival});
  }
  return out;
}

struct Served {
  Generation g;
  Tensor reference;
  Tensor reference_logits;
};

py::dict GenerateModel(const std::string& model, const std::string& hf_config, int layers, const py::dict& knobs,
                       const RunArgs& a) {
  const Setup setup = SetUp(model, hf_config, layers, knobs, a);
  const ParallelConfig& cfg = setup.cfg;
  const Dtype dtype = setup.dtype;
  const Model& m = setup.m;
  const std::vector<Request> requests = RequestsOf(a, m.dims->vocab);
  int prompts = 0;
  for (const Request& r : requests) prompts += static_cast<int>(r.prompt.size());
  Check(CheckRunMemory(m, cfg, prompts, dtype, RunMemoryLimit(a.max_memory), SizeOf(requests)));
  Check(CheckRunSeconds(m, FedShape(requests), a.max_seconds));
  const Pipeline plans = Take(BindPipelineChecked(m, cfg));
  Expected<Served> done = [&]() -> Expected<Served> {
    py::gil_scoped_release unlocked;
    SEAM_ASSIGN_OR_RETURN(const Weights w, GenerateWeights(m, a.seed, dtype));
    SEAM_ASSIGN_OR_RETURN(Generation g, Generate(m, plans, w, requests, {.chunk = a.chunk, .mixed = a.mixed},
                                                 {.dtype = dtype, .timeout_seconds = a.timeout}));
    SEAM_ASSIGN_OR_RETURN(Tensor ref, RunReference(m, w, TeacherForced(requests, g), NumericsOf(cfg, dtype)));
    Tensor logits = ReferenceLogits(ref, w, dtype);
    return Served{std::move(g), std::move(ref), std::move(logits)};
  }();
  const Served& s = Take(std::move(done));
  Check(CheckFinite({.hidden = s.g.hidden, .logits = s.g.logits}, s.reference, s.reference_logits));
  py::list tokens, groups;
  for (size_t q = 0; q < requests.size(); ++q) {
    tokens.append(py::tuple(py::cast(s.g.tokens[q])));
    groups.append(s.g.schedule.group[q]);
  }
  py::dict d;
  d["tokens"] = tokens;
  d["groups"] = groups;
  d["hidden"] = ArrayOf(s.g.hidden);
  d["logits"] = ArrayOf(s.g.logits);
  d["reference"] = ArrayOf(s.reference);
  d["reference_logits"] = ArrayOf(s.reference_logits);
  d["identical"] = s.g.hidden == s.reference && s.g.logits == s.reference_logits;
  d["steps"] = s.g.schedule.steps.size();
  d["peak_cache_bytes"] = s.g.peak_cache_bytes;
  d["seconds"] = s.g.seconds;
  d["ranks"] = RanksOf(s.g.ranks);
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
      .def_readwrite("max_seconds", &RunArgs::max_seconds)
      .def_readwrite("lengths", &RunArgs::lengths)
      .def_readwrite("generate", &RunArgs::generate)
      .def_readwrite("chunk", &RunArgs::chunk)
      .def_readwrite("mixed", &RunArgs::mixed);
  m.def("run", &RunModel, py::arg("model"), py::arg("hf_config"), py::arg("layers"), py::arg("config"), py::arg("args"),
        "Runs the model's plans on threads and its unsharded reference.");
  m.def("generate", &GenerateModel, py::arg("model"), py::arg("hf_config"), py::arg("layers"), py::arg("config"),
        py::arg("args"), "Serves requests on threads and runs the teacher-forced reference.");
}

}  // namespace seam::python
