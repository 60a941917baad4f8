// Plans: bound from a model and a configuration or from an engine's flags,
// read from a file, printed, verified and diffed.
#include "plans.h"

#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "config.h"
#include "errors.h"
#include "seam/checked.h"
#include "seam/engine.h"
#include "seam/files.h"
#include "seam/plan_io.h"
#include "seam/rebind.h"
#include "seam/step_kind.h"
#include "seam/verify.h"

namespace py = pybind11;

namespace seam::python {
namespace {

// Each entry's JSON, as seam models --format json lists it.
py::list Models() {
  py::list out;
  for (const CatalogueEntry& e : Catalogue()) out.append(ModelJson(e).dump());
  return out;
}

Plans Bind(const std::string& model, const std::string& hf_config, int layers, const py::dict& knobs,
           const std::string& act, const std::optional<std::string>& dispatch) {
  const ParallelConfig cfg = ConfigOf(knobs);
  const WireDtypes wire = WireOf(act, dispatch);
  const Model m = ModelOf(model, hf_config, layers);
  return Plans{Take(BindPipelineChecked(m, cfg, {.wire = wire}))};
}

py::tuple BindEngine(const std::string& engine, const std::vector<std::string>& args, int layers) {
  const Engine e = TakeArg("engine", ParseEngine(engine));
  EngineChoice c = Take(ChooseEngineLaunch(e, args, layers));
  Pipeline plans = Take(BindPipelineChecked(c.model, c.config, {.wire = c.wire}));
  py::dict info;
  info["engine"] = std::string(Name(e));
  info["hf_config"] = c.hf_config;
  info["seam_flags"] = c.seam_flags;
  info["replicas"] = c.replicas;
  info["notes"] = c.notes;
  info["ignored"] = c.ignored;
  return py::make_tuple(Plans{std::move(plans)}, info);
}

// A plan file's text in either form: JSON when its first non-blank character
// is '{' or '[', else the compact text form.
Plans ReadPlan(const std::string& text, const std::string& name) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    Expected<Pipeline> plans = PipelineFromJson(text);
    if (!plans) Raise(Malformed(name + ": " + plans.error().message));
    return Plans{*std::move(plans)};
  }
  return Plans{Take(PipelineFromText(text, name))};
}

Plans LoadPlan(const std::string& path) { return ReadPlan(Take(ReadFileAtMost(path, kMaxPlanBytes)), path); }

py::list Violations(const Plans& plans) {
  py::list out;
  for (const Violation& v : VerifyPipeline(plans.ranks)) {
    py::dict d;
    d["pp_rank"] = v.pp_rank;
    d["variant"] = std::string(Name(v.variant));
    d["stage"] = v.stage;
    d["side"] = std::string(Name(v.side));
    d["step"] = v.step;
    d["message"] = v.message;
    d["text"] = Describe(v);
    out.append(d);
  }
  return out;
}

py::dict StepKinds() {
  py::dict out;
  for (const StepKind kind : kStepKinds) out[py::str(std::string(Name(kind)))] = IsCollective(kind);
  return out;
}

std::string Formatted(const Plans& p, PlanFormat f) { return Take(Format(p.ranks, f)); }

}  // namespace

void AddPlans(py::module_& m) {
  py::class_<Plans>(m, "Plans", "Every pipeline rank's bound plan (immutable).")
      .def(
          "to_json", [](const Plans& p) { return ToJson(p.ranks); },
          "The plan as JSON (docs/schemas/plan.schema.json).")
      .def(
          "to_text", [](const Plans& p) { return ToText(p.ranks); }, "The compact text form; reads back equal.")
      .def(
          "table", [](const Plans& p) { return ToTable(p.ranks); }, "The table `seam plan` prints.")
      .def(
          "dot", [](const Plans& p) { return ToDot(p.ranks); }, "A Graphviz dot graph.")
      .def(
          "svg", [](const Plans& p) { return Formatted(p, PlanFormat::kSvg); }, "The dot graph drawn by Graphviz.")
      .def("__eq__", [](const Plans& a, const Plans& b) { return a.ranks == b.ranks; })
      .def("__len__", [](const Plans& p) { return p.ranks.size(); });
  m.def("models", &Models, "The catalogue: one dict per model.");
  m.def("knobs", &KnobList, "The parallel configuration's knobs: the keywords bind and run take in their config.");
  m.def("bind", &Bind, py::arg("model"), py::arg("hf_config"), py::arg("layers"), py::arg("config"),
        py::arg("act_dtype"), py::arg("dispatch_dtype"), "Binds and verifies every pipeline rank's plan.");
  m.def("bind_engine", &BindEngine, py::arg("engine"), py::arg("args"), py::arg("layers"),
        "Binds the plan an engine's own command line implies; returns (plans, what seam read).");
  m.def("read_plan", &ReadPlan, py::arg("text"), py::arg("name"), "Reads a plan file's text without verifying it.");
  m.def("load_plan", &LoadPlan, py::arg("path"), "Reads a plan file (JSON or text) without verifying it.");
  m.def("verify", &Violations, py::arg("plans"), "The invariants the plans break, one dict each.");
  m.def(
      "compare_with_binder", [](const Plans& p) { return CompareWithBinder(p.ranks); }, py::arg("plans"),
      "How the plans differ from what seam binds for their stages and configuration.");
  m.def(
      "diff", [](const Plans& a, const Plans& b) { return Diff(a.ranks, b.ranks); }, py::arg("first"),
      py::arg("second"), "The differences between two plans, one line each.");
  m.def("step_kinds", &StepKinds, "Every step kind, and whether it moves data between ranks.");
}

}  // namespace seam::python
