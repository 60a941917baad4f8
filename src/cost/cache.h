// What an attention or mixer stage keeps per token and per sequence on one
// rank: the memory model counts it, the work model reads it every decode step.
#pragma once

#include "seam/cost.h"
#include "seam/model.h"
#include "seam/topology.h"

namespace seam {

// Bytes per token and per sequence an attention or mixer stage caches on
// one rank.
struct CacheRow {
  double per_token = 0;
  double per_sequence = 0;
};

// The bytes of an element of each cache: the KV cache's dtype, and a
// recurrent mixer's conv window and state as the engine keeps them
// (SGLang: the conv window in bf16 and the state in fp32, mamba2_state_dtype;
// vLLM: both in the model's dtype, MambaStateDtypeCalculator).
struct CacheBytes {
  double kv = 2;
  double conv = 2;
  double state = 4;
};
CacheBytes CacheBytesOf(WireDtype kv, MemoryFill fill);

// Attention: K and V of the KV heads a rank holds (one each, replicated,
// once attention TP exceeds them), or MLA's latent whole on every rank.
// A mixer: its conv window over the (heads x head width + 2 x groups x
// state) channels and its heads' states, split over attention TP by head.
CacheRow CacheOf(const StageDecl& d, const ModelDims& dims, const ParallelConfig& cfg, const CacheBytes& b);

}  // namespace seam
