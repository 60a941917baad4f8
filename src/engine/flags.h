// Reading an engine's command line from a table of its flags: the ones that
// shape the plan (with a setter) and the ones seam reads past (with why).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "seam/engine.h"

namespace seam::engine {

enum class Arity { kSwitch, kValue };

struct FlagSpec {
  std::vector<std::string_view> names;  // the engine's aliases; the first is how seam names it
  Arity arity = Arity::kValue;
  // Sets the launch from the value ("" for a switch); empty for a flag seam
  // does not model.
  std::function<Status(EngineLaunch&, std::string_view)> set;
  std::string_view why;  // a flag seam does not model: why the plan does not depend on it
};

// Why the plan does not depend on a flag, by kind.
inline constexpr std::string_view kServing = "serving and scheduling, not communication between ranks";
inline constexpr std::string_view kLimits = "memory and batch limits: a plan counts bytes per token";
inline constexpr std::string_view kKernels = "kernels and compilation: the same collectives at the same seams";
inline constexpr std::string_view kQuantised =
    "weight and KV-cache formats: the activations on the wire are --dtype's (seam's --dispatch-dtype for an fp8 "
    "dispatch)";
inline constexpr std::string_view kPlacement = "where ranks run: the plan is the same on any placement";
inline constexpr std::string_view kExperts = "expert placement and balancing: each MoE's boundaries are the same";
inline constexpr std::string_view kSpeculative = "speculative decoding: a draft model is planned on its own";

// Reads `args` against `flags`. `positional` takes a bare word (vLLM's
// `serve MODEL`); without it a bare word is an error.
Expected<EngineLaunch> ReadFlags(Engine engine, const std::vector<FlagSpec>& flags,
                                 const std::vector<std::string>& args,
                                 const std::function<Status(EngineLaunch&, std::string_view)>& positional = {});

// Setters for the common kinds of value.
std::function<Status(EngineLaunch&, std::string_view)> SetSize(int EngineLaunch::*field, std::string_view flag);
std::function<Status(EngineLaunch&, std::string_view)> SetText(std::string EngineLaunch::*field);
std::function<Status(EngineLaunch&, std::string_view)> SetSwitch(bool EngineLaunch::*field);

// The serving flags both engines share (ports, memory, kernels, formats).
std::vector<FlagSpec> CommonIgnoredFlags();

}  // namespace seam::engine
