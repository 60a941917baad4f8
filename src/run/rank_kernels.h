// The kernels a rank's plan runs with, built before the run: one set per
// stage it holds (the attention, mixer, FFN, MoE or linear map, and with
// hyper-connections the stage's stream mixer), and the stream head the
// final norm reads through. Each is built once, with this rank's shard of
// the weights, and typed: the interpreter asks for the kernel its step
// needs and a missing one is a bug.
#pragma once

#include <fmt/format.h>

#include <map>
#include <memory>

#include "numerics/mixer.h"
#include "numerics/stages.h"
#include "numerics/streams.h"
#include "run/interpreter.h"
#include "seam/topology.h"

namespace seam::exec {

struct StageKernels {
  std::unique_ptr<AttentionKernel> attention;
  std::unique_ptr<LinearKernel> linear;
  std::unique_ptr<MixerKernel> mixer;
  std::unique_ptr<FfnKernel> ffn;
  std::unique_ptr<MoeKernel> moe;
  std::unique_ptr<StreamKernel> streams;  // with more than one residual stream
};

class RankKernels {
 public:
  RankKernels(const RunContext& ctx, const LinePlan& line, const ParallelConfig& cfg, RankCoord me);

  const AttentionKernel& Attention(int stage) const { return Need(Of(stage).attention, stage, "attention"); }
  const LinearKernel& Linear(int stage) const { return Need(Of(stage).linear, stage, "linear"); }
  const MixerKernel& Mixer(int stage) const { return Need(Of(stage).mixer, stage, "mixer"); }
  const FfnKernel& Ffn(int stage) const { return Need(Of(stage).ffn, stage, "FFN"); }
  const MoeKernel& Moe(int stage) const { return Need(Of(stage).moe, stage, "MoE"); }
  const StreamKernel& Streams(int stage) const { return Need(Of(stage).streams, stage, "stream"); }
  const StreamKernel& Head() const { return Need(head_, -1, "stream head"); }

 private:
  const StageKernels& Of(int stage) const;
  template <class K>
  static const K& Need(const std::unique_ptr<K>& k, int stage, const char* what) {
    SEAM_CHECK(k != nullptr, fmt::format("stage {} has no {} kernel built", stage, what));
    return *k;
  }

  std::map<int, StageKernels> stages_;
  std::unique_ptr<StreamKernel> head_;
};

}  // namespace seam::exec
