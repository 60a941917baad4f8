// What a rank keeps of each request between the steps of a generation:
// per stage it holds, the attention's cache entries (its KV heads, or MLA's
// latent whole) and a mixer's conv and recurrent state, for the requests
// its DP group serves. A plain forward pass keeps one for its one step.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "numerics/request_cache.h"

namespace seam::exec {

class RankCache {
 public:
  // The request's cache at an attention stage, empty at its first use;
  // under decode context parallelism the positions residue mod stride.
  CacheRows& Attention(int stage, int request, int width, int stride = 1, int residue = 0);
  // The request's state at a mixer stage for its tokens from `position`
  // to `position + count`: fresh at position 0, else the one its earlier
  // tokens left (a gap or a repeat is a bug).
  MixerKernel::State& Mixer(int stage, int request, const MixerKernel& k, int position, int count);
  // A finished request's memory, freed.
  void Drop(int request);
  int64_t bytes() const;

 private:
  struct MixerState {
    MixerKernel::State state;
    int next = 0;  // the position its next token must have
  };
  std::map<std::pair<int, int>, CacheRows> attention_;  // (request, stage)
  std::map<std::pair<int, int>, MixerState> mixers_;
};

}  // namespace seam::exec
