// A configuration as SGLang's launch line (python3 -m sglang.launch_server):
// the inverse of sglang.cc's reading, for what SGLang's flags can say.
#include <fmt/format.h>

#include "engine/emit.h"
#include "seam/pipeline.h"

namespace seam::engine {
namespace {

// --dp-size is either replicas of the model or, with --enable-dp-attention,
// the attention groups inside one TP group; never both.
Status AddDataParallel(const EmitRequest& r, Writing& w) {
  const ParallelConfig& c = r.config;
  if (r.replicas > 1) {
    if (c.attn_dp > 1) {
      return Cannot(r.engine, fmt::format("--dp-size is either {} replicas or, with --enable-dp-attention, {} "
                                          "attention groups; {} replicas of a DP-attention layout are {} SGLang "
                                          "servers behind a router",
                                          r.replicas, c.attn_dp, r.replicas, r.replicas));
    }
    if (r.nodes > 1) {
      return Cannot(r.engine, fmt::format("SGLang runs data parallelism across nodes only as DP attention; {} "
                                          "replicas on {} nodes are a server per node behind a router",
                                          r.replicas, r.nodes));
    }
    w.Add("--dp-size", std::to_string(r.replicas));
  }
  if (c.attn_dp > 1) {
    w.Add("--dp-size", std::to_string(c.attn_dp));
    w.Add("--enable-dp-attention");
    if (c.dp_lm_head) w.Add("--enable-dp-lm-head");
  }
  return Status::Ok();
}

// A zig-zag prefill split over the CP ranks is --attn-cp-size with
// --enable-prefill-cp --cp-strategy zigzag.
void AddContextParallel(const ParallelConfig& c, Writing& w) {
  if (c.cp == 1) return;
  w.Add("--attn-cp-size", std::to_string(c.cp));
  w.Add("--enable-prefill-cp");
  w.Add("--cp-strategy", "zigzag");
}

// A cache split token by token over consecutive TP ranks is --dcp-size,
// its partials exchanged all-to-all as seam's plan exchanges them. Beside
// DP attention or attention CP SGLang's grouping is not seam's to write.
Status AddDecodeContextParallel(const EmitRequest& r, Writing& w) {
  const ParallelConfig& c = r.config;
  if (c.dcp == 1) return Status::Ok();
  if (c.attn_dp > 1 || c.cp > 1) {
    return Cannot(r.engine, fmt::format("seam does not read SGLang's DCP groups beside {}, so --dcp {} with it is "
                                        "not written",
                                        c.cp > 1 ? "--attn-cp-size" : "--enable-dp-attention", c.dcp));
  }
  w.Add("--dcp-size", std::to_string(c.dcp));
  w.Add("--dcp-comm-backend", "a2a");
  return Status::Ok();
}

void AddDenseTp(const ParallelConfig& c, Writing& w) {
  if (c.dense_tp_size() == c.tp) return;
  if (c.dense_tp_size() == 1) {
    w.Add("--moe-dense-tp-size", "1");
    return;
  }
  w.Cannot(Knob::kDenseTp,
           fmt::format("SGLang runs a dense FFN over the whole TP group or, with --moe-dense-tp-size 1, on each rank; "
                       "not over {} ranks (--dense-tp {})",
                       c.dense_tp_size(), c.dense_tp_size()));
}

// An all-to-all MoE is DeepEP, the backend SGLang's DeepSeek recipes name;
// it dispatches fp8 unless told bf16.
void AddMoe(const EmitRequest& r, const Model& m, Writing& w) {
  const ParallelConfig& c = r.config;
  if (c.moe != MoeMode::kA2a) return;
  if (c.ep_size() != c.tp) {
    w.Cannot(Knob::kEp,
             fmt::format("SGLang's a2a backends spread the experts over the whole TP group of {} (it sets --ep-size to "
                         "the TP size); --ep {} has no SGLang flag",
                         c.tp, c.ep_size()));
  }
  w.Add("--moe-a2a-backend", "deepep");
  if (r.two_batch_overlap) w.Add("--enable-two-batch-overlap");
  if (!HasStageKind(m, StageKind::kSparseFfn)) return;
  if (r.wire.dispatch == WireDtype::kBf16) {
    w.Add("--deepep-dispatcher-output-dtype", "bf16");
  } else if (r.wire.dispatch != WireDtype::kFp8) {
    w.Cannot(Knob::kDispatch, fmt::format("SGLang's DeepEP dispatches fp8 or bf16, not {}", Name(r.wire.dispatch)));
  }
}

// SGLang splits the layers evenly with the remainder on the last ranks,
// seam's default; any other split is SGLANG_PP_LAYER_PARTITION.
void AddPipeline(const ParallelConfig& c, const Model& m, Writing& w) {
  if (c.pp == 1) return;
  w.Add("--pp-size", std::to_string(c.pp));
  ParallelConfig even = c;
  even.pp_split.clear();
  const std::vector<int> counts = LayerCounts(c, m.num_layers);
  if (counts != LayerCounts(even, m.num_layers)) {
    w.env.push_back(fmt::format("SGLANG_PP_LAYER_PARTITION={}", fmt::join(counts, ",")));
  }
}

void AddNodes(const EmitRequest& r, Writing& w) {
  for (int node = 0; node < r.nodes; ++node) {
    if (r.nodes == 1) {
      w.per_node.emplace_back();
      continue;
    }
    w.per_node.push_back({"--nnodes", std::to_string(r.nodes), "--node-rank", std::to_string(node), "--dist-init-addr",
                          "$NODE0_ADDR:5000"});
  }
}

}  // namespace

Expected<Writing> WriteSglang(const EmitRequest& r, const Model& m) {
  const ParallelConfig& c = r.config;
  Writing w;
  w.words = {"python3", "-m", "sglang.launch_server", "--model-path", ModelPathOf(r.model_path)};
  w.Add("--tp-size", std::to_string(c.tp));
  AddPipeline(c, m, w);
  SEAM_RETURN_IF_ERROR(AddDataParallel(r, w));
  AddContextParallel(c, w);
  SEAM_RETURN_IF_ERROR(AddDecodeContextParallel(r, w));
  AddDenseTp(c, w);
  AddMoe(r, m, w);
  if (c.input_scattered) w.Add("--enable-attn-tp-input-scattered");
  if (c.reduction != Reduction::kAr) {
    w.Cannot(Knob::kReduction,
             fmt::format("SGLang has no flag that chooses a boundary's collective; its lines read as --reduction ar, "
                         "not {}",
                         Name(c.reduction)));
  }
  AddDtype(r, w);
  if (!r.quantization.empty()) w.Add("--quantization", r.quantization);
  AddKvDtype(r, {"", "bf16", "", "fp8_e4m3"}, w);
  AddNodes(r, w);
  return w;
}

}  // namespace seam::engine
