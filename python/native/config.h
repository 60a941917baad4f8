// The keyword arguments of seam.plan, seam.run and seam.compare as seam's
// values, checked as the command line checks its flags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "seam/model.h"
#include "seam/topology.h"
#include "seam/wire.h"

namespace seam::python {

struct ConfigArgs {
  int tp = 1;
  int attn_dp = 1;
  int dense_tp = 0;  // 0: the whole TP group
  int ep = 0;        // 0: the whole TP group
  std::string moe = "tp";
  std::string reduction = "ar";
  bool input_scattered = false;
  bool dp_lm_head = false;
  int pp = 0;  // 0: one rank, or as many as pp_split names
  std::vector<int> pp_split;
};
ParallelConfig ConfigOf(const ConfigArgs& a);  // raises seam.BadInput

// A number of seconds in [kMinSeconds, kMaxSeconds] (seam/limits.h), as the
// command line reads --timeout and --max-seconds; raises seam.BadInput
// naming `name` for NaN, an infinity, zero or less, or more than a day.
void CheckSeconds(const char* name, double value);

WireDtypes WireOf(const std::string& act, const std::optional<std::string>& dispatch);

// A catalogue name or a config.json path (exactly one), cut to `layers`.
Model ModelOf(const std::string& name, const std::string& hf_config, int layers);

}  // namespace seam::python
