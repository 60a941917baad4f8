// Writing a configuration back as an engine's launch line: what each
// engine's writer fills in, and what they share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seam/engine.h"

namespace seam::engine {

// The knobs of a request an engine may have no flag for.
enum class Knob { kDenseTp, kMoe, kEp, kDpLmHead, kInputScattered, kReduction, kDispatch, kKv };

// A knob the line cannot set, and why: the line runs the engine's own
// choice instead, refused where that changes the plan.
struct Unwritten {
  Knob knob;
  std::string why;
};

// A launch being written, before it is joined into lines.
struct Writing {
  std::vector<std::string> env;                    // NAME=value before the command
  std::vector<std::string> words;                  // the command and its flags
  std::vector<std::vector<std::string>> per_node;  // each node's own flags, node 0 first
  std::vector<Unwritten> cannot;
  std::vector<std::string> notes;

  void Cannot(Knob knob, std::string why) { cannot.push_back({knob, std::move(why)}); }
  void Add(std::string_view flag) { words.emplace_back(flag); }
  void Add(std::string_view flag, std::string value) {
    words.emplace_back(flag);
    words.push_back(std::move(value));
  }
};

Expected<Writing> WriteSglang(const EmitRequest& r, const Model& m);
Expected<Writing> WriteVllm(const EmitRequest& r, const Model& m, const CheckpointQuant& q);

// "SGLang cannot run this configuration: WHY": a request no line of the
// engine expresses.
Error Cannot(Engine e, std::string_view why);
// The path the line names: a config.json's directory, else the path given.
std::string ModelPathOf(const std::string& path);
// The layers of each pipeline rank the configuration gives the model.
std::vector<int> LayerCounts(const ParallelConfig& cfg, int layers);
// --dtype for the activations (nothing for bf16, what `auto` reads as).
void AddDtype(const EmitRequest& r, Writing& w);
// --kv-cache-dtype in the engine's spelling of each dtype (`spelled` by
// WireDtype: fp32, bf16, fp16, fp8; "" where the engine has none).
void AddKvDtype(const EmitRequest& r, const std::vector<std::string_view>& spelled, Writing& w);

}  // namespace seam::engine
