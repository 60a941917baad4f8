#include <fmt/format.h>

#include <charconv>

#include "cli.h"

namespace seam::cli {
namespace {

// "1+3" or "1,3" -> {1, 3}.
Expected<std::vector<int>> ParseSplit(const std::string& text) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = text.find_first_of("+,", pos);
    const std::string part = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    int v = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size()) {
      return InvalidArgument(fmt::format("--pp-split {} is not a list of layer counts like 1+3 or 2,2", text));
    }
    out.push_back(v);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

}  // namespace

void AddParallelFlags(CLI::App& cmd, ParallelFlags& f) {
  cmd.add_option("--tp", f.tp, "tensor-parallel size of each pipeline rank")->capture_default_str();
  cmd.add_option("--attn-dp", f.attn_dp, "attention data-parallel groups (attn_tp = tp / attn_dp)")
      ->capture_default_str();
  cmd.add_option("--dense-tp", f.dense_tp, "dense FFN width: tp, attn_tp or 1 (default: tp)");
  cmd.add_option("--moe", f.moe, "MoE mode: tp (TP-MoE) or a2a (all-to-all dispatch)")->capture_default_str();
  cmd.add_flag("--input-scattered", f.input_scattered, "also bind input-scattered batches");
  cmd.add_option("--reduction", f.reduction, "boundary reduction: ar, rs, rsv or rs+rsv")->capture_default_str();
  cmd.add_option("--pp", f.pp, "pipeline ranks (default 1, or as many as --pp-split names)")
      ->each([&f](const std::string&) { f.pp_given = true; });
  cmd.add_option("--pp-split", f.pp_split, "layers per pipeline rank, e.g. 1+3 (default: even, remainder last)");
}

Expected<ParallelConfig> ToConfig(const ParallelFlags& f) {
  Expected<MoeMode> moe = ParseMoeMode(f.moe);
  if (!moe) return InvalidArgument("--moe: " + moe.error().message);
  Expected<Reduction> reduction = ParseReduction(f.reduction);
  if (!reduction) return InvalidArgument("--reduction: " + reduction.error().message);
  ParallelConfig cfg{.tp = f.tp, .attn_dp = f.attn_dp, .dense_tp = f.dense_tp, .moe = *moe,
                     .input_scattered = f.input_scattered, .reduction = *reduction, .pp = f.pp};
  if (!f.pp_split.empty()) {
    Expected<std::vector<int>> split = ParseSplit(f.pp_split);
    if (!split) return split.error();
    cfg.pp_split = *split;
    if (!f.pp_given) cfg.pp = static_cast<int>(split->size());
  }
  SEAM_RETURN_IF_ERROR(Validate(cfg));
  return cfg;
}

}  // namespace seam::cli
