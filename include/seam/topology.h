// seam/topology.h — the parallel world of one model replica.
//
// A pipeline rank holds a TP group of `tp` ranks, split into `attn_dp`
// attention-DP groups, each split into `cp` context-parallel ranks, each of
// attn_tp = tp / (attn_dp * cp) ranks (SGLang's order, attention TP fastest):
//   shard = dp_rank * cp + cp_rank,  tp_rank = shard * attn_tp + attn_tp_rank,
//   rank = pp_rank * tp + tp_rank.
// A shard is one attention-row shard: the rows its attention-TP group holds.
//
//   ParallelConfig cfg{.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a};
//   if (Status s = Validate(cfg); !s.ok()) ...;
//   std::vector<int> peers = GroupRanks(cfg, Group::kAttnTp, /*rank=*/5);
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam {

enum class MoeMode { kTp, kA2a };
inline constexpr std::array kEveryMoeMode = {MoeMode::kTp, MoeMode::kA2a};

// Which collectives may complete an FFN's sum: all-reduce only; also a
// fixed-size reduce-scatter; also the attention-DP reduce-scatterv; both.
enum class Reduction { kAr, kRs, kRsv, kRsRsv };
inline constexpr std::array kEveryReduction = {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv};

// Each field a user sets is a knob: one row of the table in seam/knobs.h,
// which the command line, the plan forms and Python read it through.
struct ParallelConfig {
  int tp = 1;
  int attn_dp = 1;
  // Context parallelism: each attention-DP group's requests are cut into
  // sequence shards over `cp` ranks (zig-zag, as SGLang's --attn-cp-size and
  // vLLM's prefill context parallelism split them); attention gathers the
  // keys and values of the other shards over the CP group.
  int cp = 1;
  // Decode context parallelism: each request's cached keys and values split
  // by position over `dcp` consecutive attention-TP ranks that hold the same
  // key/value heads (the token at position p on the group's rank p mod dcp,
  // as vLLM's and SGLang's --decode-context-parallel-size interleave them);
  // each rank attends every query head of the group over its share and the
  // partial outputs merge by their log-sum-exp in the canonical order.
  int dcp = 1;
  int dense_tp = 0;  // 0 means "the whole TP group" (the default width)
  MoeMode moe = MoeMode::kTp;
  // All-to-all MoE only: the ranks one expert set is spread over, ep
  // consecutive ranks of the TP group; tp / ep such groups each hold every
  // expert. 0 means "the whole TP group" (as SGLang and vLLM run it).
  int ep = 0;
  // Under attention DP: the LM head splits the vocabulary over each DP
  // group's attention-TP ranks (SGLang's --enable-dp-lm-head) instead of
  // gathering every DP group's rows to the whole TP group.
  bool dp_lm_head = false;
  bool input_scattered = false;
  Reduction reduction = Reduction::kAr;
  int pp = 1;
  std::vector<int> pp_split;  // layers per pipeline rank; empty = even split

  int attn_tp() const { return tp / (attn_dp * cp); }
  // Attention-row shards: every DP group's CP ranks, each holding its own rows.
  int shards() const { return attn_dp * cp; }
  int dense_tp_size() const { return dense_tp == 0 ? tp : dense_tp; }
  int ep_size() const { return ep == 0 ? tp : ep; }
  bool allows_reduce_scatter() const { return reduction == Reduction::kRs || reduction == Reduction::kRsRsv; }
  bool allows_reduce_scatterv() const { return reduction == Reduction::kRsv || reduction == Reduction::kRsRsv; }
  bool operator==(const ParallelConfig&) const = default;
};

// Where a dense FFN runs, resolved from dense_tp.
enum class DenseWidth {
  kTp,      // the whole TP group, on every row
  kAttnTp,  // the attention-TP group, on its attention rows
  kRank,    // one rank: replicated weights, its own slice of rows
};
DenseWidth DenseWidthOf(const ParallelConfig& cfg);

// Checks sizes and combinations; the message says what would work.
Status Validate(const ParallelConfig& cfg);

// The canonical reduction (docs/design.md §6) sums every owed sum by one fixed binary
// tree over K-blocks; each rank of the summing group holds an aligned
// subtree of it. The block count is 8, or the TP size where that is larger,
// so every group has at least one block per rank.
inline constexpr int kDefaultKBlocks = 8;
// The canonical attention order's key classes (seam/runtime/kernels.h): the
// key at position p is in class p mod 8, and a DCP size divides it so that
// each DCP rank's positions are one aligned subtree of the classes' merge.
inline constexpr int kKeyClasses = 8;
int CanonicalKBlocks(const ParallelConfig& cfg);
// Whether every group that may complete a sum (tp, attn_tp, dense_tp) is a
// power of two: a binary tree has no aligned subtree for three ranks.
Status CheckSumGroups(const ParallelConfig& cfg);

// A one-line summary: "tp=4 attn_dp=2 (attn_tp=2) dense_tp=1 moe=a2a ...".
std::string Describe(const ParallelConfig& cfg);

std::string_view Name(MoeMode m);
std::string_view Name(Reduction r);
Expected<MoeMode> ParseMoeMode(std::string_view text);
Expected<Reduction> ParseReduction(std::string_view text);

// Collective groups of a rank, by role.
enum class Group {
  kAttnTp,  // the ranks that split one attention-DP group's heads
  kDp,      // attention-row peers: same attn_tp_rank in every shard (every DP group's every CP rank)
  kTp,      // the whole TP group of the pipeline rank
  kPp,      // the ranks at the same TP position on every pipeline rank
  kEp,      // an all-to-all MoE's expert group: ep consecutive ranks of the TP group
  kCp,      // context-parallel peers: the same DP group and attn_tp_rank, every CP rank
  kDcp,     // decode-context-parallel peers: dcp consecutive ranks of one attention-TP group
};
inline constexpr std::array kEveryGroup = {Group::kAttnTp, Group::kDp, Group::kTp, Group::kPp,
                                           Group::kEp,     Group::kCp, Group::kDcp};
// The group an all-to-all MoE exchanges rows over: the TP group when ep
// spans it, so a plan names the EP group only where it is apart from TP.
Group A2aGroup(const ParallelConfig& cfg);
std::string_view Name(Group g);
Expected<Group> ParseGroup(std::string_view text);
int GroupSize(const ParallelConfig& cfg, Group g);

struct RankCoord {
  int pp_rank = 0;
  int dp_rank = 0;
  int attn_tp_rank = 0;
  int cp_rank = 0;
  bool operator==(const RankCoord&) const = default;
};

// The attention-row shard a rank's rows are: dp_rank * cp + cp_rank.
int ShardOf(const ParallelConfig& cfg, const RankCoord& c);

int WorldSize(const ParallelConfig& cfg);
int TpRank(const ParallelConfig& cfg, const RankCoord& c);
int GlobalRank(const ParallelConfig& cfg, const RankCoord& c);
RankCoord CoordOf(const ParallelConfig& cfg, int global_rank);
// The global ranks of `g` that contain `global_rank`, in group order.
std::vector<int> GroupRanks(const ParallelConfig& cfg, Group g, int global_rank);

}  // namespace seam
