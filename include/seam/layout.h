// seam/layout.h — which rows a rank holds, and which sum a value still owes.
//
// Rows are the set of token axes a rank's rows are sharded over. An axis of
// size 1 is dropped, so two layouts are equal exactly when every rank holds
// the same tokens (under attn_dp=1 the attention rows *are* the full rows).
//
//   Rows at = Rows::Attention(cfg), s = Rows::Slice(cfg);
//   Rows g = AxesOf(cfg, Group::kAttnTp);   // what an attn_tp collective shards
//   assert(at.With(g) == s);                // a reduce-scatter over attn_tp
#pragma once

#include <string_view>
#include <vector>

#include "seam/topology.h"

namespace seam {

class Rows {
 public:
  constexpr Rows() = default;
  static constexpr Rows Full() { return Rows(false, false); }
  // The dp axis is the attention-row shards: every DP group's CP ranks.
  static Rows Attention(const ParallelConfig& cfg) { return Rows(cfg.shards() > 1, false); }
  static Rows Slice(const ParallelConfig& cfg) { return Rows(cfg.shards() > 1, cfg.attn_tp() > 1); }
  static constexpr Rows FromAxes(bool dp, bool attn_tp) { return Rows(dp, attn_tp); }

  constexpr bool dp() const { return dp_; }
  constexpr bool attn_tp() const { return attn_tp_; }
  // Rows sharded further over `axes` (what a reduce-scatter or a slice does).
  constexpr Rows With(Rows axes) const { return Rows(dp_ || axes.dp_, attn_tp_ || axes.attn_tp_); }
  // Rows with `axes` gathered back (what an all-gather does).
  constexpr Rows Without(Rows axes) const { return Rows(dp_ && !axes.dp_, attn_tp_ && !axes.attn_tp_); }
  constexpr bool Shares(Rows axes) const { return (dp_ && axes.dp_) || (attn_tp_ && axes.attn_tp_); }
  // True when every axis of *this is also an axis of `finer`: `finer` is a
  // sub-slice of these rows that a rank can take locally.
  constexpr bool Covers(Rows finer) const { return (!dp_ || finer.dp_) && (!attn_tp_ || finer.attn_tp_); }
  constexpr bool operator==(const Rows&) const = default;

 private:
  constexpr Rows(bool dp, bool attn_tp) : dp_(dp), attn_tp_(attn_tp) {}
  bool dp_ = false;
  bool attn_tp_ = false;
};

// "full" (every row of the batch), "attn" (the attention rows: its DP
// group's, or under context parallelism its CP rank's sequence shard of
// them) or "slice" (this rank's 1/attn_tp share of those rows).
std::string_view Name(Rows r);
Expected<Rows> ParseRows(std::string_view text, const ParallelConfig& cfg);

// The token axes a collective over `g` spans (size-1 axes dropped).
Rows AxesOf(const ParallelConfig& cfg, Group g);
// The group whose collective gathers `from` back to `to` (to must cover less).
Group GatherGroup(Rows from, Rows to);
// Fraction of the batch's tokens a rank holds on these rows.
double RowFraction(const ParallelConfig& cfg, Rows r);

// A run of rows [begin, end) of a batch.
struct RowSpan {
  int begin = 0;
  int end = 0;  // exclusive
  int rows() const { return end - begin; }
  bool operator==(const RowSpan&) const = default;
};

// The rows a group of `n` members splits `rows` into: chunks of ceil(rows/n),
// the last ones shorter or empty.
std::vector<RowSpan> EvenSpans(int rows, int n);

// The sum a value still owes: nothing, or one sum over one group.
enum class Owed { kNothing, kAttnTp, kTp };
std::string_view Name(Owed o);
Expected<Owed> ParseOwed(std::string_view text);
// The owed sum as produced on this configuration: a sum over a group of one
// rank is already complete.
Owed Owe(const ParallelConfig& cfg, Owed o);
Group GroupOf(Owed o);  // o must not be kNothing

}  // namespace seam
