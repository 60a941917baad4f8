// The dtypes and layer splits both engines derive from a launch: the
// activations (--dtype), the weights (--quantization or the checkpoint's
// quantization_config), the KV cache (--kv-cache-dtype), and the layers of
// each pipeline rank from an environment partition.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <numeric>

#include "engine/translate.h"
#include "seam/files.h"

namespace seam {

Expected<CheckpointQuant> CheckpointQuantOf(const std::string& config_path) {
  Expected<std::string> text = ReadFileAtMost(config_path, kMaxConfigBytes);
  if (!text) return text.error();
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  CheckpointQuant q;
  if (!j.is_object() || !j.contains("quantization_config")) return q;
  const nlohmann::json& c = j["quantization_config"];
  if (!c.is_object()) return q;
  if (c.contains("quant_method") && c["quant_method"].is_string()) q.method = c["quant_method"].get<std::string>();
  if (c.contains("weight_block_size") && c["weight_block_size"].is_array()) {
    for (const nlohmann::json& b : c["weight_block_size"]) {
      if (!b.is_number_integer() || b.get<int64_t>() < 1 || b.get<int64_t>() > (1 << 20)) return q;
      q.weight_block.push_back(b.get<int>());
    }
  }
  return q;
}

namespace engine {

Expected<WireDtype> DtypeOf(const EngineLaunch& l, std::vector<std::string>& notes) {
  const std::string_view d = l.dtype;
  if (d == "auto") {
    notes.push_back("--dtype auto: bf16 activations, the dtype the checkpoints seam reads declare");
    return WireDtype::kBf16;
  }
  if (d == "bfloat16") return WireDtype::kBf16;
  if (d == "half" || d == "float16") return WireDtype::kFp16;
  if (d == "float" || d == "float32") return WireDtype::kFp32;
  return Refuses(l.engine, fmt::format("argument --dtype: invalid choice: '{}' (choose from auto, half, float16, "
                                       "bfloat16, float, float32)",
                                       l.dtype));
}

std::string QuantMethodOf(const EngineLaunch& l, const CheckpointQuant& checkpoint) {
  if (l.quantization == "unquant") return "";
  return l.quantization.empty() ? checkpoint.method : l.quantization;
}

WeightFormat WeightsOf(const EngineLaunch& l, const CheckpointQuant& checkpoint, WireDtype act,
                       std::vector<std::string>& notes) {
  if (l.quantization == "unquant") notes.push_back("--quantization unquant: the weights load unquantized");
  const std::string method = QuantMethodOf(l, checkpoint);
  const std::string from = l.quantization.empty() ? "the checkpoint's quantization_config" : "--quantization";
  if (method.empty()) return {std::string(Name(act)), RowBytes(act, 1)};
  if (method == "fp8" || method == "w8a8_fp8" || method == "modelopt_fp8" || method == "fbgemm_fp8") {
    // An fp32 scale per block of weights (per row without a block).
    const double per_scale = checkpoint.weight_block.size() == 2
                                 ? static_cast<double>(checkpoint.weight_block[0]) * checkpoint.weight_block[1]
                                 : 0;
    notes.push_back(fmt::format(
        "{}: fp8 weights{}", from,
        per_scale > 0 ? fmt::format(", scaled per {}x{} block", checkpoint.weight_block[0], checkpoint.weight_block[1])
                      : ""));
    return {"fp8", per_scale > 0 ? 1 + 4 / per_scale : 1};
  }
  if (method == "mxfp4") {
    notes.push_back(fmt::format(
        "{}: mxfp4 weights (4 bits and a shared 8-bit scale per 32); seam counts every weight at 0.53 bytes", from));
    return {"mxfp4", 0.5 + 1.0 / 32};
  }
  if (method == "modelopt_fp4" || method == "nvfp4") return {"nvfp4", 0.5 + 1.0 / 16};
  if (method == "w8a8_int8") return {"int8", 1};
  if (method == "mxfp8") return {"mxfp8", 1 + 1.0 / 32};
  if (method == "awq" || method == "gptq" || method == "awq_marlin" || method == "gptq_marlin" ||
      method == "moe_wna16") {
    return {"int4", 0.5 + 4.0 / 128};  // a 16-bit scale and zero point per 128
  }
  notes.push_back(
      fmt::format("{}: seam does not know the bytes a parameter takes in '{}'; give seam's "
                  "--weight-dtype to compare memory",
                  from, Printable(method)));
  return {std::string(method), 0};
}

Expected<std::optional<WireDtype>> KvOf(const EngineLaunch& l, WireDtype act, std::vector<std::string_view> choices,
                                        std::vector<std::string>& notes) {
  const std::string_view k = l.kv_cache_dtype;
  if (!choices.empty() && std::find(choices.begin(), choices.end(), k) == choices.end()) {
    return Refuses(l.engine, fmt::format("argument --kv-cache-dtype: invalid choice: '{}' (choose from {})",
                                         Printable(k), fmt::join(choices, ", ")));
  }
  if (k == "auto") return std::optional(act);
  if (k.starts_with("fp8") || k == "mxfp8") return std::optional(WireDtype::kFp8);
  if (k == "bf16" || k == "bfloat16") return std::optional(WireDtype::kBf16);
  if (k == "float16") return std::optional(WireDtype::kFp16);
  notes.push_back(fmt::format("--kv-cache-dtype {}: seam counts a KV cache in fp32, bf16, fp16 or fp8 only",
                              Printable(l.kv_cache_dtype)));
  return std::optional<WireDtype>();
}

Expected<std::vector<int>> PartitionOf(const EngineLaunch& l, std::string_view env, int pp, int layers) {
  std::vector<int> counts;
  std::string_view rest = l.pp_partition;
  while (true) {
    const size_t comma = std::min(rest.find(','), rest.size());
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    int n = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || n < 1 ||
        counts.size() >= kMaxPartitions) {
      return Refuses(l.engine, fmt::format("{}: Invalid partition string: {}", env, Printable(l.pp_partition)));
    }
    counts.push_back(n);
    if (comma == rest.size()) break;
    rest = rest.substr(comma + 1);
  }
  if (static_cast<int>(counts.size()) != pp) {
    return Refuses(l.engine, fmt::format("{}: len(partitions)={} does not match pp_size={}.", env, counts.size(), pp));
  }
  const long total = std::accumulate(counts.begin(), counts.end(), 0L);
  if (total != layers) {
    return Refuses(l.engine,
                   fmt::format("{}: sum(partitions)={} does not match num_hidden_layers={}.", env, total, layers));
  }
  return counts;
}

}  // namespace engine
}  // namespace seam
