// vLLM's serve flags (vllm serve MODEL ...) and what its start-up accepts.
// Its --tensor-parallel-size is per data-parallel rank: a MoE model under
// --data-parallel-size runs attention and dense layers on each DP rank's TP
// group and its MoE layers across all DP x TP ranks (the experts spread
// over them with --enable-expert-parallel). A model without MoE under DP is
// independent replicas.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "engine/translate.h"

namespace seam::engine {
namespace {

constexpr std::array<std::string_view, 6> kBackends = {
    "allgather_reducescatter", "naive", "pplx", "deepep_high_throughput", "deepep_low_latency", "flashinfer_all2allv"};

bool DispatchesA2a(std::string_view backend) {
  return backend == "pplx" || backend.starts_with("deepep") || backend == "flashinfer_all2allv";
}

}  // namespace

std::vector<FlagSpec> VllmFlags() {
  using enum Arity;
  std::vector<FlagSpec> f = {
      {{"--model"}, kValue, SetText(&EngineLaunch::model_path), {}},
      {{"--tensor-parallel-size", "-tp"}, kValue, SetSize(&EngineLaunch::tp, "--tensor-parallel-size"), {}},
      {{"--data-parallel-size", "-dp"}, kValue, SetSize(&EngineLaunch::dp, "--data-parallel-size"), {}},
      {{"--pipeline-parallel-size", "-pp"}, kValue, SetSize(&EngineLaunch::pp, "--pipeline-parallel-size"), {}},
      {{"--enable-expert-parallel"}, kSwitch, SetSwitch(&EngineLaunch::expert_parallel), {}},
      {{"--all2all-backend"}, kValue, SetText(&EngineLaunch::a2a_backend), {}},
      {{"--dtype"}, kValue, SetText(&EngineLaunch::dtype), {}},
      {{"--data-parallel-size-local"}, kValue, {}, kPlacement},
      {{"--data-parallel-address"}, kValue, {}, kPlacement},
      {{"--data-parallel-rpc-port"}, kValue, {}, kPlacement},
      {{"--data-parallel-start-rank"}, kValue, {}, kPlacement},
      {{"--data-parallel-backend"}, kValue, {}, kPlacement},
      {{"--distributed-executor-backend"}, kValue, {}, kPlacement},
      {{"--enable-prefix-caching"}, kSwitch, {}, kServing},
      {{"--no-enable-prefix-caching"}, kSwitch, {}, kServing},
      {{"--disable-log-requests"}, kSwitch, {}, kServing},
      {{"--enable-chunked-prefill"}, kSwitch, {}, kLimits},
      {{"--block-size"}, kValue, {}, kLimits},
      {{"--swap-space"}, kValue, {}, kLimits},
      {{"--compilation-config", "-O"}, kValue, {}, kKernels},
      {{"--enable-dbo"}, kSwitch, {}, kKernels},
      {{"--speculative-config"}, kValue, {}, kSpeculative},
  };
  for (FlagSpec& c : CommonIgnoredFlags()) f.push_back(std::move(c));
  return f;
}

Expected<EngineTranslation> TranslateVllm(const EngineLaunch& l, const Model& m) {
  EngineTranslation t;
  Expected<WireDtype> act = DtypeOf(l, t.notes);
  if (!act) return act.error();
  t.wire = {.act = *act, .dispatch = *act};
  const std::string backend = l.a2a_backend.empty() ? "allgather_reducescatter" : l.a2a_backend;
  if (std::find(kBackends.begin(), kBackends.end(), backend) == kBackends.end()) {
    return InvalidArgument(
        fmt::format("--all2all-backend: unknown backend '{}'; vLLM's are {}", backend, fmt::join(kBackends, ", ")));
  }
  const bool moe = HasStageKind(m, StageKind::kSparseFfn);
  ParallelConfig& c = t.config;
  c.tp = l.tp;
  c.pp = l.pp;
  if (moe && l.dp > 1) {
    c.tp = l.tp * l.dp;
    c.attn_dp = l.dp;
    c.dense_tp = l.tp;
    c.dp_lm_head = true;  // each DP rank's own LM head, over its TP group
    t.notes.push_back(fmt::format(
        "--tensor-parallel-size {} is per data-parallel rank: the MoE layers span all {} x {} = {} ranks (--tp {}), "
        "attention, dense layers and the LM head each DP rank's {} (--attn-dp {}, --dense-tp {}, --dp-lm-head)",
        l.tp, l.dp, l.tp, c.tp, c.tp, l.tp, l.dp, l.tp));
  } else if (l.dp > 1) {
    t.notes.push_back(
        fmt::format("--data-parallel-size {} of a model without MoE: {} replicas, each planned alone", l.dp, l.dp));
    t.replicas = l.dp;
  }
  // vLLM reads --all2all-backend only where it runs its all-to-all kernels:
  // with expert parallelism on, across data-parallel ranks
  // (FusedMoEParallelConfig.use_all2all_kernels: use_ep and dp_size > 1).
  const bool all2all = moe && l.expert_parallel && l.dp > 1;
  if (all2all && DispatchesA2a(backend)) {
    c.moe = MoeMode::kA2a;
  } else if (moe) {
    if (l.expert_parallel) {
      t.notes.push_back(
          fmt::format("--enable-expert-parallel with the {} backend: experts spread over the {} ranks; "
                      "each MoE still leaves a partial sum over all of them (--moe tp)",
                      backend, c.tp));
    }
    // allgather_reducescatter returns each DP rank's rows by a reduce-scatter.
    if (c.attn_dp > 1 && backend == "allgather_reducescatter") c.reduction = Reduction::kRsv;
  }
  if (!moe) {
    // Flags of the MoE layers a dense model does not have: said, not dropped.
    if (l.expert_parallel) t.notes.push_back("--enable-expert-parallel: the model has no MoE layer; ignored");
    if (!l.a2a_backend.empty()) {
      t.notes.push_back(fmt::format("--all2all-backend {}: the model has no MoE layer; ignored", l.a2a_backend));
    }
  } else if (!l.expert_parallel && DispatchesA2a(backend)) {
    t.notes.push_back(
        fmt::format("--all2all-backend {} without --enable-expert-parallel: vLLM dispatches nothing", backend));
  } else if (!all2all && DispatchesA2a(backend)) {
    t.notes.push_back(
        fmt::format("--all2all-backend {} without --data-parallel-size > 1: vLLM runs its all-to-all "
                    "only across data-parallel ranks and dispatches nothing",
                    backend));
  }
  SEAM_RETURN_IF_ERROR(Validate(c));
  SEAM_RETURN_IF_ERROR(CheckModelSplits(l.engine, m, c));
  return Finish(std::move(t));
}

}  // namespace seam::engine
