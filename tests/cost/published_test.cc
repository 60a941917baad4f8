// seam's predictions against published measurements (tests/compare/
// published.json, each with its source): for each check in checks.json,
// the published figure, the configuration and workload it was measured at,
// and whether seam is within 35% of it. A check that misses says why, and
// must still miss: a model that comes closer moves it to "within".
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cost/configs.h"
#include "seam/compare.h"
#include "seam/engine.h"

namespace seam {
namespace {

using nlohmann::json;

json Read(const std::string& name) {
  std::ifstream in(fmt::format("{}/{}", SEAM_PUBLISHED, name));
  return json::parse(in);
}

double Published(const json& published, const json& check) {
  for (const json& e : published) {
    if (e["id"] != check["id"]) continue;
    const json& figure = e["measured"][check["figure"].get<std::string>()];
    return check.contains("at") ? figure[check["at"].get<std::string>()].get<double>() : figure.get<double>();
  }
  throw std::runtime_error("no published entry " + check["id"].get<std::string>());
}

Hardware HardwareOf(const json& h) {
  Expected<Hardware> hw = h.is_string() ? LoadHardware(h.get<std::string>()) : HardwareFromJson(h.dump());
  if (!hw) throw std::runtime_error(hw.error().message);
  return *hw;
}

// seam's time between a request's tokens for the check's configuration,
// in ms: with the requests' lengths (isl, osl), the decode step and its
// share of the prefills run between steps, as a serving benchmark measures
// TPOT; without them, the step alone at the check's context.
double Predicted(const json& check) {
  const Model m = Config(check["config"].get<std::string>());
  CompareOptions o{.gpus = check["gpus"].get<int>(),
                   .nodes = check.value("nodes", 1),
                   .hardware = HardwareOf(check["hardware"]),
                   .memory = {.weight_bytes = check["weight_bytes"].get<double>(),
                              .kv = ParseWireDtype(check.value("kv", "bf16")).value()}};
  ApplyAsk({.batch = check["batch"].get<int>(),
            .batch_given = true,
            .context = check.value("context", 4096),
            .isl = check.value("isl", 0),
            .osl = check.value("osl", 0)},
           o);
  Expected<Comparison> c = Compare(m, o);
  if (!c) throw std::runtime_error(c.error().message);
  for (const Candidate& k : c->ranked) {
    if (SeamFlags(k.config, {}) == check["flags"] && k.replicas == check["replicas"]) return k.tpot_seconds * 1e3;
  }
  throw std::runtime_error("no candidate " + check["flags"].get<std::string>());
}

TEST(Published, EachCheckedMeasurementIsWithin35PercentAndEachMissStillMisses) {
  const json published = Read("published.json");
  std::string table =
      fmt::format("{:<42} {:<16} {:>10} {:>10} {:>7}\n", "published", "figure", "published", "seam", "error");
  for (const json& check : Read("checks.json")) {
    const double want = Published(published, check);
    const double got = Predicted(check);
    const double error = got / want - 1;
    const std::string id =
        check["id"].get<std::string>() + (check.contains("at") ? " @" + check["at"].get<std::string>() : "");
    table += fmt::format("{:<42} {:<16} {:>10.2f} {:>10.2f} {:>+6.0f}%\n", id, check["figure"].get<std::string>(), want,
                         got, 100 * error);
    if (check["expect"] == "within") {
      EXPECT_LE(std::abs(error), 0.35) << id << ": " << check["why"];
    } else {
      EXPECT_GT(std::abs(error), 0.35) << id << " is now within 35%: move it to \"within\"";
    }
  }
  std::cout << table;
}

}  // namespace
}  // namespace seam
