#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "seam/bind.h"
#include "seam/files.h"
#include "seam/plan_io.h"
#include "seam/verify.h"

namespace seam::cli {
namespace {

Expected<Pipeline> LoadPlans(const std::string& path) {
  Expected<std::string> text = ReadWholeFile(path);
  if (!text) return text.error();
  Expected<Pipeline> plans = PipelineFromJson(*text);
  if (!plans) return Malformed(fmt::format("{}: {}", path, plans.error().message));
  return plans;
}

int Print(const Pipeline& plans, const std::string& format) {
  if (format == "table") {
    std::cout << ToTable(plans);
  } else if (format == "json") {
    std::cout << ToJson(plans);
  } else if (format == "dot") {
    std::cout << ToDot(plans);
  } else {
    return Fail(InvalidArgument(fmt::format("--format: unknown format '{}'; expected one of: table, json, dot", format)));
  }
  return kOk;
}

}  // namespace

int Fail(const Error& e) {
  std::cerr << "seam: " << e.message << "\n";
  return e.code == ErrorCode::kFailedCheck ? kFailedCheck : kBadInput;
}

int RunModels() {
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    std::cout << fmt::format("{:<18} {}\n{:<18} stages: {}\n", e.name, e.summary, "", PatternOf(m));
  }
  return kOk;
}

int RunPlan(const PlanArgs& a) {
  Expected<ParallelConfig> cfg = ToConfig(a.flags);
  if (!cfg) return Fail(cfg.error());
  Expected<Model> model = CatalogueModel(a.model);
  if (!model) return Fail(model.error());
  if (a.layers < 0) return Fail(InvalidArgument(fmt::format("--layers {} must be at least 1", a.layers)));
  Model m = *model;
  if (a.layers > 0) m.num_layers = a.layers;
  Expected<Pipeline> plans = BindPipeline(m, *cfg, {.verify = true});
  if (!plans) return Fail(plans.error());
  return Print(*plans, a.format);
}

int RunShow(const FileArgs& a) {
  Expected<Pipeline> plans = LoadPlans(a.first);
  if (!plans) return Fail(plans.error());
  const std::vector<Violation> violations = VerifyPipeline(*plans);
  if (!violations.empty()) return Fail(FailedCheck(a.first + " breaks its invariants:\n" + Describe(violations)));
  return Print(*plans, a.format);
}

int RunDiff(const FileArgs& a) {
  Expected<Pipeline> first = LoadPlans(a.first);
  if (!first) return Fail(first.error());
  Expected<Pipeline> second = LoadPlans(a.second);
  if (!second) return Fail(second.error());
  const std::vector<std::string> diff = Diff(*first, *second);
  if (diff.empty()) {
    std::cout << "the plans are equal\n";
    return kOk;
  }
  for (const std::string& d : diff) std::cout << d << "\n";
  return kFailedCheck;
}

}  // namespace seam::cli
