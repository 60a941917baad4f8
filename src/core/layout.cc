#include "seam/layout.h"

#include <fmt/format.h>

#include "core/enum_text.h"

namespace seam {

std::string_view Name(Rows r) {
  if (r.attn_tp()) return "slice";
  if (r.dp()) return "attn";
  return "full";
}

Expected<Rows> ParseRows(std::string_view text, const ParallelConfig& cfg) {
  if (text == "full") return Rows::Full();
  if (text == "attn") return Rows::Attention(cfg);
  if (text == "slice") return Rows::Slice(cfg);
  return Malformed(fmt::format("unknown row layout '{}'; expected one of: full, attn, slice", text));
}

Rows AxesOf(const ParallelConfig& cfg, Group g) {
  switch (g) {
    case Group::kAttnTp: return Rows::FromAxes(false, cfg.attn_tp() > 1);
    case Group::kDp: return Rows::FromAxes(cfg.shards() > 1, false);
    case Group::kTp: return Rows::FromAxes(cfg.shards() > 1, cfg.attn_tp() > 1);
    case Group::kCp: break;   // exchanges keys and values: every member keeps its own rows
    case Group::kDcp: break;  // exchanges queries and partial outputs of the same rows
    case Group::kPp: break;   // pipeline neighbours shard layers, not rows
    case Group::kEp: break;   // an expert group exchanges rows and hands each back where it was
  }
  return Rows::Full();
}

Group GatherGroup(Rows from, Rows to) {
  SEAM_CHECK(to.Covers(from) && !(from == to), "a gather must drop at least one axis");
  const bool dp = from.dp() && !to.dp();
  const bool attn_tp = from.attn_tp() && !to.attn_tp();
  if (dp && attn_tp) return Group::kTp;
  return dp ? Group::kDp : Group::kAttnTp;
}

std::vector<RowSpan> EvenSpans(int rows, int n) {
  SEAM_CHECK(n > 0 && rows >= 0, "spans of a group of no ranks");
  const int chunk = (rows + n - 1) / n;
  std::vector<RowSpan> out;
  for (int i = 0; i < n; ++i) out.push_back({std::min(rows, i * chunk), std::min(rows, (i + 1) * chunk)});
  return out;
}

double RowFraction(const ParallelConfig& cfg, Rows r) {
  double f = 1.0;
  if (r.dp()) f /= cfg.shards();
  if (r.attn_tp()) f /= cfg.attn_tp();
  return f;
}

constexpr auto kOwed =
    EnumNames<Owed>("owed sum", {{Owed::kNothing, "-"}, {Owed::kAttnTp, "attn_tp"}, {Owed::kTp, "tp"}});

std::string_view Name(Owed o) { return kOwed.Name(o); }
Expected<Owed> ParseOwed(std::string_view text) { return kOwed.Parse(text); }

Owed Owe(const ParallelConfig& cfg, Owed o) {
  if (o == Owed::kNothing) return o;
  return GroupSize(cfg, GroupOf(o)) > 1 ? o : Owed::kNothing;
}

Group GroupOf(Owed o) {
  SEAM_CHECK(o != Owed::kNothing, "a complete value has no sum group");
  return o == Owed::kAttnTp ? Group::kAttnTp : Group::kTp;
}

}  // namespace seam
