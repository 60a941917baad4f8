#include "seam/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "core/enum_text.h"

namespace seam {
namespace {

std::string Divisors(int n) {
  std::vector<std::string> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(std::to_string(d));
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

Status PositiveSizes(const ParallelConfig& cfg) {
  const std::pair<const char*, int> sizes[] = {
      {"tp", cfg.tp}, {"attn_dp", cfg.attn_dp}, {"cp", cfg.cp}, {"dcp", cfg.dcp}, {"pp", cfg.pp}};
  for (const auto& [name, value] : sizes) {
    if (value < 1) return InvalidArgument(fmt::format("{}={} must be at least 1", name, value));
  }
  if (cfg.ep < 0) return InvalidArgument(fmt::format("ep={} must be at least 1 (or 0 for the TP group)", cfg.ep));
  if (cfg.dense_tp < 0) {
    return InvalidArgument(fmt::format("dense_tp={} must be at least 1 (or 0 for the TP group's width)", cfg.dense_tp));
  }
  return Status::Ok();
}

Status DenseWidthFits(const ParallelConfig& cfg) {
  const int d = cfg.dense_tp_size();
  if (d == cfg.tp || d == cfg.attn_tp() || d == 1) return Status::Ok();
  std::vector<std::string> widths = {fmt::format("tp={} (the TP group)", cfg.tp)};
  if (cfg.attn_tp() != cfg.tp && cfg.attn_tp() != 1) {
    widths.push_back(fmt::format("attn_tp={} (the attention-TP group)", cfg.attn_tp()));
  }
  return InvalidArgument(
      fmt::format("dense_tp={} is not a width a dense FFN can run at here; use {} or 1 "
                  "(fully data-parallel)",
                  d, fmt::join(widths, ", ")));
}

Status InputScatteredFits(const ParallelConfig& cfg) {
  if (!cfg.input_scattered) return Status::Ok();
  if (cfg.tp == 1) {
    return InvalidArgument(
        "input-scattered batches need tp > 1 (tp=1 has no slice to scatter onto); "
        "raise --tp or drop --input-scattered");
  }
  if (cfg.attn_dp > 1) {
    return InvalidArgument(
        fmt::format("input-scattered batches need attn_dp=1 (attn_dp={}): the reduce-scatter at each "
                    "attention entry runs over the whole TP group, which spans other DP groups' requests; "
                    "drop --attn-dp or --input-scattered",
                    cfg.attn_dp));
  }
  if (cfg.cp > 1) {
    return InvalidArgument(
        fmt::format("input-scattered batches need cp=1 (cp={}): the reduce-scatter at each attention "
                    "entry runs over the whole TP group, which spans other CP ranks' sequence shards; "
                    "drop --cp or --input-scattered",
                    cfg.cp));
  }
  return Status::Ok();
}

Status DecodeContextFits(const ParallelConfig& cfg) {
  if (cfg.dcp == 1) return Status::Ok();
  if (cfg.attn_tp() % cfg.dcp != 0) {
    // vLLM's rule: the DCP group is a part of the (attention) TP group.
    return InvalidArgument(
        fmt::format("dcp={} does not divide the attention-TP size {}: a DCP group is dcp "
                    "consecutive attention-TP ranks (divisors of {}: {})",
                    cfg.dcp, cfg.attn_tp(), cfg.attn_tp(), Divisors(cfg.attn_tp())));
  }
  if (kKeyClasses % cfg.dcp != 0) {
    return InvalidArgument(
        fmt::format("dcp={} does not divide {}: the partials of the DCP ranks merge along the "
                    "canonical attention order's tree over {} key classes (dcp 2, 4 or 8)",
                    cfg.dcp, kKeyClasses, kKeyClasses));
  }
  return Status::Ok();
}

Status ExpertGroupFits(const ParallelConfig& cfg) {
  const int ep = cfg.ep_size();
  if (ep == cfg.tp) return Status::Ok();
  if (cfg.moe != MoeMode::kA2a) {
    return InvalidArgument(
        fmt::format("ep={} needs --moe a2a: a TP MoE splits every expert over the whole TP group "
                    "and completes its sum there, so no expert group of its own exists",
                    ep));
  }
  if (cfg.tp % ep != 0) {
    return InvalidArgument(
        fmt::format("ep={} does not divide tp={}; the expert groups split the TP group (divisors "
                    "of {}: {})",
                    ep, cfg.tp, cfg.tp, Divisors(cfg.tp)));
  }
  return Status::Ok();
}

Status PipelineFits(const ParallelConfig& cfg) {
  if (cfg.pp_split.empty()) return Status::Ok();
  if (static_cast<int>(cfg.pp_split.size()) != cfg.pp) {
    return InvalidArgument(
        fmt::format("the layer split {} names {} pipeline ranks but pp={}; give one layer "
                    "count per rank",
                    fmt::join(cfg.pp_split, "+"), cfg.pp_split.size(), cfg.pp));
  }
  for (size_t r = 0; r < cfg.pp_split.size(); ++r) {
    if (cfg.pp_split[r] < 1) {
      return InvalidArgument(
          fmt::format("the layer split {} gives pipeline rank {} {} layers; every rank needs "
                      "at least one layer",
                      fmt::join(cfg.pp_split, "+"), r, cfg.pp_split[r]));
    }
  }
  return Status::Ok();
}

}  // namespace

DenseWidth DenseWidthOf(const ParallelConfig& cfg) {
  const int d = cfg.dense_tp_size();
  if (d == cfg.tp) return DenseWidth::kTp;
  if (d == 1) return DenseWidth::kRank;
  return DenseWidth::kAttnTp;
}

Status Validate(const ParallelConfig& cfg) {
  SEAM_RETURN_IF_ERROR(PositiveSizes(cfg));
  if (cfg.tp % cfg.attn_dp != 0) {
    return InvalidArgument(
        fmt::format("tp={} is not divisible by attn_dp={}; attn_dp must divide tp (divisors of {}: {})", cfg.tp,
                    cfg.attn_dp, cfg.tp, Divisors(cfg.tp)));
  }
  if ((cfg.tp / cfg.attn_dp) % cfg.cp != 0) {
    // SGLang's rule: tp % (dp_size * attn_cp_size) == 0.
    return InvalidArgument(
        fmt::format("tp={} is not divisible by attn_dp * cp = {} * {}; each CP rank of each DP group needs its "
                    "own attention-TP ranks (divisors of {}: {})",
                    cfg.tp, cfg.attn_dp, cfg.cp, cfg.tp / cfg.attn_dp, Divisors(cfg.tp / cfg.attn_dp)));
  }
  SEAM_RETURN_IF_ERROR(DecodeContextFits(cfg));
  SEAM_RETURN_IF_ERROR(DenseWidthFits(cfg));
  SEAM_RETURN_IF_ERROR(InputScatteredFits(cfg));
  SEAM_RETURN_IF_ERROR(ExpertGroupFits(cfg));
  if (cfg.dp_lm_head && cfg.attn_dp == 1) {
    return InvalidArgument(
        "--dp-lm-head needs --attn-dp > 1: without attention DP the LM head already splits the "
        "vocabulary over the whole TP group, which holds every row");
  }
  return PipelineFits(cfg);
}

int CanonicalKBlocks(const ParallelConfig& cfg) { return std::max(kDefaultKBlocks, cfg.tp); }

Status CheckSumGroups(const ParallelConfig& cfg) {
  const std::pair<const char*, int> groups[] = {
      {"tp", cfg.tp}, {"attn_tp", cfg.attn_tp()}, {"dense_tp", cfg.dense_tp_size()}};
  for (const auto& [name, size] : groups) {
    const auto n = static_cast<unsigned>(size);
    if (std::has_single_bit(n)) continue;
    return InvalidArgument(
        fmt::format("{}={} cannot run with the canonical reduction: every group that completes "
                    "a sum must be a power of two (the canonical sum is a binary tree over "
                    "K-blocks); use {} {} or {}",
                    name, size, name, std::bit_floor(n), std::bit_ceil(n)));
  }
  return Status::Ok();
}

constexpr auto kMoeModes = EnumNames<MoeMode>("MoE mode", {{MoeMode::kTp, "tp"}, {MoeMode::kA2a, "a2a"}});
constexpr auto kReductions = EnumNames<Reduction>(
    "boundary reduction",
    {{Reduction::kAr, "ar"}, {Reduction::kRs, "rs"}, {Reduction::kRsv, "rsv"}, {Reduction::kRsRsv, "rs+rsv"}});
constexpr auto kGroups = EnumNames<Group>("group", {{Group::kAttnTp, "attn_tp"},
                                                    {Group::kDp, "dp"},
                                                    {Group::kTp, "tp"},
                                                    {Group::kPp, "pp"},
                                                    {Group::kEp, "ep"},
                                                    {Group::kCp, "cp"},
                                                    {Group::kDcp, "dcp"}});

std::string_view Name(MoeMode m) { return kMoeModes.Name(m); }
std::string_view Name(Reduction r) { return kReductions.Name(r); }
std::string_view Name(Group g) { return kGroups.Name(g); }
Expected<MoeMode> ParseMoeMode(std::string_view text) { return kMoeModes.Parse(text); }
Expected<Reduction> ParseReduction(std::string_view text) { return kReductions.Parse(text); }
Expected<Group> ParseGroup(std::string_view text) { return kGroups.Parse(text); }

int GroupSize(const ParallelConfig& cfg, Group g) {
  switch (g) {
    case Group::kAttnTp: return cfg.attn_tp();
    case Group::kDp: return cfg.shards();
    case Group::kTp: return cfg.tp;
    case Group::kPp: return cfg.pp;
    case Group::kEp: return cfg.ep_size();
    case Group::kCp: return cfg.cp;
    case Group::kDcp: return cfg.dcp;
  }
  return 0;
}

Group A2aGroup(const ParallelConfig& cfg) { return cfg.ep_size() == cfg.tp ? Group::kTp : Group::kEp; }

int WorldSize(const ParallelConfig& cfg) { return cfg.tp * cfg.pp; }

int ShardOf(const ParallelConfig& cfg, const RankCoord& c) { return c.dp_rank * cfg.cp + c.cp_rank; }

int TpRank(const ParallelConfig& cfg, const RankCoord& c) { return ShardOf(cfg, c) * cfg.attn_tp() + c.attn_tp_rank; }

int GlobalRank(const ParallelConfig& cfg, const RankCoord& c) { return c.pp_rank * cfg.tp + TpRank(cfg, c); }

RankCoord CoordOf(const ParallelConfig& cfg, int global_rank) {
  SEAM_CHECK(global_rank >= 0 && global_rank < WorldSize(cfg), "rank out of range");
  const int tp_rank = global_rank % cfg.tp;
  const int shard = tp_rank / cfg.attn_tp();
  return {.pp_rank = global_rank / cfg.tp,
          .dp_rank = shard / cfg.cp,
          .attn_tp_rank = tp_rank % cfg.attn_tp(),
          .cp_rank = shard % cfg.cp};
}

std::vector<int> GroupRanks(const ParallelConfig& cfg, Group g, int global_rank) {
  const RankCoord me = CoordOf(cfg, global_rank);
  std::vector<int> ranks;
  const int my_shard = ShardOf(cfg, me);
  for (int shard = 0; shard < cfg.shards() && g != Group::kPp && g != Group::kEp; ++shard) {
    for (int a = 0; a < cfg.attn_tp(); ++a) {
      const RankCoord c{.pp_rank = me.pp_rank, .dp_rank = shard / cfg.cp, .attn_tp_rank = a, .cp_rank = shard % cfg.cp};
      const bool member = (g == Group::kTp) || (g == Group::kAttnTp && shard == my_shard) ||
                          (g == Group::kDp && a == me.attn_tp_rank) ||
                          (g == Group::kCp && c.dp_rank == me.dp_rank && a == me.attn_tp_rank) ||
                          (g == Group::kDcp && shard == my_shard && a / cfg.dcp == me.attn_tp_rank / cfg.dcp);
      if (member) ranks.push_back(GlobalRank(cfg, c));
    }
  }
  if (g == Group::kEp) {
    const int first = TpRank(cfg, me) / cfg.ep_size() * cfg.ep_size();
    for (int t = first; t < first + cfg.ep_size(); ++t) ranks.push_back(me.pp_rank * cfg.tp + t);
    return ranks;
  }
  if (g == Group::kPp) {
    for (int pp = 0; pp < cfg.pp; ++pp) {
      RankCoord c = me;
      c.pp_rank = pp;
      ranks.push_back(GlobalRank(cfg, c));
    }
  }
  return ranks;
}

}  // namespace seam
