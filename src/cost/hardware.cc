#include "seam/hardware.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "core/strict_json.h"
#include "seam/files.h"

namespace seam {
namespace {

// 400 Gb/s per GPU (one CX7 NIC each): nccl-tests reach about 90% of it.
// A GPU's memory in 1e9 bytes from the MiB nvidia-smi reports.
constexpr double NvidiaSmiGb(double mib) { return mib * 1048576 / 1e9; }

constexpr Link kInfiniBand400{.busbw_gbs = 45, .latency_us = 20};

// Dense peak TFLOPS (NVIDIA's datasheets print sparse figures, twice these)
// and HBM bandwidth; the efficiencies are the shares of peak that large
// GEMMs and memory-bound decode kernels reach (README, "The cost model").
constexpr double kGemmEfficiency = 0.7;
constexpr double kHbmEfficiency = 0.85;
constexpr double kStageUs = 20;
// A GPU's datasheet figures at the efficiencies and kernel time every preset shares.
constexpr Gpu Datasheet(double bf16, double fp8, double fp4, double hbm_tbs) {
  return {.tflops_bf16 = bf16,
          .tflops_fp8 = fp8,
          .tflops_fp4 = fp4,
          .hbm_tbs = hbm_tbs,
          .compute_efficiency = kGemmEfficiency,
          .memory_efficiency = kHbmEfficiency,
          .stage_us = kStageUs};
}
constexpr Gpu kH100Sxm = Datasheet(989, 1979, 0, 3.35);
constexpr Gpu kH200 = Datasheet(989, 1979, 0, 4.8);
constexpr Gpu kB200 = Datasheet(2250, 4500, 9000, 8);
constexpr Gpu kGb200 = Datasheet(2500, 5000, 10000, 8);
constexpr Gpu kH100Pcie = Datasheet(756, 1513, 0, 2);

}  // namespace

const std::vector<Hardware>& BuiltinHardware() {
  // Sources (README, "The cost model"): nccl-tests all_reduce busbw at large
  // sizes, 8 x H100 SXM5 NVLink 460-480 GB/s, 8 x H100 PCIe 35-45 GB/s;
  // DeepEP's dispatch/combine bandwidth (V2: SM90 EP 8x2 90/81 GB/s over
  // RDMA, SM100 EP8 726/740 GB/s over NVLink; V1: H800 EP8 153/158 GB/s).
  // Memory is what the driver reports (nvidia-smi memory.total, which the
  // engines size their pools from): H100 SXM and PCIe 81559 MiB, H200
  // 143771, B200 183359, GB200 189471 (the datasheets' 80, 141, 180 and 186
  // GB are these in GiB, rounded).
  static const std::vector<Hardware> kAll = {
      {.name = "h100",
       .summary = "8 x H100 SXM5 80 GB per node, NVLink 4 (NVSwitch), 400 Gb/s InfiniBand per GPU",
       .gpus_per_node = 8,
       .memory_gb = NvidiaSmiGb(81559),
       .gpu = kH100Sxm,
       .node = {.busbw_gbs = 470, .latency_us = 10},
       .network = kInfiniBand400,
       .a2a_node_gbs = 400,
       .a2a_network_gbs = 85,
       .a2a_latency_us = 25},
      {.name = "h200",
       .summary = "8 x H200 141 GB per node, NVLink 4 (NVSwitch), 400 Gb/s InfiniBand per GPU",
       .gpus_per_node = 8,
       .memory_gb = NvidiaSmiGb(143771),
       .gpu = kH200,
       .node = {.busbw_gbs = 470, .latency_us = 10},
       .network = kInfiniBand400,
       .a2a_node_gbs = 400,
       .a2a_network_gbs = 85,
       .a2a_latency_us = 25},
      {.name = "b200",
       .summary = "8 x B200 180 GB per node, NVLink 5 (NVSwitch), 400 Gb/s InfiniBand per GPU",
       .gpus_per_node = 8,
       .memory_gb = NvidiaSmiGb(183359),
       .gpu = kB200,
       .node = {.busbw_gbs = 900, .latency_us = 8},
       .network = kInfiniBand400,
       .a2a_node_gbs = 730,
       .a2a_network_gbs = 90,
       .a2a_latency_us = 20},
      {.name = "gb200",
       .summary = "GB200 NVL72: 72 GPUs of 186 GB in one NVLink 5 domain, 400 Gb/s InfiniBand per GPU",
       .gpus_per_node = 72,
       .memory_gb = NvidiaSmiGb(189471),
       .gpu = kGb200,
       .node = {.busbw_gbs = 800, .latency_us = 10},
       .network = kInfiniBand400,
       .a2a_node_gbs = 730,
       .a2a_network_gbs = 90,
       .a2a_latency_us = 20},
      {.name = "pcie",
       .summary = "8 x H100 PCIe 80 GB per node, no NVLink, 400 Gb/s InfiniBand per GPU",
       .gpus_per_node = 8,
       .memory_gb = NvidiaSmiGb(81559),
       .gpu = kH100Pcie,
       .node = {.busbw_gbs = 40, .latency_us = 15},
       .network = kInfiniBand400,
       .a2a_node_gbs = 35,
       .a2a_network_gbs = 35,
       .a2a_latency_us = 30},
  };
  return kAll;
}

double PeakFlops(const Gpu& g, double weight_bytes) {
  const double tflops = weight_bytes < 1 && g.tflops_fp4 > 0   ? g.tflops_fp4
                        : weight_bytes < 2 && g.tflops_fp8 > 0 ? g.tflops_fp8
                                                               : g.tflops_bf16;
  return tflops * 1e12;
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

// An object's keys, each one of `known`.
void CheckKeys(const json& j, const std::string& where, const std::set<std::string>& known) {
  for (const auto& [k, v] : j.items()) {
    if (known.count(k) == 0) {
      throw Failure(Malformed(where.empty() ? fmt::format("unknown key '{}'", k)
                                            : fmt::format("{}: unknown key '{}'", where, k)));
    }
  }
}

// A field over a base machine's: its number when given; without a base
// (`partial` false) every field must be given.
void Field(const json& j, const char* key, double& out, double lo, double hi, bool partial) {
  if (!partial || j.contains(key)) out = Number(j, key, lo, hi);
}

// A nested object of fields with `keys`, or null where a base keeps its own.
const json* Section(const json& j, const std::string& key, const std::set<std::string>& keys, bool partial) {
  if (!j.contains(key) && partial) return nullptr;
  if (!j.contains(key) || !j.at(key).is_object()) throw Failure(Malformed(fmt::format("{}: needs an object", key)));
  CheckKeys(j.at(key), key, keys);
  return &j.at(key);
}

Link LinkOf(const json& j, const std::string& key, Link base, bool partial) {
  const json* l = Section(j, key, {"busbw_gbs", "latency_us"}, partial);
  if (l == nullptr) return base;
  Field(*l, "busbw_gbs", base.busbw_gbs, 0.01, 1e5, partial);
  Field(*l, "latency_us", base.latency_us, 0, 1e6, partial);
  return base;
}

Gpu GpuOf(const json& j, Gpu base, bool partial) {
  const json* g = Section(
      j, "gpu",
      {"tflops_bf16", "tflops_fp8", "tflops_fp4", "hbm_tbs", "compute_efficiency", "memory_efficiency", "stage_us"},
      partial);
  if (g == nullptr) return base;
  Field(*g, "tflops_bf16", base.tflops_bf16, 0.001, 1e6, partial);
  Field(*g, "tflops_fp8", base.tflops_fp8, 0, 1e6, partial);  // 0: no fp8 tensor cores
  Field(*g, "tflops_fp4", base.tflops_fp4, 0, 1e6, partial);
  Field(*g, "hbm_tbs", base.hbm_tbs, 0.001, 1e3, partial);
  Field(*g, "compute_efficiency", base.compute_efficiency, 0.01, 1, partial);
  Field(*g, "memory_efficiency", base.memory_efficiency, 0.01, 1, partial);
  Field(*g, "stage_us", base.stage_us, 0, 1e6, partial);
  return base;
}

// The fields of a hardware file; an error names the field. With "base": a
// built-in machine's figures, each key given overriding its own.
Expected<Hardware> ReadHardware(std::string_view text) {
  StrictJson<json> parsed = ParseStrictJson<json>(text);
  if (parsed.error) {
    return Malformed(parsed.error->problem == JsonProblem::kSyntax ? "is not valid JSON" : parsed.error->message);
  }
  const json& j = parsed.value;
  if (!j.is_object()) return Malformed("is not a JSON object");
  try {
    CheckKeys(j, "",
              {"base", "name", "summary", "gpus_per_node", "memory_gb", "gpu", "node", "network", "a2a_node_gbs",
               "a2a_network_gbs", "a2a_latency_us"});
    Hardware h{.name = "custom"};
    const bool partial = j.contains("base");
    if (partial) {
      if (!j["base"].is_string()) throw Failure(Malformed("base: needs the name of a built-in machine"));
      const auto b = std::find_if(BuiltinHardware().begin(), BuiltinHardware().end(),
                                  [&](const Hardware& x) { return x.name == j["base"].get<std::string>(); });
      if (b == BuiltinHardware().end()) {
        throw Failure(Malformed(fmt::format("base: '{}' is not a built-in machine", j["base"].get<std::string>())));
      }
      h = *b;
    }
    double gpus = h.gpus_per_node;
    Field(j, "gpus_per_node", gpus, 1, 4096, partial);
    if (gpus != std::floor(gpus)) throw Failure(Malformed("gpus_per_node: is not a whole number"));
    h.gpus_per_node = static_cast<int>(gpus);
    Field(j, "memory_gb", h.memory_gb, 0.001, 1e5, partial);
    h.gpu = GpuOf(j, h.gpu, partial);
    h.node = LinkOf(j, "node", h.node, partial);
    h.network = LinkOf(j, "network", h.network, partial);
    Field(j, "a2a_node_gbs", h.a2a_node_gbs, 0.01, 1e5, partial);
    Field(j, "a2a_network_gbs", h.a2a_network_gbs, 0.01, 1e5, partial);
    Field(j, "a2a_latency_us", h.a2a_latency_us, 0, 1e6, partial);
    if (j.contains("name") && j["name"].is_string()) h.name = j["name"].get<std::string>();
    if (j.contains("summary") && j["summary"].is_string()) h.summary = j["summary"].get<std::string>();
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
