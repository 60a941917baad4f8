#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli.h"
#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/cost.h"
#include "seam/files.h"
#include "seam/hf_config.h"
#include "seam/model_source.h"
#include "seam/plan_io.h"
#include "seam/printable.h"
#include "seam/rebind.h"
#include "seam/verify.h"

namespace seam::cli {
namespace {

// A plan file in either form: JSON when its first non-blank character is
// '{' or '[', else the compact text form (whose errors already name path:line).
Expected<Pipeline> LoadPlans(const std::string& path) {
  Expected<std::string> text = ReadFileAtMost(path, kMaxPlanBytes);
  if (!text) return text.error();
  const size_t first = text->find_first_not_of(" \t\r\n");
  if (first == std::string::npos || ((*text)[first] != '{' && (*text)[first] != '['))
    return PipelineFromText(*text, path);
  Expected<Pipeline> plans = PipelineFromJson(*text);
  if (!plans) return Malformed(fmt::format("{}: {}", path, plans.error().message));
  return plans;
}

// The first violations a plan breaks, and how many more: a hand-edited plan
// can break thousands, one per stage, and the first say what went wrong.
std::string FirstViolations(const std::vector<Violation>& violations) {
  constexpr size_t kShown = 20;
  if (violations.size() <= kShown) return Describe(violations);
  const std::vector<Violation> first(violations.begin(), violations.begin() + kShown);
  return Describe(first) + fmt::format("... and {} more\n", violations.size() - kShown);
}

// Whether CostOf can price the pipeline: some rank, each with a line.
bool Priceable(const Pipeline& plans) {
  return !plans.empty() && std::all_of(plans.begin(), plans.end(), [](const Plan& p) { return !p.lines().empty(); });
}

int Print(const Pipeline& plans, PlanFormat format, bool summary = false) {
  if (summary) {
    std::cout << ToSummary(plans);
    return kOk;
  }
  const Expected<std::string> text = Format(plans, format);
  if (!text) return Fail(text.error());
  std::cout << *text;
  return kOk;
}

}  // namespace

int ExitCodeOf(const Error& e) { return ExitStatusOf(e.code); }

int CheckOutput(int code) {
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good()) return code;
  int why = errno;
  // The write that failed may lie further back, its errno since overwritten:
  // one more byte onto an output already broken finds the reason again.
  if (why == 0 && write(STDOUT_FILENO, "\n", 1) < 0) why = errno;
  std::cerr << "seam: cannot write the output: " << (why != 0 ? std::strerror(why) : "standard output failed") << "\n";
  // A command that failed already keeps its own status; one that succeeded,
  // or found plans differ, did not deliver what it found.
  return code == kOk || code == kFailedCheck ? kBadInput : code;
}

int Fail(const Error& e) {
  std::cerr << "seam: " << e.message << "\n";
  return ExitCodeOf(e);
}

int RunModels(bool json) {
  if (json) {
    Json models = Json::array();
    for (const CatalogueEntry& e : Catalogue()) models.push_back(ModelJson(e));
    PrintJson({{"seam_models", 1}, {"models", models}});
    return kOk;
  }
  // Plain words first: what the shapes are, then the stage letters' key.
  std::cout << "Each model is a tiny shape of a real family (hidden 64 or 128, a few layers, 8 heads) that keeps\n"
               "the family's order of layers and what is distinctive about it, so it plans and runs in\n"
               "milliseconds; give --hf-config with the real config for the real size. Stages: A attention,\n"
               "M a recurrent mixer, F a dense MLP (FFN), E a mixture-of-experts MLP, L a linear layer, . none;\n"
               "brackets hold one layer's stages.\n\n";
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    std::cout << fmt::format("{:<17} tiny shape: hidden {}, {} layers\n", e.name, m.hidden, m.num_layers);
    std::cout << fmt::format("{:<17} family:   {}\n{:<17} stages:   {}\n{:<17} runs on:  {}\n{:<17} real config: {}\n",
                             "", e.summary, "", PatternOf(m), "", e.features, "",
                             e.source == "-" ? "none (tiny shape only)" : "configs/" + e.source);
  }
  return kOk;
}

int RunPlan(const PlanArgs& a) {
  if (Status s = CheckEngineArgs(a.engine); !s.ok()) return Fail(s.error());
  Expected<WireDtypes> wire = ToWire(a.wire);
  if (!wire) return Fail(wire.error());
  if (a.engine.engine) {
    Expected<EngineChoice> e = FromEngine(a.engine, a.layers);
    if (!e) return Fail(e.error());
    WireDtypes w = e->wire;
    w.dispatch = a.wire.dispatch.value_or(w.dispatch);
    Expected<Pipeline> plans = BindPipelineChecked(e->model, e->config, {.wire = w});
    if (!plans) return Fail(plans.error());
    if (!a.emit) return Print(*plans, a.format, a.summary);
    if (!e->kv) return Fail(InvalidArgument("seam cannot count the engine's --kv-cache-dtype, nor write it back"));
    return PrintLaunch({.engine = *a.emit,
                        .model_path = e->hf_config,
                        .config = e->config,
                        .replicas = e->replicas,
                        .nodes = e->nodes,
                        .wire = w,
                        .quantization = e->quantization,
                        .kv = e->kv},
                       e->model);
  }
  Expected<ParallelConfig> cfg = ToConfig(a.flags);
  if (!cfg) return Fail(cfg.error());
  Expected<Model> model = ChooseModel(a.model, a.hf_config, a.layers);
  if (!model) return Fail(model.error());
  const Model& m = *model;
  Expected<Pipeline> plans = BindPipelineChecked(m, *cfg, {.wire = *wire});
  if (!plans) return Fail(plans.error());
  if (!a.emit) return Print(*plans, a.format, a.summary);
  Expected<std::string> path = EmitModelPath(a.model, a.hf_config, a.layers);
  if (!path) return Fail(path.error());
  return PrintLaunch({.engine = *a.emit, .model_path = *path, .config = *cfg, .nodes = a.nodes, .wire = *wire}, m);
}

int RunShow(const FileArgs& a) {
  if (a.first.empty()) return Fail(InvalidArgument("seam show reads a plan: give its FILE"));
  Expected<Pipeline> plans = LoadPlans(a.first);
  if (!plans) return Fail(plans.error());
  const std::vector<Violation> violations = VerifyPipeline(*plans);
  if (!violations.empty())
    return Fail(FailedCheck(a.first + " breaks its invariants:\n" + FirstViolations(violations)));
  const std::vector<std::string> diff = CompareWithBinder(*plans);
  if (!diff.empty()) {
    return Fail(
        FailedCheck(fmt::format("{} is not the plan seam binds for its stages and configuration (plan != "
                                "seam):\n{}",
                                a.first, fmt::join(diff, "\n"))));
  }
  return Print(*plans, a.format);
}

int RunDiff(const FileArgs& a) {
  if (a.second.empty()) {
    return Fail(InvalidArgument(fmt::format("seam diff compares two plans: give FIRST and SECOND (got {})",
                                            a.first.empty() ? "neither" : "only " + a.first)));
  }
  Expected<Pipeline> first = LoadPlans(a.first);
  if (!first) return Fail(first.error());
  Expected<Pipeline> second = LoadPlans(a.second);
  if (!second) return Fail(second.error());
  const std::vector<std::string> diff = Diff(*first, *second);
  Expected<Hardware> hw = LoadHardware(a.hardware);
  if (!hw) return Fail(hw.error());
  // A hand-edited plan is priced as it stands (what would this step cost?),
  // but a rank with no batch line has nothing to price: no estimate then.
  const bool first_priced = Priceable(*first);
  const bool priced = first_priced && Priceable(*second);
  const std::string& unpriced = first_priced ? a.second : a.first;
  // Each plan's collectives priced as one replica on the hardware's nodes
  // (seam/cost.h), at the default decode batch and prefill length.
  const Workload load;
  const PlanCost one = priced ? CostOf(*first, load, *hw, 1) : PlanCost{};
  const PlanCost two = priced ? CostOf(*second, load, *hw, 1) : PlanCost{};
  if (a.json) {
    Json estimate = nullptr;
    if (priced) {
      estimate = {{"hardware", hw->name},
                  {"batch", load.batch},
                  {"decode_seconds", {one.decode_seconds, two.decode_seconds}},
                  {"prefill_seconds_per_token", {one.prefill_seconds_per_token, two.prefill_seconds_per_token}}};
    }
    PrintJson({{"seam_diff", 1},
               {"first", a.first},
               {"second", a.second},
               {"equal", diff.empty()},
               {"differences", diff},
               {"estimate", estimate}});
    return diff.empty() ? kOk : kFailedCheck;
  }
  if (diff.empty()) {
    std::cout << "the plans are equal\n";
    return kOk;
  }
  for (const std::string& d : diff) std::cout << d << "\n";
  if (!priced) {
    std::cout << fmt::format(
        "no estimate: {} has a rank with no batch line to price (seam show {} says what "
        "else it breaks)\n",
        unpriced, unpriced);
    return kFailedCheck;
  }
  std::cout << fmt::format(
      "estimated on {} (batch {}): decode step {:.1f} -> {:.1f} us ({:+.1f}), prefill {:.2f} -> "
      "{:.2f} ns a token ({:+.2f})\n",
      Printable(hw->name), load.batch, one.decode_seconds * 1e6, two.decode_seconds * 1e6,
      (two.decode_seconds - one.decode_seconds) * 1e6, one.prefill_seconds_per_token * 1e9,
      two.prefill_seconds_per_token * 1e9, (two.prefill_seconds_per_token - one.prefill_seconds_per_token) * 1e9);
  return kFailedCheck;
}

}  // namespace seam::cli
