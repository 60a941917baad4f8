// Nemotron-NAS (DeciLM): a block list whose layers may skip attention or FFN.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seam/families.h"
#include "stack/hf_reader.h"

namespace seam::hf {

namespace {

// round_up(int(2 * ffn_mult * hidden / 3), 256), as DeciLM computes it.
int NasFfnWidth(const Reader& r, const std::string& path, double mult, int hidden) {
  const double raw = 2 * mult * hidden / 3;
  if (!(raw < static_cast<double>(kMaxSize))) {
    r.Fail(fmt::format("{} {} gives an FFN width above {}", path, mult, kMaxSize));
  }
  const auto n = static_cast<int64_t>(raw);
  if (n < 1) r.Fail(fmt::format("{} {} gives an FFN width of 0", path, mult));
  return static_cast<int>((n + 255) / 256 * 256);
}

NasBlock::Part NasPart(const Reader& part) {
  const bool no_op = part.BoolOr("no_op", false);
  const bool linear = part.BoolOr("replace_with_linear", false);
  if (no_op && linear)
    part.Fail(fmt::format("{}no_op and {}replace_with_linear are both true", part.Path(""), part.Path("")));
  return no_op ? NasBlock::Part::kNoOp : linear ? NasBlock::Part::kLinear : NasBlock::Part::kPresent;
}

}  // namespace

Model NemotronNas(const Reader& r) {
  Common c = ReadCommon(r, "rms_norm_eps", 1e-6);  // DeciLM's LlamaConfig default
  ModelDims& d = c.dims;
  d.heads = r.Int("num_attention_heads", 1, kMaxSize);
  // DeciLM's heads are hidden_size / num_attention_heads wide. Super-49B's
  // DeciLM never reads head_dim and later ones do: a head_dim that differs
  // would run differently under each, so it is refused.
  if (c.hidden % d.heads != 0) {
    r.Fail(fmt::format("hidden_size {} is not divisible by num_attention_heads {}", c.hidden, d.heads));
  }
  d.head_dim = c.hidden / d.heads;
  if (r.Given("head_dim") != nullptr) {
    if (const int given = r.Int("head_dim", 1, kMaxSize); given != d.head_dim) {
      r.Fail(
          fmt::format("head_dim is {}; seam models only hidden_size / num_attention_heads = {} (DeciLM "
                      "versions differ on reading it)",
                      given, d.head_dim));
    }
  }
  RefuseActivationAndBiases(r, /*mlp_bias=*/true);
  // Later DeciLM versions' keys, each at the value Super-49B's code runs.
  OnlyDefault(r, "position_embedding_type", "rope", "seam's Nemotron-NAS attention turns by rope");
  OnlyDefault(r, "o_proj_bias", false, "seam's Nemotron-NAS attention has no bias");
  ReadRope(r, d);
  // num_key_value_heads and intermediate_size are DeciLM's per block
  // (n_heads_in_group, ffn_mult): the model's own are its first block's.
  const json& configs = r.List("block_configs");
  if (configs.size() != static_cast<size_t>(c.layers)) {
    r.Fail(fmt::format("block_configs has {} entries but num_hidden_layers is {}", configs.size(), c.layers));
  }
  std::vector<NasBlock> blocks;
  for (size_t i = 0; i < configs.size(); ++i) {
    const Reader block = r.ToObject(fmt::format("block_configs[{}]", i), configs[i]);
    const Reader attention = block.Object("attention");
    const Reader ffn = block.Object("ffn");
    NasBlock b{.attention = NasPart(attention), .ffn = NasPart(ffn)};
    if (b.attention == NasBlock::Part::kPresent) {
      OnlyDefault(attention, "window_length", nullptr, "seam's Nemotron-NAS attention is over the whole sequence");
      OnlyDefault(attention, "num_sink_tokens", nullptr, "seam's Nemotron-NAS attention has no sink tokens");
      OnlyDefault(attention, "unshifted_sink", false, "seam's Nemotron-NAS attention has no sink tokens");
      const int group = attention.Int("n_heads_in_group", 1, kMaxSize);
      if (d.heads % group != 0) {
        r.Fail(fmt::format("{} {} does not divide num_attention_heads {}", attention.Path("n_heads_in_group"), group,
                           d.heads));
      }
      b.kv_heads = d.heads / group;
      if (d.kv_heads == 0) d.kv_heads = b.kv_heads;
    }
    if (b.ffn == NasBlock::Part::kPresent) {
      b.ffn_width = NasFfnWidth(r, ffn.Path("ffn_mult"), ffn.Number("ffn_mult", 0, 1e6), c.hidden);
      if (d.intermediate == 0) d.intermediate = b.ffn_width;
    }
    blocks.push_back(b);
  }
  if (d.kv_heads == 0) d.kv_heads = d.heads;
  return NasModel("nemotron-nas", c.hidden, d, blocks);
}

}  // namespace seam::hf
