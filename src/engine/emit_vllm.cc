// A configuration as vLLM's launch line (vllm serve MODEL): the inverse of
// vllm.cc's reading. vLLM's --tensor-parallel-size is per data-parallel
// rank, so a MoE model's attention-DP layout is written as -tp ATTN_TP
// -dp ATTN_DP, and a model without MoE has only whole replicas.
#include <fmt/format.h>

#include "engine/emit.h"
#include "engine/translate.h"

namespace seam::engine {
namespace {

// The data-parallel size vLLM is given: attention groups of a MoE model
// (one expert group across them all), or replicas of a model without MoE.
Expected<int> DataParallelOf(const EmitRequest& r, bool moe, Writing& w) {
  const ParallelConfig& c = r.config;
  if (moe && r.replicas > 1) {
    return Cannot(r.engine, fmt::format("vLLM's data parallelism of a MoE model is one expert group across every "
                                        "DP rank; {} replicas of it are {} vLLM deployments",
                                        r.replicas, r.replicas));
  }
  if (!moe && c.attn_dp > 1) {
    return Cannot(r.engine, fmt::format("vLLM's data parallelism of a model without MoE runs whole replicas; "
                                        "attention DP inside one TP group (--attn-dp {}) is SGLang's "
                                        "--enable-dp-attention",
                                        c.attn_dp));
  }
  if (!moe || c.attn_dp == 1) return r.replicas;
  // Each DP rank runs its dense layers and its LM head over its own TP group.
  if (c.dense_tp_size() != c.attn_tp()) {
    w.Cannot(Knob::kDenseTp,
             fmt::format("each vLLM DP rank runs its dense FFN over its own TP group of {}, not --dense-tp {}",
                         c.attn_tp(), c.dense_tp_size()));
  }
  if (!c.dp_lm_head) {
    w.Cannot(Knob::kDpLmHead, "each vLLM DP rank runs its own LM head over its TP group (--dp-lm-head)");
  }
  return c.attn_dp;
}

// vLLM's all-to-all runs only with expert parallelism across DP ranks; its
// DeepEP kernels dispatch fp8 for a checkpoint in fp8 128x128 blocks and
// the activations' dtype otherwise. Without it the MoE returns each DP
// rank's rows by a reduce-scatter (allgather_reducescatter, the default).
void AddMoe(const EmitRequest& r, const CheckpointQuant& q, Writing& w) {
  const ParallelConfig& c = r.config;
  const Reduction reduction = c.moe == MoeMode::kTp && c.attn_dp > 1 ? Reduction::kRsv : Reduction::kAr;
  if (c.reduction != reduction) {
    w.Cannot(Knob::kReduction, fmt::format("vLLM completes this layout's sums with --reduction {}, not {}",
                                           Name(reduction), Name(c.reduction)));
  }
  if (c.moe != MoeMode::kA2a) return;
  if (c.attn_dp == 1 && c.cp == 1) {
    w.Cannot(Knob::kMoe,
             "vLLM runs its all-to-all only across data-parallel or prefill-context-parallel ranks "
             "(--data-parallel-size or --prefill-context-parallel-size > 1)");
    return;
  }
  if (c.ep_size() != c.tp) {
    w.Cannot(Knob::kEp, fmt::format("vLLM's expert parallelism spreads the experts over all {} DP x TP ranks, not "
                                    "--ep {}",
                                    c.tp, c.ep_size()));
  }
  const bool fp8 =
      q.weight_block == std::vector<int>{128, 128} && QuantMethodOf({.quantization = r.quantization}, q) == "fp8";
  if (r.wire.dispatch != (fp8 ? WireDtype::kFp8 : r.wire.act)) {
    w.Cannot(Knob::kDispatch, fmt::format("vLLM's DeepEP dispatches {} for this checkpoint, not {}",
                                          Name(fp8 ? WireDtype::kFp8 : r.wire.act), Name(r.wire.dispatch)));
  }
  w.Add("--enable-expert-parallel");
  w.Add("--all2all-backend", "deepep_high_throughput");
  if (r.two_batch_overlap) w.Add("--enable-dbo");
}

// vLLM gives the remainder of the layers to the ranks before the last
// (get_pp_indices); any other split is VLLM_PP_LAYER_PARTITION.
void AddPipeline(const ParallelConfig& c, const Model& m, Writing& w) {
  if (c.pp == 1) return;
  w.Add("--pipeline-parallel-size", std::to_string(c.pp));
  const std::vector<int> counts = LayerCounts(c, m.num_layers);
  if (counts != VllmLayerSplit(m.num_layers, c.pp))
    w.env.push_back(fmt::format("VLLM_PP_LAYER_PARTITION={}", fmt::join(counts, ",")));
}

// Data-parallel ranks split over the nodes as vLLM's multi-node DP
// deployment runs them (-dpl, the other nodes --headless from their start
// rank); otherwise the TP and pipeline ranks split over --nnodes.
void AddNodes(const EmitRequest& r, int dp, Writing& w) {
  for (int node = 0; node < r.nodes; ++node) {
    std::vector<std::string> flags;
    if (r.nodes > 1 && dp % r.nodes == 0) {
      const int local = dp / r.nodes;
      flags = {"--data-parallel-size-local", std::to_string(local),
               "--data-parallel-address",    "$NODE0_ADDR",
               "--data-parallel-rpc-port",   "13345"};
      if (node > 0)
        flags.insert(flags.end(), {"--headless", "--data-parallel-start-rank", std::to_string(node * local)});
    } else if (r.nodes > 1) {
      flags = {"--nnodes",           std::to_string(r.nodes), "--node-rank",
               std::to_string(node), "--master-addr",         "$NODE0_ADDR"};
      if (node > 0) flags.push_back("--headless");
    }
    w.per_node.push_back(std::move(flags));
  }
}

// Prefill context parallelism is -pcp over TP groups of the attention-TP
// size, each running its dense layers itself, its MoE all-to-all across
// every rank; vLLM runs it without data parallelism.
Status AddContextParallel(const EmitRequest& r, bool moe, Writing& w) {
  const ParallelConfig& c = r.config;
  if (c.cp == 1) return Status::Ok();
  if (c.attn_dp > 1 || r.replicas > 1) {
    return Cannot(r.engine, fmt::format("vLLM's prefill context parallelism runs without data parallelism (PCP "
                                        "does not support data parallelism yet); --cp {} with {} is not a vLLM "
                                        "line",
                                        c.cp, c.attn_dp > 1 ? "--attn-dp" : "replicas"));
  }
  if (moe && c.moe != MoeMode::kA2a) {
    return Cannot(r.engine,
                  "a MoE under vLLM's prefill context parallelism is written with expert parallelism "
                  "(--moe a2a); seam does not model its MoE without it");
  }
  if (c.dense_tp_size() != c.attn_tp()) {
    w.Cannot(Knob::kDenseTp, fmt::format("each vLLM PCP rank runs its dense FFN over its own TP group of {}, not "
                                         "--dense-tp {}",
                                         c.attn_tp(), c.dense_tp_size()));
  }
  w.Add("--prefill-context-parallel-size", std::to_string(c.cp));
  return Status::Ok();
}

// Decode context parallelism is -dcp over consecutive ranks of each TP
// group, its partials exchanged all-to-all as seam's plan exchanges them;
// with -pcp vLLM's DCP group spans the PCP ranks instead.
Status AddDecodeContextParallel(const EmitRequest& r, Writing& w) {
  const ParallelConfig& c = r.config;
  if (c.dcp == 1) return Status::Ok();
  if (c.cp > 1) {
    return Cannot(r.engine, fmt::format("with prefill context parallelism vLLM's DCP group spans the PCP ranks; "
                                        "--cp {} --dcp {} (a split within each CP rank's TP group) is not a vLLM "
                                        "line",
                                        c.cp, c.dcp));
  }
  w.Add("--decode-context-parallel-size", std::to_string(c.dcp));
  w.Add("--dcp-comm-backend", "a2a");
  return Status::Ok();
}

}  // namespace

Expected<Writing> WriteVllm(const EmitRequest& r, const Model& m, const CheckpointQuant& q) {
  const ParallelConfig& c = r.config;
  const bool moe = HasStageKind(m, StageKind::kSparseFfn);
  Writing w;
  w.words = {"vllm", "serve", ModelPathOf(r.model_path)};
  Expected<int> dp = DataParallelOf(r, moe, w);
  if (!dp) return dp.error();
  const bool split = (moe && c.attn_dp > 1) || c.cp > 1;
  w.Add("--tensor-parallel-size", std::to_string(split ? c.attn_tp() : c.tp));
  SEAM_RETURN_IF_ERROR(AddContextParallel(r, moe, w));
  SEAM_RETURN_IF_ERROR(AddDecodeContextParallel(r, w));
  if (!split && c.dense_tp_size() != c.tp) {
    w.Cannot(Knob::kDenseTp,
             fmt::format("vLLM runs a dense FFN over the whole TP group, not --dense-tp {}", c.dense_tp_size()));
  }
  AddPipeline(c, m, w);
  if (*dp > 1) w.Add("--data-parallel-size", std::to_string(*dp));
  AddMoe(r, q, w);
  if (c.input_scattered) {
    w.Cannot(Knob::kInputScattered,
             "vLLM has no input-scattered attention (SGLang's --enable-attn-tp-input-scattered)");
  }
  AddDtype(r, w);
  if (!r.quantization.empty()) w.Add("--quantization", r.quantization);
  AddKvDtype(r, {"", "bfloat16", "float16", "fp8"}, w);
  AddNodes(r, *dp, w);
  return w;
}

}  // namespace seam::engine
