// Each engine's flag table and translation, and what they share.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "seam/engine.h"
#include "seam/printable.h"

namespace seam::engine {

Expected<EngineTranslation> TranslateSglang(const EngineLaunch& l, const Model& m, const CheckpointQuant& q);
Expected<EngineTranslation> TranslateVllm(const EngineLaunch& l, const Model& m, const CheckpointQuant& q);

// An error the engine stops with at start-up, naming the engine and its reason.
Error Refuses(Engine e, std::string_view reason);
// --dtype (auto, bfloat16, half, float16, float, float32) as a wire dtype;
// auto is bf16, the dtype the checkpoints seam reads declare.
Expected<WireDtype> DtypeOf(const EngineLaunch& l, std::vector<std::string>& notes);
// The quantization method the engine loads the weights with: --quantization,
// else the checkpoint's ("" unquantized; --quantization unquant opts out).
std::string QuantMethodOf(const EngineLaunch& l, const CheckpointQuant& checkpoint);
// The weights the engine loads: --quantization, else the checkpoint's
// method, else the activations' dtype; bytes 0 where seam does not know them.
WeightFormat WeightsOf(const EngineLaunch& l, const CheckpointQuant& checkpoint, WireDtype act,
                       std::vector<std::string>& notes);
// --kv-cache-dtype as the dtype seam counts the cache in ("auto": the
// activations'); none, with a note, for a format seam cannot count.
// `choices`, when not empty, are the values the engine's parser takes.
Expected<std::optional<WireDtype>> KvOf(const EngineLaunch& l, WireDtype act, std::vector<std::string_view> choices,
                                        std::vector<std::string>& notes);
// The layers per pipeline rank an environment partition ("N,N,...", from
// `env`) gives, with the engine's own errors (count, sum, words).
inline constexpr size_t kMaxPartitions = 65536;
Expected<std::vector<int>> PartitionOf(const EngineLaunch& l, std::string_view env, int pp, int layers);
// vLLM's get_pp_indices: every rank layers / pp layers, the remainder one
// each to the ranks before the last, from the second-to-last back (the last
// rank holds the norm and the LM head). pp at least 2 and at most layers.
std::vector<int> VllmLayerSplit(int layers, int pp);
// The checks both engines make on the model's sizes at start-up (heads, KV
// heads, FFN and expert widths over their groups), with the engine named.
Status CheckModelSplits(Engine e, const Model& m, const ParallelConfig& cfg);
// Decode context parallelism as both engines take it: --dcp-comm-backend
// one of `backends` (the first the default), a cache split token by token;
// seam's dcp, with what differs from the engine said.
Status ReadDecodeContextParallel(const EngineLaunch& l, std::span<const std::string_view> backends,
                                 EngineTranslation& t);
// Fills in the seam flags and validates the configuration.
Expected<EngineTranslation> Finish(EngineTranslation t);

}  // namespace seam::engine
