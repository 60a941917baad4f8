#include "seam/hardware.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "core/strict_json.h"
#include "seam/files.h"

namespace seam {
namespace {

// 400 Gb/s per GPU (one CX7 NIC each): nccl-tests reach about 90% of it.
constexpr Link kInfiniBand400{.busbw_gbs = 45, .latency_us = 20};

}  // namespace

const std::vector<Hardware>& BuiltinHardware() {
  // Sources (README, "The cost model"): nccl-tests all_reduce busbw at large
  // sizes, 8 x H100 SXM5 NVLink 460-480 GB/s, 8 x H100 PCIe 35-45 GB/s;
  // DeepEP's dispatch/combine bandwidth (V2: SM90 EP 8x2 90/81 GB/s over
  // RDMA, SM100 EP8 726/740 GB/s over NVLink; V1: H800 EP8 153/158 GB/s).
  static const std::vector<Hardware> kAll = {
      {.name = "h100",
       .summary = "8 x H100 SXM5 80 GB per node, NVLink 4 (NVSwitch), 400 Gb/s InfiniBand per GPU",
       .gpus_per_node = 8,
       .memory_gb = 80,
       .node = {.busbw_gbs = 470, .latency_us = 10},
       .network = kInfiniBand400,
       .a2a_node_gbs = 400,
       .a2a_network_gbs = 85,
       .a2a_latency_us = 25},
      {.name = "h200",
       .summary = "8 x H200 141 GB per node, NVLink 4 (NVSwitch), 400 Gb/s InfiniBand per GPU",
       .gpus_per_node = 8,
       .memory_gb = 141,
       .node = {.busbw_gbs = 470, .latency_us = 10},
       .network = kInfiniBand400,
       .a2a_node_gbs = 400,
       .a2a_network_gbs = 85,
       .a2a_latency_us = 25},
      {.name = "b200",
       .summary = "8 x B200 180 GB per node, NVLink 5 (NVSwitch), 400 Gb/s InfiniBand per GPU",
       .gpus_per_node = 8,
       .memory_gb = 180,
       .node = {.busbw_gbs = 900, .latency_us = 8},
       .network = kInfiniBand400,
       .a2a_node_gbs = 730,
       .a2a_network_gbs = 90,
       .a2a_latency_us = 20},
      {.name = "pcie",
       .summary = "8 x H100 PCIe 80 GB per node, no NVLink, 400 Gb/s InfiniBand per GPU",
       .gpus_per_node = 8,
       .memory_gb = 80,
       .node = {.busbw_gbs = 40, .latency_us = 15},
       .network = kInfiniBand400,
       .a2a_node_gbs = 35,
       .a2a_network_gbs = 35,
       .a2a_latency_us = 30},
  };
  return kAll;
}

namespace {

using nlohmann::json;

double Number(const json& j, const std::string& key, double lo, double hi) {
  if (!j.contains(key)) throw Failure(Malformed(fmt::format("missing key '{}'", key)));
  const json& v = j.at(key);
  if (!v.is_number()) throw Failure(Malformed(fmt::format("{}: is not a number", key)));
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi)) throw Failure(Malformed(fmt::format("{}: {} is outside [{:g}, {:g}]", key, x, lo, hi)));
  return x;
}

Link LinkOf(const json& j, const std::string& key) {
  if (!j.contains(key) || !j.at(key).is_object()) throw Failure(Malformed(fmt::format("{}: needs an object", key)));
  const json& l = j.at(key);
  for (const auto& [k, v] : l.items()) {
    if (k != "busbw_gbs" && k != "latency_us") throw Failure(Malformed(fmt::format("{}: unknown key '{}'", key, k)));
  }
  return {.busbw_gbs = Number(l, "busbw_gbs", 0.01, 1e5), .latency_us = Number(l, "latency_us", 0, 1e6)};
}

// The fields of a hardware file; an error names the field.
Expected<Hardware> ReadHardware(std::string_view text) {
  StrictJson<json> parsed = ParseStrictJson<json>(text);
  if (parsed.error) {
    return Malformed(parsed.error->problem == JsonProblem::kSyntax ? "is not valid JSON" : parsed.error->message);
  }
  const json& j = parsed.value;
  if (!j.is_object()) return Malformed("is not a JSON object");
  static const std::set<std::string> kKeys = {"name",    "summary",      "gpus_per_node",   "memory_gb",     "node",
                                              "network", "a2a_node_gbs", "a2a_network_gbs", "a2a_latency_us"};
  try {
    for (const auto& [k, v] : j.items()) {
      if (kKeys.count(k) == 0) throw Failure(Malformed(fmt::format("unknown key '{}'", k)));
    }
    Hardware h{.gpus_per_node = static_cast<int>(Number(j, "gpus_per_node", 1, 4096)),
               .memory_gb = Number(j, "memory_gb", 0.001, 1e5),
               .node = LinkOf(j, "node"),
               .network = LinkOf(j, "network"),
               .a2a_node_gbs = Number(j, "a2a_node_gbs", 0.01, 1e5),
               .a2a_network_gbs = Number(j, "a2a_network_gbs", 0.01, 1e5),
               .a2a_latency_us = Number(j, "a2a_latency_us", 0, 1e6)};
    if (Number(j, "gpus_per_node", 1, 4096) != h.gpus_per_node) {
      throw Failure(Malformed("gpus_per_node: is not a whole number"));
    }
    h.name = j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : "custom";
    h.summary = j.contains("summary") && j["summary"].is_string() ? j["summary"].get<std::string>() : "";
    return h;
  } catch (const Failure& e) {
    return e.error();
  }
}

}  // namespace

Expected<Hardware> HardwareFromJson(std::string_view text) {
  Expected<Hardware> h = ReadHardware(text);
  if (!h) return Malformed("the hardware file: " + h.error().message);
  return h;
}

Expected<Hardware> LoadHardware(const std::string& name_or_path) {
  std::vector<std::string> names;
  for (const Hardware& h : BuiltinHardware()) {
    if (h.name == name_or_path) return h;
    names.push_back(h.name);
  }
  if (name_or_path.find('/') == std::string::npos && !name_or_path.ends_with(".json")) {
    return InvalidArgument(fmt::format("unknown hardware '{}'; the built-in ones are {}, or give a JSON file",
                                       name_or_path, fmt::join(names, ", ")));
  }
  Expected<std::string> text = ReadFileAtMost(name_or_path, kMaxConfigBytes);
  if (!text) return text.error();
  Expected<Hardware> h = ReadHardware(*text);
  if (!h) return Malformed(fmt::format("{}: {}", name_or_path, h.error().message));
  return h;
}

}  // namespace seam
