// SGLang's launch flags (python -m sglang.launch_server) and what its start-up
// accepts. Its --tp-size is the whole TP group; --enable-dp-attention splits
// it into --dp-size attention groups; --moe-dense-tp-size 1 runs dense FFNs
// data-parallel; an a2a backend dispatches MoE rows over the whole TP group.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "engine/translate.h"

namespace seam::engine {
namespace {

constexpr std::array<std::string_view, 6> kA2aBackends = {"none", "deepep",        "mooncake",
                                                          "mori", "ascend_fuseep", "flashinfer"};

Status SetOptionalSize(std::optional<int>& out, std::string_view flag, std::string_view v) {
  EngineLaunch scratch;
  SEAM_RETURN_IF_ERROR(SetSize(&EngineLaunch::tp, flag)(scratch, v));
  out = scratch.tp;
  return Status::Ok();
}

Status CheckExperts(const EngineLaunch& l, const Model& m, bool a2a, std::vector<std::string>& notes) {
  const bool moe = HasStageKind(m, StageKind::kSparseFfn);
  if (a2a) {
    if (l.ep && *l.ep != l.tp) {
      return Refuses(l.engine, fmt::format("--moe-a2a-backend {} runs expert parallel over the whole TP group: "
                                           "--ep-size must equal --tp-size {} (got {})",
                                           l.a2a_backend, l.tp, *l.ep));
    }
    if (!moe)
      notes.push_back(
          fmt::format("--moe-a2a-backend {}: the model has no MoE, so nothing is dispatched", l.a2a_backend));
    return Status::Ok();
  }
  if (!l.ep || *l.ep == 1) return Status::Ok();
  if (l.tp % *l.ep != 0) {
    return Refuses(l.engine, fmt::format("--tp-size {} is not divisible by --ep-size {}", l.tp, *l.ep));
  }
  if (moe && m.dims && m.dims->experts % *l.ep != 0) {
    return Refuses(l.engine,
                   fmt::format("the model's {} experts do not split over --ep-size {}", m.dims->experts, *l.ep));
  }
  notes.push_back(fmt::format(
      "--ep-size {}: experts spread over {} groups of {} ranks; each MoE still leaves a partial sum over the whole "
      "TP group, so its boundaries are TP-MoE's (--moe tp)",
      *l.ep, *l.ep, l.tp / *l.ep));
  return Status::Ok();
}

}  // namespace

std::vector<FlagSpec> SglangFlags() {
  using enum Arity;
  std::vector<FlagSpec> f = {
      {{"--model-path", "--model"}, kValue, SetText(&EngineLaunch::model_path), {}},
      {{"--tp-size", "--tensor-parallel-size", "--tp"}, kValue, SetSize(&EngineLaunch::tp, "--tp-size"), {}},
      {{"--dp-size", "--data-parallel-size", "--dp"}, kValue, SetSize(&EngineLaunch::dp, "--dp-size"), {}},
      {{"--pp-size", "--pipeline-parallel-size", "--pp"}, kValue, SetSize(&EngineLaunch::pp, "--pp-size"), {}},
      {{"--ep-size", "--expert-parallel-size", "--ep"},
       kValue,
       [](EngineLaunch& l, std::string_view v) { return SetOptionalSize(l.ep, "--ep-size", v); },
       {}},
      {{"--enable-dp-attention"}, kSwitch, SetSwitch(&EngineLaunch::dp_attention), {}},
      {{"--moe-dense-tp-size"},
       kValue,
       [](EngineLaunch& l, std::string_view v) { return SetOptionalSize(l.moe_dense_tp, "--moe-dense-tp-size", v); },
       {}},
      {{"--moe-a2a-backend"}, kValue, SetText(&EngineLaunch::a2a_backend), {}},
      {{"--enable-attn-tp-input-scattered"}, kSwitch, SetSwitch(&EngineLaunch::input_scattered), {}},
      {{"--enable-dp-lm-head"}, kSwitch, SetSwitch(&EngineLaunch::dp_lm_head), {}},
      {{"--dtype"}, kValue, SetText(&EngineLaunch::dtype), {}},
      {{"--nnodes"}, kValue, SetSize(&EngineLaunch::nnodes, "--nnodes"), {}},
      {{"--node-rank"}, kValue, {}, kPlacement},
      {{"--dist-init-addr"}, kValue, {}, kPlacement},
      {{"--device"}, kValue, {}, kPlacement},
      {{"--deepep-mode"}, kValue, {}, kKernels},
      {{"--moe-runner-backend"}, kValue, {}, kKernels},
      {{"--enable-two-batch-overlap"}, kSwitch, {}, kKernels},
      {{"--ep-num-redundant-experts"}, kValue, {}, kExperts},
      {{"--disable-radix-cache"}, kSwitch, {}, kServing},
      {{"--enable-p2p-check"}, kSwitch, {}, kServing},
      {{"--schedule-policy"}, kValue, {}, kServing},
      {{"--reasoning-parser"}, kValue, {}, kServing},
      {{"--tool-call-parser"}, kValue, {}, kServing},
      {{"--watchdog-timeout"}, kValue, {}, kServing},
      {{"--enable-mixed-chunk"}, kSwitch, {}, kLimits},
      {{"--speculative-algorithm"}, kValue, {}, kSpeculative},
      {{"--speculative-draft-model-path"}, kValue, {}, kSpeculative},
      {{"--speculative-num-steps"}, kValue, {}, kSpeculative},
      {{"--speculative-eagle-topk"}, kValue, {}, kSpeculative},
      {{"--speculative-num-draft-tokens"}, kValue, {}, kSpeculative},
  };
  for (FlagSpec& c : CommonIgnoredFlags()) f.push_back(std::move(c));
  return f;
}

Expected<EngineTranslation> TranslateSglang(const EngineLaunch& l, const Model& m) {
  EngineTranslation t;
  Expected<WireDtype> act = DtypeOf(l, t.notes);
  if (!act) return act.error();
  t.wire = {.act = *act, .dispatch = *act};
  ParallelConfig& c = t.config;
  c.tp = l.tp;
  c.pp = l.pp;
  if (l.dp_attention) {
    if (l.tp % l.dp != 0) {
      return Refuses(l.engine, fmt::format("--tp-size {} is not divisible by --dp-size {}: --enable-dp-attention "
                                           "splits the TP group into dp-size attention groups",
                                           l.tp, l.dp));
    }
    c.attn_dp = l.dp;
  } else if (l.dp > 1) {
    t.notes.push_back(fmt::format(
        "--dp-size {} without --enable-dp-attention: {} replicas of the model, each planned alone", l.dp, l.dp));
    t.replicas = l.dp;
  }
  if (l.moe_dense_tp) {
    if (*l.moe_dense_tp != 1) {
      return Refuses(l.engine, fmt::format("--moe-dense-tp-size takes 1 (or is left out: the whole TP group), not {}",
                                           *l.moe_dense_tp));
    }
    c.dense_tp = 1;
  }
  const std::string backend = l.a2a_backend.empty() ? "none" : l.a2a_backend;
  if (std::find(kA2aBackends.begin(), kA2aBackends.end(), backend) == kA2aBackends.end()) {
    return InvalidArgument(fmt::format("--moe-a2a-backend: unknown backend '{}'; SGLang's are {}", backend,
                                       fmt::join(kA2aBackends, ", ")));
  }
  const bool a2a = backend != "none";
  SEAM_RETURN_IF_ERROR(CheckExperts(l, m, a2a, t.notes));
  if (a2a && HasStageKind(m, StageKind::kSparseFfn)) c.moe = MoeMode::kA2a;
  c.input_scattered = l.input_scattered;
  if (l.dp_lm_head) {
    if (!l.dp_attention) return Refuses(l.engine, "--enable-dp-lm-head needs --enable-dp-attention");
    c.dp_lm_head = c.attn_dp > 1;  // one DP group: the attention-TP group is the TP group
  }
  if (l.nnodes > 1) t.notes.push_back(fmt::format("--nnodes {}: the plan is the same on any placement", l.nnodes));
  SEAM_RETURN_IF_ERROR(Validate(c));
  SEAM_RETURN_IF_ERROR(CheckModelSplits(l.engine, m, c));
  return Finish(std::move(t));
}

}  // namespace seam::engine
