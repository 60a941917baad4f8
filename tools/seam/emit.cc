// `--emit sglang|vllm`: a configuration written as the engine's launch line,
// one per node, with what the reader must know said on stderr.
#include <fmt/format.h>

#include <iostream>

#include "cli.h"
#include "seam/printable.h"
#include "seam/wire.h"

namespace seam::cli {

Expected<std::string> QuantizationFor(double weight_bytes, const CheckpointQuant& checkpoint, WireDtype act) {
  const bool fp8_checkpoint = checkpoint.method == "fp8";
  if (weight_bytes == 1) return std::string(fp8_checkpoint ? "" : "fp8");
  if (!checkpoint.method.empty()) {
    return InvalidArgument(
        fmt::format("the checkpoint's weights are {} (its quantization_config) and the engines "
                    "load them so: --weight-dtype {} has no launch flag",
                    Printable(checkpoint.method), weight_bytes == 4 ? "fp32" : "bf16"));
  }
  if (weight_bytes != RowBytes(act, 1)) {
    return InvalidArgument(
        fmt::format("the engines load unquantized weights in the activations' dtype ({}): "
                    "--weight-dtype {} has no launch flag",
                    Name(act), weight_bytes == 4 ? "fp32" : "bf16"));
  }
  return std::string();
}

Expected<std::string> EmitModelPath(const std::string& model, const std::string& hf_config, int layers) {
  if (layers > 0) {
    return InvalidArgument("--emit writes a line for the whole model, and the engine runs every layer: drop --layers");
  }
  if (hf_config.empty()) {
    return InvalidArgument(
        fmt::format("--emit names the model's config in the launch line; catalogue model '{}' is "
                    "a tiny shape: give --hf-config (see `seam models` for its real config)",
                    Printable(model)));
  }
  return hf_config;
}

Expected<EngineLines> EmitLines(const EmitRequest& r, const Model& m) {
  Expected<CheckpointQuant> checkpoint = CheckpointQuantOf(r.model_path);
  if (!checkpoint) return checkpoint.error();
  return EmitLaunch(r, m, *checkpoint);
}

int PrintLaunch(const EmitRequest& r, const Model& m) {
  Expected<EngineLines> lines = EmitLines(r, m);
  if (!lines) return Fail(lines.error());
  for (const std::string& n : lines->notes) std::cerr << "seam: " << n << "\n";
  for (size_t i = 0; i < lines->lines.size(); ++i) {
    if (lines->lines.size() > 1) std::cout << fmt::format("# node {} of {}\n", i, lines->lines.size());
    std::cout << lines->lines[i] << "\n";
  }
  return kOk;
}

}  // namespace seam::cli
