// SGLang's launch (python -m sglang.launch_server, sglang serve) and what its
// start-up does with it, as server_args.py's resolution passes and
// check_server_args do (sgl-project/sglang python/sglang/srt/server_args.py
// and arg_groups/overrides.py): its --tp-size is the whole TP group;
// --enable-dp-attention splits it into --dp-size attention groups (both
// turned off at dp 1); --moe-dense-tp-size 1 runs dense FFNs data-parallel;
// an a2a backend dispatches MoE rows over the whole TP group, its EP size
// set to the TP size.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "engine/translate.h"

namespace seam::engine {
namespace {

// --moe-a2a-backend's choices; the ones whose EP spans the TP group
// (overrides.py _a2a_ep_size) dispatch tokens all-to-all.
constexpr std::array<std::string_view, 11> kA2aBackends = {"none",      "deepep",        "mooncake",   "nixl",
                                                           "mori",      "ascend_fuseep", "flashinfer", "megamoe",
                                                           "deepep_v2", "pplx",          "ascend_tp"};

Status CheckExperts(const EngineLaunch& l, const Model& m, bool a2a, std::vector<std::string>& notes) {
  const bool moe = HasStageKind(m, StageKind::kSparseFfn);
  if (a2a) {
    if (l.ep && *l.ep != l.tp) {
      notes.push_back(
          fmt::format("--moe-a2a-backend {}: SGLang sets the expert parallel size to the TP size, {} "
                      "(--ep-size {} adjusted, as its log says)",
                      l.a2a_backend, l.tp, *l.ep));
    }
    if (!moe) {
      notes.push_back(
          fmt::format("--moe-a2a-backend {}: the model has no MoE, so nothing is dispatched", l.a2a_backend));
    }
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

// DP attention and the DP LM head: off at dp 1 (_data_parallelism_defaults),
// the TP group split into dp groups otherwise.
Status ReadDataParallel(const EngineLaunch& l, EngineTranslation& t) {
  const bool dp_attention = l.dp_attention && l.dp > 1;
  if (l.dp == 1 && (l.dp_attention || l.dp_lm_head)) {
    t.notes.push_back(l.dp_attention && l.dp_lm_head
                          ? "--enable-dp-attention and --enable-dp-lm-head with --dp-size 1: SGLang turns them off"
                          : fmt::format("{} with --dp-size 1: SGLang turns it off",
                                        l.dp_attention ? "--enable-dp-attention" : "--enable-dp-lm-head"));
  }
  if (dp_attention) {
    if (l.tp % l.dp != 0) {
      return Refuses(l.engine, fmt::format("assert cfg.tp_size % cfg.dp_size == 0 (--tp-size {}, --dp-size {}: "
                                           "--enable-dp-attention splits the TP group into dp-size attention groups)",
                                           l.tp, l.dp));
    }
    t.config.attn_dp = l.dp;
  } else if (l.dp > 1) {
    if (l.nnodes > 1) return Refuses(l.engine, "multi-node data parallel is not supported unless dp attention!");
    t.notes.push_back(fmt::format(
        "--dp-size {} without --enable-dp-attention: {} replicas of the model, each planned alone", l.dp, l.dp));
    t.replicas = l.dp;
  }
  if (l.dp_lm_head && l.dp > 1) {
    if (!dp_attention) return Refuses(l.engine, "Please enable dp attention when setting enable_dp_lm_head.");
    t.config.dp_lm_head = true;
  }
  return Status::Ok();
}

Status ReadDenseTp(const EngineLaunch& l, EngineTranslation& t) {
  if (!l.moe_dense_tp) return Status::Ok();
  if (*l.moe_dense_tp == 1) {
    t.config.dense_tp = 1;
  } else if (*l.moe_dense_tp == l.tp) {
    t.notes.push_back(fmt::format("--moe-dense-tp-size {}: the whole TP group, as without it", l.tp));
  } else {
    return Refuses(l.engine, fmt::format("moe_dense_tp_size only supports None, 1, or tp_size currently (got {}, "
                                         "--tp-size {})",
                                         *l.moe_dense_tp, l.tp));
  }
  return Status::Ok();
}

// The backend's own start-up checks (server_args.py _handle_a2a_moe).
Status CheckBackend(const EngineLaunch& l, std::string_view backend) {
  if (backend == "flashinfer" && !(l.dp_attention && l.dp == l.tp)) {
    return Refuses(l.engine, "Flashinfer MoE A2A is only supported with dp_size == tp_size and --enable-dp-attention");
  }
  if (backend == "pplx" && !(l.dp_attention && l.dp >= 2)) {
    return Refuses(l.engine,
                   "moe_a2a_backend='pplx' requires --enable-dp-attention with at least 2 DP groups (--dp-size >= 2).");
  }
  return Status::Ok();
}

// Two-batch overlap's start-up checks (server_args.py _check_two_batch_overlap,
// _handle_a2a_moe).
Status CheckTwoBatchOverlap(const EngineLaunch& l, std::string_view backend) {
  if (!l.two_batch_overlap) return Status::Ok();
  if (backend == "none" && !(l.dp_attention && l.dp > 1)) {
    return Refuses(l.engine,
                   "When enabling two batch overlap without an EP a2a backend (moe_a2a_backend='none'), "
                   "--enable-dp-attention is required");
  }
  if (backend == "deepep_v2")
    return Refuses(l.engine, "DeepEP v2 MoE has not implemented the TBO/SBO overlap hooks yet.");
  return Status::Ok();
}

// DeepEP's dispatcher sends fp8 unless told bf16 (--deepep-dispatcher-output-dtype,
// SGLANG_DEEPEP_BF16_DISPATCH); other backends are planned in the activations' dtype.
WireDtype DispatchOf(const EngineLaunch& l, std::string_view backend, WireDtype act, std::vector<std::string>& notes) {
  if (backend != "deepep") {
    notes.push_back(
        fmt::format("--moe-a2a-backend {}: its dispatch is planned in the activations' dtype ({}); "
                    "seam's --dispatch-dtype says otherwise",
                    backend, Name(act)));
    return act;
  }
  if (l.dispatch_dtype == "bf16") return WireDtype::kBf16;
  if (l.dispatch_dtype == "fp8") return WireDtype::kFp8;
  if (l.dispatch_dtype != "auto") {
    notes.push_back(fmt::format("--deepep-dispatcher-output-dtype {}: planned as fp8 (one byte an element)",
                                Printable(l.dispatch_dtype)));
    return WireDtype::kFp8;
  }
  if (l.dispatch_bf16) {
    notes.push_back("SGLANG_DEEPEP_BF16_DISPATCH: DeepEP dispatches bf16");
    return WireDtype::kBf16;
  }
  notes.push_back(
      "--moe-a2a-backend deepep: DeepEP dispatches fp8 (SGLang's default; SGLANG_DEEPEP_BF16_DISPATCH=1 "
      "or --deepep-dispatcher-output-dtype bf16 for bf16)");
  return WireDtype::kFp8;
}

// Context parallelism (server_args.py _handle_context_parallelism, the
// layer-boundary package's CP resolution): the TP group is (dp, cp, attn_tp),
// attention TP fastest. A prefill is sharded over the CP ranks only with
// --enable-prefill-cp and a --cp-strategy; zigzag is seam's split.
Status ReadContextParallel(const EngineLaunch& l, const Model& m, bool a2a, EngineTranslation& t) {
  if (!l.cp_strategy.empty() && l.cp_strategy != "zigzag" && l.cp_strategy != "interleave") {
    return Refuses(l.engine, fmt::format("argument --cp-strategy: invalid choice: '{}' (choose from zigzag, "
                                         "interleave)",
                                         Printable(l.cp_strategy)));
  }
  if (l.cp == 1) {
    if (l.prefill_cp) t.notes.push_back("--enable-prefill-cp with --attn-cp-size 1: no CP ranks to shard over");
    return Status::Ok();
  }
  if (l.tp % l.cp != 0) return Refuses(l.engine, "tp_size must be divisible by attn_cp_size");
  if (l.tp % (l.dp * l.cp) != 0) {
    return Refuses(l.engine, fmt::format("tp_size % (dp_size * attn_cp_size) != 0 (--tp-size {}, --dp-size {}, "
                                         "--attn-cp-size {}: each CP rank of each DP group needs its own "
                                         "attention-TP ranks)",
                                         l.tp, l.dp, l.cp));
  }
  if (!l.prefill_cp) {
    return Unsupported(fmt::format(
        "--attn-cp-size {} changes communication seam does not model (context-parallelism without a prefill "
        "split): SGLang splits a prefill's sequence over the CP ranks with --enable-prefill-cp (or a model's own "
        "CP mode); seam plans the zig-zag split, --enable-prefill-cp --cp-strategy zigzag",
        l.cp));
  }
  if (l.cp_strategy.empty()) {
    return Refuses(l.engine, "--cp-strategy must be set when --enable-prefill-cp is enabled.");
  }
  if (l.cp_strategy == "interleave") {
    return Unsupported(
        "--cp-strategy interleave changes communication seam does not model (context-parallelism dealt token by "
        "token): it deals a prompt's tokens to the CP ranks one by one; seam shards zig-zag (--cp-strategy zigzag, "
        "formerly in-seq-split)");
  }
  const bool mla = m.dims && m.dims->mla.kv_lora > 0;
  if (a2a && l.dp_attention && l.dp > 1 && !mla && HasStageKind(m, StageKind::kSparseFfn)) {
    return Refuses(l.engine,
                   "an all-to-all MoE dispatched per DP shard is not supported with DP attention and GQA prefill "
                   "context parallelism (_reject_unsupported_cp_moe)");
  }
  t.config.cp = l.cp;
  t.notes.push_back(fmt::format(
      "--attn-cp-size {} --enable-prefill-cp --cp-strategy zigzag: each prefill split zig-zag over {} CP ranks, "
      "keys and values all-gathered over the CP group; a decode token SGLang runs on every CP rank, seam on CP "
      "rank 0 (the same values)",
      l.cp, l.cp));
  return Status::Ok();
}

// Decode context parallelism (--dcp-size): the KV cache split token by token
// over dcp consecutive TP ranks. Beside DP attention or attention CP, which
// ranks SGLang groups is not what seam plans.
Status ReadDecodeContextSglang(const EngineLaunch& l, EngineTranslation& t) {
  constexpr std::string_view kDcpBackends[] = {"ag_rs", "a2a", "fi_a2a"};
  if (l.dcp > 1 && (l.dp_attention || l.cp > 1)) {
    return Unsupported(fmt::format(
        "--dcp-size {} changes communication seam does not model (decode context parallelism beside {}): seam "
        "splits a cache over consecutive attention-TP ranks; SGLang's DCP groups there are not read yet",
        l.dcp, l.cp > 1 ? "--attn-cp-size" : "--enable-dp-attention"));
  }
  return ReadDecodeContextParallel(l, kDcpBackends, t);
}

Status ReadPlacement(const EngineLaunch& l, const Model& m, EngineTranslation& t) {
  if ((l.tp * l.pp) % l.nnodes != 0) {
    return Refuses(l.engine, fmt::format("tp_size must be divisible by number of nodes (--tp-size {} x --pp-size {} "
                                         "over --nnodes {})",
                                         l.tp, l.pp, l.nnodes));
  }
  t.nodes = l.nnodes;
  if (!l.pp_partition.empty() && l.pp > 1) {
    Expected<std::vector<int>> split = PartitionOf(l, "SGLANG_PP_LAYER_PARTITION", l.pp, m.num_layers);
    if (!split) return split.error();
    t.config.pp_split = *split;
  }
  return Status::Ok();
}

}  // namespace

Expected<EngineTranslation> TranslateSglang(const EngineLaunch& l, const Model& m, const CheckpointQuant& q) {
  EngineTranslation t;
  Expected<WireDtype> act = DtypeOf(l, t.notes);
  if (!act) return act.error();
  ParallelConfig& c = t.config;
  c.tp = l.tp;
  c.pp = l.pp;
  SEAM_RETURN_IF_ERROR(ReadDataParallel(l, t));
  SEAM_RETURN_IF_ERROR(ReadDenseTp(l, t));
  std::string backend = l.a2a_backend.empty() ? "none" : l.a2a_backend;
  if (std::find(kA2aBackends.begin(), kA2aBackends.end(), backend) == kA2aBackends.end()) {
    return Refuses(l.engine, fmt::format("argument --moe-a2a-backend: invalid choice: '{}' (choose from {})",
                                         Printable(backend), fmt::join(kA2aBackends, ", ")));
  }
  if (backend == "ascend_tp") backend = "none";  // _handle_a2a_moe: the TP path
  const bool a2a = backend != "none";
  SEAM_RETURN_IF_ERROR(CheckBackend(l, backend));
  SEAM_RETURN_IF_ERROR(CheckTwoBatchOverlap(l, backend));
  SEAM_RETURN_IF_ERROR(CheckExperts(l, m, a2a, t.notes));
  t.wire = {.act = *act, .dispatch = *act};
  if (a2a && HasStageKind(m, StageKind::kSparseFfn)) {
    c.moe = MoeMode::kA2a;
    t.wire.dispatch = DispatchOf(l, backend, *act, t.notes);
  }
  c.input_scattered = l.input_scattered;
  SEAM_RETURN_IF_ERROR(ReadContextParallel(l, m, a2a, t));
  SEAM_RETURN_IF_ERROR(ReadDecodeContextSglang(l, t));
  SEAM_RETURN_IF_ERROR(ReadPlacement(l, m, t));
  t.weights = WeightsOf(l, q, *act, t.notes);
  // server_args.py's --kv-cache-dtype choices.
  Expected<std::optional<WireDtype>> kv = KvOf(
      l, *act, {"auto", "fp8_e5m2", "fp8_e4m3", "mxfp8", "bf16", "bfloat16", "nvfp4", "fp4_mx_block16", "fp4_e2m1"},
      t.notes);
  if (!kv) return kv.error();
  t.kv = *kv;
  SEAM_RETURN_IF_ERROR(Validate(c));
  SEAM_RETURN_IF_ERROR(CheckModelSplits(l.engine, m, c));
  return Finish(std::move(t));
}

}  // namespace seam::engine
