// seam/disaggregate.h — serving with prefill and decode on separate GPUs:
// a prefill pool runs every prompt, sends its KV cache over the network to
// a decode pool, which decodes every request, each pool with its own
// layout (SGLang's --disaggregation-mode, vLLM's KV-transfer connectors).
//
// Each split of the GPUs into whole-node pools (any split on one node) is
// priced from single-instance comparisons (seam/compare.h) of every size
// a pool can hold copies of: the prefill pool by the prompts a GPU starts
// a second within the TTFT target (its prefill and the KV transfer), the
// decode pool by the output tokens a GPU makes a second at its best batch
// within the TPOT target (no prefill between its steps). The split serves
// at the slower pool's pace.
//
//   CompareOptions o = ...;  ApplyAsk({.isl = 4096, .osl = 1024, .tpot = 0.05}, o);
//   Expected<std::vector<Disaggregated>> d = Disaggregate(model, o);
#pragma once

#include <vector>

#include "seam/compare.h"

namespace seam {

struct Pool {
  Candidate layout;   // one instance at its batch (decode) or its prompt (prefill)
  int gpus = 0;       // the pool's GPUs
  int instances = 0;  // copies of the layout in it
};

struct Disaggregated {
  Pool prefill;
  Pool decode;
  double kv_bytes = 0;             // a prompt's KV cache (and recurrent state) sent to the decode pool
  double kv_transfer_seconds = 0;  // over the prefill instance's NICs
  double ttft_seconds = 0;         // the prefill and the transfer
  double tpot_seconds = 0;         // the decode step
  double requests_per_second = 0;  // the slower pool's pace
  double tokens_per_gpu = 0;       // output tokens a second over every GPU
  bool meets = true;
};

// Every split, best first (those within the targets first, then by output
// tokens per GPU). Needs requests' lengths (isl and osl through ApplyAsk)
// and at least two GPUs; a pool size no layout fits is left out.
Expected<std::vector<Disaggregated>> Disaggregate(const Model& m, const CompareOptions& o);

// About how long Disaggregate takes: a one-replica comparison of each
// instance size (seam/compare.h EstimatedSeconds).
double EstimatedDisaggregateSeconds(const Model& m, const CompareOptions& o);

// A disaggregated split as `seam compare --disaggregate --format json`
// writes it.
nlohmann::ordered_json DisaggregatedJson(const Disaggregated& d, int rank);

}  // namespace seam
