#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "seam/bind.h"
#include "seam/plan_io.h"
#include "seam/verify.h"

namespace seam::cli {
namespace {

Expected<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(fmt::format("cannot open {}", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Expected<Plan> LoadPlan(const std::string& path) {
  Expected<std::string> text = ReadFile(path);
  if (!text) return text.error();
  Expected<Plan> plan = PlanFromJson(*text);
  if (!plan) return Malformed(fmt::format("{}: {}", path, plan.error().message));
  return plan;
}

int Print(const Plan& plan, const std::string& format) {
  if (format == "table") {
    std::cout << ToTable(plan);
  } else if (format == "json") {
    std::cout << ToJson(plan);
  } else if (format == "dot") {
    std::cout << ToDot(plan);
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
  Expected<Plan> plan = Bind(m, *cfg, 0, {.verify = true});
  if (!plan) return Fail(plan.error());
  return Print(*plan, a.format);
}

int RunShow(const FileArgs& a) {
  Expected<Plan> plan = LoadPlan(a.first);
  if (!plan) return Fail(plan.error());
  const std::vector<Violation> violations = Verify(*plan);
  if (!violations.empty()) return Fail(FailedCheck(a.first + " breaks its invariants:\n" + Describe(violations)));
  return Print(*plan, a.format);
}

int RunDiff(const FileArgs& a) {
  Expected<Plan> first = LoadPlan(a.first);
  if (!first) return Fail(first.error());
  Expected<Plan> second = LoadPlan(a.second);
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
