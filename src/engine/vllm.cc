// vLLM's serve flags (vllm serve MODEL ...) and what its start-up does with
// them (vllm-project/vllm vllm/engine/arg_utils.py create_engine_config,
// vllm/config/parallel.py ParallelConfig, vllm/distributed/utils.py
// get_pp_indices). Its --tensor-parallel-size is per data-parallel rank: a
// MoE model under --data-parallel-size runs attention and dense layers on
// each DP rank's TP group and its MoE layers across all DP x TP ranks (the
// experts spread over them with --enable-expert-parallel). A model without
// MoE under DP is independent replicas.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "engine/translate.h"

namespace seam::engine {
namespace {

// --all2all-backend's choices in vLLM main; pplx and naive parse but were
// removed (ParallelConfig falls back to allgather_reducescatter).
constexpr std::array<std::string_view, 12> kBackends = {"naive",
                                                        "pplx",
                                                        "deepep_high_throughput",
                                                        "deepep_low_latency",
                                                        "deepep_v2",
                                                        "mori_high_throughput",
                                                        "mori_low_latency",
                                                        "nixl_ep",
                                                        "allgather_reducescatter",
                                                        "flashinfer_all2allv",
                                                        "flashinfer_nvlink_two_sided",
                                                        "flashinfer_nvlink_one_sided"};

bool DispatchesA2a(std::string_view backend) {
  return backend.starts_with("deepep") || backend.starts_with("mori") || backend == "nixl_ep" ||
         backend.starts_with("flashinfer");
}

Expected<std::string> BackendOf(const EngineLaunch& l, std::vector<std::string>& notes) {
  std::string backend = l.a2a_backend.empty() ? "allgather_reducescatter" : l.a2a_backend;
  if (std::find(kBackends.begin(), kBackends.end(), backend) == kBackends.end()) {
    return Refuses(l.engine, fmt::format("argument --all2all-backend: invalid choice: '{}' (choose from {})",
                                         Printable(backend), fmt::join(kBackends, ", ")));
  }
  if (backend == "pplx" || backend == "naive") {
    notes.push_back(
        fmt::format("--all2all-backend {}: The '{}' all2all backend has been removed. Falling back to "
                    "'allgather_reducescatter'.",
                    backend, backend));
    backend = "allgather_reducescatter";
  }
  return backend;
}

// Nodes and ranks per node from --nnodes or the data-parallel placement.
Status ReadPlacement(const EngineLaunch& l, const Model& m, EngineTranslation& t) {
  // External load balancing: each launch is one DP rank (create_engine_config).
  const std::optional<int> dp_local = l.dp_rank && l.dp > 1 ? std::optional(1) : l.dp_local;
  if (l.dp_local && *l.dp_local > l.dp) {
    return Refuses(l.engine,
                   fmt::format("data_parallel_size_local ({}) must be <= data_parallel_size ({})", *l.dp_local, l.dp));
  }
  if (l.nnodes > 1) {
    const int world = l.dp * l.pp * l.tp;
    if (world % l.nnodes != 0) {
      return Refuses(l.engine, fmt::format("world_size={} must be divisible by nnodes={}.", world, l.nnodes));
    }
    if (l.node_rank >= l.nnodes) {
      return Refuses(l.engine, fmt::format("node_rank={} must be less than nnodes={}.", l.node_rank, l.nnodes));
    }
    t.nodes = l.nnodes;
  } else if (dp_local) {
    t.nodes = (l.dp + *dp_local - 1) / *dp_local;
  }
  if (l.pp > 1) {
    if (!l.pp_partition.empty()) {
      Expected<std::vector<int>> split = PartitionOf(l, "VLLM_PP_LAYER_PARTITION", l.pp, m.num_layers);
      if (!split) return split.error();
      t.config.pp_split = *split;
    } else if (m.num_layers % l.pp != 0 && m.num_layers >= l.pp) {
      t.config.pp_split = VllmLayerSplit(m.num_layers, l.pp);
      t.notes.push_back(fmt::format("vLLM's layer split: {} (the ranks before the last take the remainder)",
                                    fmt::join(t.config.pp_split, "+")));
    }
  }
  return Status::Ok();
}

// DeepEP's low-latency kernels quantize the dispatch to fp8 in blocks of
// 128 for an fp8 checkpoint scaled in 128 x 128 blocks; every other
// dispatch moves the activations' dtype.
WireDtype DispatchOf(std::string_view backend, const CheckpointQuant& q, const EngineLaunch& l, WireDtype act) {
  const bool block128 = q.weight_block == std::vector<int>{128, 128};
  return backend.starts_with("deepep") && QuantMethodOf(l, q) == "fp8" && block128 ? WireDtype::kFp8 : act;
}

// The start-up checks of the features that ride on the MoE backend: dual
// batch overlap (VllmConfig: micro-batching needs a DeepEP or NIXL-EP
// all-to-all) and EPLB (ParallelConfig: it needs expert parallelism).
Status CheckMoeFeatures(const EngineLaunch& l, std::string_view backend) {
  if (l.two_batch_overlap && !backend.starts_with("deepep") && backend != "nixl_ep") {
    return Refuses(l.engine, fmt::format("Microbatching currently only supports the deepep_low_latency and "
                                         "deepep_high_throughput all2all backend. {} is not supported.",
                                         backend));
  }
  if (l.eplb && !l.expert_parallel) return Refuses(l.engine, "enable_expert_parallel must be True to use EPLB.");
  return Status::Ok();
}

void NoteUnused(const EngineLaunch& l, bool moe, bool all2all, std::string_view backend,
                std::vector<std::string>& notes) {
  if (!moe) {
    // Flags of the MoE layers a dense model does not have: said, not dropped.
    if (l.expert_parallel) notes.push_back("--enable-expert-parallel: the model has no MoE layer; ignored");
    if (!l.a2a_backend.empty()) {
      notes.push_back(fmt::format("--all2all-backend {}: the model has no MoE layer; ignored", l.a2a_backend));
    }
  } else if (!l.expert_parallel && DispatchesA2a(backend)) {
    notes.push_back(
        fmt::format("--all2all-backend {} without --enable-expert-parallel: vLLM dispatches nothing", backend));
  } else if (!all2all && DispatchesA2a(backend)) {
    notes.push_back(
        fmt::format("--all2all-backend {} without --data-parallel-size or --prefill-context-parallel-size > 1: "
                    "vLLM runs its all-to-all only across those ranks and dispatches nothing",
                    backend));
  }
}

// Prefill context parallelism (ParallelConfig's checks; vllm/v1/worker/cp_utils.py):
// -pcp multiplies the world by pcp, each PCP rank a TP group of
// --tensor-parallel-size ranks holding a zig-zag shard of each prefill
// (DualChunkSwap), its dense layers over that TP group; with expert
// parallelism its MoE dispatches all-to-all across every TP x PCP rank.
Status ReadContextParallel(const EngineLaunch& l, bool moe, EngineTranslation& t) {
  if (l.cp == 1) return Status::Ok();
  if (l.dp > 1) return Refuses(l.engine, "PCP does not support data parallelism yet");
  if (moe && !l.expert_parallel) {
    return Unsupported(fmt::format(
        "--prefill-context-parallel-size {} changes communication seam does not model (prefill-context-parallelism "
        "of a MoE without expert parallelism): which ranks its MoE sums over; with --enable-expert-parallel it "
        "dispatches all-to-all across the {} x {} ranks",
        l.cp, l.tp, l.cp));
  }
  ParallelConfig& c = t.config;
  c.tp = l.tp * l.cp;
  c.cp = l.cp;
  c.dense_tp = l.tp;
  t.notes.push_back(fmt::format(
      "--prefill-context-parallel-size {}: {} x {} = {} ranks a pipeline rank (--tp {} --cp {}), each PCP rank's "
      "dense layers over its own TP group (--dense-tp {}); a prefill split zig-zag, keys and values all-gathered "
      "over the PCP group; a decode token vLLM runs on every PCP rank, seam on CP rank 0 (the same values), and "
      "vLLM gathers the hidden states before its LM head where seam gathers them to the whole group",
      l.cp, l.tp, l.cp, c.tp, c.tp, c.cp, l.tp));
  return Status::Ok();
}

// Decode context parallelism (ParallelConfig's checks): without PCP the
// DCP groups are consecutive runs of dcp TP ranks (initialize_model_parallel
// reshapes the ranks by dcp), so tp % dcp == 0.
Status ReadDecodeContextVllm(const EngineLaunch& l, EngineTranslation& t) {
  constexpr std::string_view kDcpBackends[] = {"ag_rs", "a2a"};
  if (l.dcp > 1 && l.cp > 1) {
    return Unsupported(fmt::format(
        "--decode-context-parallel-size {} changes communication seam does not model (decode context parallelism "
        "across the PCP ranks): with -pcp vLLM's DCP group spans the PCP ranks (dcp 1, pcp or tp x pcp); seam "
        "splits a cache over attention-TP ranks only",
        l.dcp));
  }
  if (l.tp % l.dcp != 0)
    return Refuses(l.engine, fmt::format("tp_size={} must be divisible by dcp_size={}.", l.tp, l.dcp));
  if (l.dcp == 1 && l.dcp_backend == "a2a") {
    return Refuses(l.engine, "--dcp-comm-backend a2a needs --decode-context-parallel-size > 1");
  }
  return ReadDecodeContextParallel(l, kDcpBackends, t);
}

}  // namespace

std::vector<int> VllmLayerSplit(int layers, int pp) {
  std::vector<int> counts(static_cast<size_t>(pp), layers / pp);
  for (int extra = 0; extra < layers % pp; ++extra) ++counts[static_cast<size_t>(pp - 2 - extra)];
  return counts;
}

Expected<EngineTranslation> TranslateVllm(const EngineLaunch& l, const Model& m, const CheckpointQuant& q) {
  EngineTranslation t;
  Expected<WireDtype> act = DtypeOf(l, t.notes);
  if (!act) return act.error();
  t.wire = {.act = *act, .dispatch = *act};
  Expected<std::string> backend = BackendOf(l, t.notes);
  if (!backend) return backend.error();
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
  SEAM_RETURN_IF_ERROR(ReadContextParallel(l, moe, t));
  SEAM_RETURN_IF_ERROR(ReadDecodeContextVllm(l, t));
  // vLLM runs its all-to-all kernels only with expert parallelism on, across
  // data-parallel or prefill-context-parallel ranks (FusedMoEParallelConfig.use_all2all_kernels).
  const bool all2all = moe && l.expert_parallel && (l.dp > 1 || l.cp > 1);
  if (all2all && DispatchesA2a(*backend)) {
    c.moe = MoeMode::kA2a;
    t.wire.dispatch = DispatchOf(*backend, q, l, *act);
  } else if (moe) {
    if (l.expert_parallel) {
      t.notes.push_back(
          fmt::format("--enable-expert-parallel with the {} backend: experts spread over the {} ranks; "
                      "each MoE still leaves a partial sum over all of them (--moe tp)",
                      *backend, c.tp));
    }
    // allgather_reducescatter returns each DP rank's rows by a reduce-scatter.
    if (c.attn_dp > 1 && *backend == "allgather_reducescatter") c.reduction = Reduction::kRsv;
  }
  NoteUnused(l, moe, all2all, *backend, t.notes);
  SEAM_RETURN_IF_ERROR(CheckMoeFeatures(l, *backend));
  if (m.dims && m.dims->heads > 0 && m.dims->heads % l.tp != 0) {  // ModelConfig.verify_with_parallel_config
    return Refuses(l.engine, fmt::format("Total number of attention heads ({}) must be divisible by tensor parallel "
                                         "size ({}).",
                                         m.dims->heads, l.tp));
  }
  SEAM_RETURN_IF_ERROR(ReadPlacement(l, m, t));
  t.weights = WeightsOf(l, q, *act, t.notes);
  Expected<std::optional<WireDtype>> kv = KvOf(l, *act, {}, t.notes);  // vLLM's choices moved through 2026
  if (!kv) return kv.error();
  t.kv = *kv;
  SEAM_RETURN_IF_ERROR(Validate(c));
  SEAM_RETURN_IF_ERROR(CheckModelSplits(l.engine, m, c));
  return Finish(std::move(t));
}

}  // namespace seam::engine
