// Rejections: what the binder cannot serve, each with the stage, the rule and
// what to do instead.
#include <fmt/format.h>

#include "bind/rules.h"

namespace seam::bind {
namespace {

Error Reject(const StageRef& s, std::string_view what, std::string_view rule, std::string_view instead) {
  Error e = Unsupported(fmt::format("stage {} ({}, layer {}): {} (rule: {}); {}", s.index, Name(s.decl.kind), s.layer,
                                    what, rule, instead));
  e.stage = s.index;
  e.rule = std::string(rule);
  return e;
}

Status CheckUpdate(const StageRef& s, const StageRef& first) {
  const StageDecl& d = s.decl;
  if (d.update == UpdateKind::kHyperConnection && IsAlwaysPartialAttention(d)) {
    return Reject(s,
                  "a hyper-connection update needs an exit to apply it, and an always-partial "
                  "attention has none",
                  "a non-additive update runs at its producer's exit once its sum is complete",
                  "declare the attention as reducing itself, or give it a plain add");
  }
  if (d.update != first.decl.update) {
    return Reject(s,
                  fmt::format("its update is a {} but stage {} updates the residual with a {}", Name(d.update),
                              first.index, Name(first.decl.update)),
                  "one residual kind per stack: hyper-connection streams take no plain add",
                  "declare every stage of the stack with the same update kind");
  }
  return Status::Ok();
}

// Context parallelism shards each request's tokens over the CP ranks, and
// only attention knows how to put a sequence back together (it gathers the
// other shards' keys and values).
Status CheckContextParallel(const StageRef& s, const ParallelConfig& cfg) {
  if (cfg.cp == 1) return Status::Ok();
  constexpr std::string_view kRule = "context parallelism shards a request's tokens for attention only";
  if (s.decl.kind == StageKind::kMixer) {
    return Reject(s,
                  fmt::format("a mixer runs its recurrence over every token of a request in order, but with cp={} "
                              "each CP rank holds a zig-zag shard of them",
                              cfg.cp),
                  kRule, "drop --cp (SGLang's and vLLM's context parallelism serve attention-only stacks)");
  }
  if (s.decl.read == ReadKind::kAllRows) {
    return Reject(s,
                  fmt::format("its read needs every row of the attention group, but with cp={} each CP rank holds a "
                              "shard of them",
                              cfg.cp),
                  kRule, "drop --cp, or a plain-norm read");
  }
  return Status::Ok();
}

Status CheckStackStage(const StageRef& s, const StageRef& first, const ParallelConfig& cfg) {
  SEAM_RETURN_IF_ERROR(CheckUpdate(s, first));
  SEAM_RETURN_IF_ERROR(CheckContextParallel(s, cfg));
  if (s.decl.kind == StageKind::kSparseFfn && !s.decl.a2a && cfg.moe == MoeMode::kA2a) {
    return Reject(s, "this MoE has no all-to-all dispatch path", "a2a MoE needs a dispatch/combine in the model",
                  "use --moe tp");
  }
  if (s.decl.read == ReadKind::kAllRows && RunsOnItsSlice(s.decl, cfg) && cfg.attn_tp() > 1) {
    return Reject(s, "its read needs every row of the attention group, but it runs on this rank's slice",
                  "a read of every row runs on the attention rows",
                  cfg.moe == MoeMode::kA2a && s.decl.kind == StageKind::kSparseFfn
                      ? "use --moe tp, or a plain-norm read"
                      : "use --dense-tp with the TP or attention-TP width, or a plain-norm read");
  }
  return Status::Ok();
}

Status CheckInputScattered(const StageRef& s, const ParallelConfig& cfg) {
  constexpr std::string_view kRule = "input-scattered eligibility";
  constexpr std::string_view kDrop = "drop --input-scattered";
  {
    const StageDecl& d = s.decl;
    if (d.kind == StageKind::kMixer) {
      return Reject(s, "a mixer cannot gather its own input from the slice on input-scattered batches", kRule, kDrop);
    }
    if (d.kind == StageKind::kAttention && !d.gathers_input) {
      return Reject(s, "this attention does not gather its own input from the slice on input-scattered batches", kRule,
                    "declare it with a QKV gather, or drop --input-scattered");
    }
    if (d.kind == StageKind::kAttention && d.read == ReadKind::kAllRows) {
      return Reject(s, "its read needs every row, but on input-scattered batches the attention reads its slice", kRule,
                    kDrop);
    }
    if (d.kind == StageKind::kSparseFfn && cfg.moe == MoeMode::kA2a) {
      return Reject(s,
                    "an a2a MoE hands on its slice complete, but on input-scattered batches every "
                    "layer's input is a TP partial sum on the full rows",
                    kRule, "use --moe tp, or drop --input-scattered");
    }
    if (d.kind == StageKind::kLinear) {
      return Reject(s,
                    "a replicated linear stage hands on its output complete, but on input-scattered batches every "
                    "layer's input is a TP partial sum on the full rows",
                    kRule, kDrop);
    }
    if (d.kind == StageKind::kDenseFfn && DenseWidthOf(cfg) == DenseWidth::kRank) {
      return Reject(s,
                    "a fully data-parallel dense FFN hands on its slice complete, but on "
                    "input-scattered batches every layer's input is a TP partial sum on the full rows",
                    kRule, fmt::format("use --dense-tp {}, or drop --input-scattered", cfg.tp));
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckStages(const std::vector<StageRef>& stages, int first_own, int last_own, const ParallelConfig& cfg) {
  const StageRef* first = nullptr;
  for (const StageRef& s : stages) {
    if (s.decl.kind == StageKind::kNoOp) continue;
    if (first == nullptr) first = &s;
    SEAM_RETURN_IF_ERROR(CheckStackStage(s, *first, cfg));
    const bool own = s.index >= first_own && s.index <= last_own;
    if (own && cfg.input_scattered) {
      SEAM_RETURN_IF_ERROR(CheckInputScattered(s, cfg));
    }
  }
  return Status::Ok();
}

}  // namespace seam::bind
