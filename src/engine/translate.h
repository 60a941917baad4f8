// Each engine's flag table and translation, and what they share.
#pragma once

#include <string_view>
#include <vector>

#include "engine/flags.h"

namespace seam::engine {

std::vector<FlagSpec> SglangFlags();
std::vector<FlagSpec> VllmFlags();
Expected<EngineTranslation> TranslateSglang(const EngineLaunch& l, const Model& m);
Expected<EngineTranslation> TranslateVllm(const EngineLaunch& l, const Model& m);

// An error the engine stops with at start-up, naming the engine and its reason.
Error Refuses(Engine e, std::string_view reason);
// --dtype (auto, bfloat16, half, float16, float, float32) as a wire dtype;
// auto is bf16, the dtype the checkpoints seam reads declare.
Expected<WireDtype> DtypeOf(const EngineLaunch& l, std::vector<std::string>& notes);
// The checks both engines make on the model's sizes at start-up (heads, KV
// heads, FFN and expert widths over their groups), with the engine named.
Status CheckModelSplits(Engine e, const Model& m, const ParallelConfig& cfg);
// Fills in the seam flags and validates the configuration.
Expected<EngineTranslation> Finish(EngineTranslation t);

}  // namespace seam::engine
