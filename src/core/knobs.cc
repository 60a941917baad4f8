#include "seam/knobs.h"

#include <fmt/format.h>

#include <iterator>
#include <type_traits>

namespace seam {
namespace {

int RanksOfSplit(const ParallelConfig& c) { return c.pp_split.empty() ? 1 : static_cast<int>(c.pp_split.size()); }

// A new knob is a field of ParallelConfig and a row here; its place in the
// text form's header and in Describe is given below the table.
constexpr Knob kKnobs[] = {
    {.field = &ParallelConfig::tp,
     .json = "tp",
     .text = "tp",
     .python = "tp",
     .flag = "--tp",
     .value_name = "N",
     .help = "tensor-parallel size of each pipeline rank",
     .mention = Mention::kAlways,
     .sglang = "--tp-size",
     .vllm = "--tensor-parallel-size"},
    {.field = &ParallelConfig::attn_dp,
     .json = "attn_dp",
     .text = "attn_dp",
     .python = "attn_dp",
     .flag = "--attn-dp",
     .value_name = "N",
     .help = "attention data-parallel groups (attn_tp = tp / attn_dp)",
     .mention = Mention::kInSummary,
     .sglang = "--enable-dp-attention --dp-size",
     .vllm = "--data-parallel-size"},
    {.field = &ParallelConfig::cp,
     .json = "cp",
     .text = "cp",
     .python = "cp",
     .flag = "--cp",
     .value_name = "N",
     .help = "context-parallel ranks per attention-DP group: each request's tokens split zig-zag over them "
             "(attn_tp = tp / (attn_dp * cp))",
     .added_later = true,
     .sglang = "--attn-cp-size",
     .vllm = "--prefill-context-parallel-size"},
    {.field = &ParallelConfig::dcp,
     .json = "dcp",
     .text = "dcp",
     .python = "dcp",
     .flag = "--dcp",
     .value_name = "N",
     .help = "decode context parallelism: each request's cached keys and values split by position over dcp "
             "attention-TP ranks that hold the same key/value heads, partial outputs merged by log-sum-exp",
     .added_later = true,
     .sglang = "--dcp-size",
     .vllm = "--decode-context-parallel-size"},
    {.field = &ParallelConfig::dense_tp,
     .json = "dense_tp",
     .text = "dense_tp",
     .python = "dense_tp",
     .flag = "--dense-tp",
     .value_name = "N",
     .help = "the dense FFN's TP width, a number: the --tp size, tp / attn_dp or 1 (default: the --tp size)",
     .mention = Mention::kInSummary,
     .size = &ParallelConfig::dense_tp_size,
     .sglang = "--moe-dense-tp-size"},
    {.field = &ParallelConfig::moe,
     .json = "moe",
     .text = "moe",
     .python = "moe",
     .flag = "--moe",
     .value_name = "tp|a2a",
     .help = "MoE mode: tp (TP-MoE) or a2a (all-to-all dispatch)",
     .mention = Mention::kInSummary,
     .sglang = "--moe-a2a-backend",
     .vllm = "--enable-expert-parallel --all2all-backend"},
    {.field = &ParallelConfig::ep,
     .json = "ep",
     .text = "ep",
     .python = "ep",
     .flag = "--ep",
     .value_name = "N",
     .help = "a2a MoE: ranks each expert set is spread over, dividing tp (default: tp; the rest hold copies)",
     .size = &ParallelConfig::ep_size,
     .sglang = "--ep-size"},
    {.field = &ParallelConfig::dp_lm_head,
     .json = "dp_lm_head",
     .text = "dp_lm_head",
     .python = "dp_lm_head",
     .flag = "--dp-lm-head",
     .help = "under --attn-dp: each DP group's LM head splits the vocabulary over its attention-TP ranks",
     .sglang = "--enable-dp-lm-head"},
    {.field = &ParallelConfig::input_scattered,
     .json = "input_scattered",
     .text = "scattered",
     .python = "input_scattered",
     .flag = "--input-scattered",
     .help = "also bind input-scattered batches",
     .sglang = "--enable-attn-tp-input-scattered"},
    {.field = &ParallelConfig::reduction,
     .json = "reduction",
     .text = "reduction",
     .python = "reduction",
     .flag = "--reduction",
     .value_name = "ar|rs|rsv|rs+rsv",
     .help = "boundary reduction: ar, rs, rsv or rs+rsv",
     .mention = Mention::kInSummary,
     .vllm = "--all2all-backend"},
    {.field = &ParallelConfig::pp,
     .json = "pp",
     .text = "pp",
     .python = "pp",
     .flag = "--pp",
     .value_name = "N",
     .help = "pipeline ranks (default 1, or as many as --pp-split names)",
     .mention = Mention::kInSummary,
     .default_from = RanksOfSplit,
     .sglang = "--pp-size",
     .vllm = "--pipeline-parallel-size"},
    {.field = &ParallelConfig::pp_split,
     .json = "pp_split",
     .text = "split",
     .python = "pp_split",
     .flag = "--pp-split",
     .value_name = "N+N...",
     .help = "layers per pipeline rank, e.g. 1+3 (default: even, remainder last)",
     .sglang = "SGLANG_PP_LAYER_PARTITION",
     .vllm = "VLLM_PP_LAYER_PARTITION"},
};

constexpr const Knob* Row(std::string_view json) {
  for (const Knob& k : kKnobs) {
    if (k.json == json) return &k;
  }
  return nullptr;
}

// The text form's header and Describe name the knobs in the orders they had
// before the table (plans on disk and the tables people read stay as they
// were); a new knob goes last in each.
constexpr const Knob* kTextOrder[] = {Row("tp"), Row("attn_dp"),    Row("dense_tp"),  Row("moe"),
                                      Row("ep"), Row("dp_lm_head"), Row("reduction"), Row("input_scattered"),
                                      Row("pp"), Row("pp_split"),   Row("cp"),        Row("dcp")};
// cp is named only when set, so it may stand beside the attention-DP size
// whose attention-TP size it shares.
constexpr const Knob* kDescribeOrder[] = {
    Row("tp"),  Row("attn_dp"), Row("cp"),        Row("dcp"),        Row("dense_tp"),
    Row("moe"), Row("ep"),      Row("reduction"), Row("dp_lm_head"), Row("input_scattered"),
    Row("pp"),  Row("pp_split")};

template <size_t N>
constexpr bool EveryRowOnce(const Knob* const (&order)[N]) {
  if (N != std::size(kKnobs)) return false;
  for (const Knob& k : kKnobs) {
    int seen = 0;
    for (const Knob* o : order) seen += o == &k ? 1 : 0;
    if (seen != 1) return false;
  }
  return true;
}
static_assert(EveryRowOnce(kTextOrder), "the text form's header names every knob once");
static_assert(EveryRowOnce(kDescribeOrder), "Describe names every knob once");

// Each enum a knob holds: its values and its parser (whose error lists the names).
std::span<const MoeMode> Values(MoeMode) { return kEveryMoeMode; }
std::span<const Reduction> Values(Reduction) { return kEveryReduction; }
Expected<MoeMode> Parse(MoeMode, std::string_view text) { return ParseMoeMode(text); }
Expected<Reduction> Parse(Reduction, std::string_view text) { return ParseReduction(text); }

template <class T>
using FieldType = std::remove_cvref_t<decltype(std::declval<ParallelConfig&>().*std::declval<T>())>;

// A value as the command line and Describe write it: 4, a2a, 1+3 (a switch
// has no word of its own: its flag is the word).
std::string WordOf(const KnobValue& v) {
  if (const auto* n = std::get_if<int>(&v)) return std::to_string(*n);
  if (const auto* split = std::get_if<std::vector<int>>(&v)) return SplitText(*split);
  const auto* name = std::get_if<std::string>(&v);
  SEAM_CHECK(name != nullptr, "a switch is written as its flag");
  return *name;
}

// The knob after which Describe names the attention-TP size: cp where it is
// set, else attn_dp.
const Knob* AttnTpAfter(const ParallelConfig& cfg) { return cfg.cp > 1 ? Row("cp") : Row("attn_dp"); }

}  // namespace

std::span<const Knob> Knobs() { return kKnobs; }
std::span<const Knob* const> TextOrder() { return kTextOrder; }
std::span<const Knob* const> DescribeOrder() { return kDescribeOrder; }

KnobKind KindOf(const Knob& k) {
  // By KnobField's alternative: a count, a switch, the enums, a split.
  constexpr KnobKind kByAlternative[] = {KnobKind::kCount, KnobKind::kBool, KnobKind::kEnum, KnobKind::kEnum,
                                         KnobKind::kSplit};
  static_assert(std::size(kByAlternative) == std::variant_size_v<KnobField>);
  return kByAlternative[k.field.index()];
}

std::vector<std::string_view> ChoicesOf(const Knob& k) {
  return std::visit(
      [](auto member) {
        using T = FieldType<decltype(member)>;
        std::vector<std::string_view> names;
        if constexpr (std::is_enum_v<T>) {
          for (T v : Values(T{})) names.push_back(Name(v));
        }
        return names;
      },
      k.field);
}

bool FollowsOthers(const Knob& k) { return k.size != nullptr || k.default_from != nullptr; }

KnobValue ValueOf(const Knob& k, const ParallelConfig& c) {
  return std::visit(
      [&c](auto member) -> KnobValue {
        using T = FieldType<decltype(member)>;
        if constexpr (std::is_enum_v<T>) {
          return std::string(Name(c.*member));
        } else {
          return c.*member;
        }
      },
      k.field);
}

KnobValue ResolvedValueOf(const Knob& k, const ParallelConfig& c) {
  if (k.size != nullptr) return (c.*k.size)();
  return ValueOf(k, c);
}

Status SetValue(const Knob& k, ParallelConfig& c, const KnobValue& v) {
  return std::visit(
      [&c, &v, &k](auto member) -> Status {
        using T = FieldType<decltype(member)>;
        if constexpr (std::is_enum_v<T>) {
          const std::string* name = std::get_if<std::string>(&v);
          SEAM_CHECK(name != nullptr, fmt::format("{} takes a name", k.json));
          Expected<T> parsed = Parse(T{}, *name);
          if (!parsed) return parsed.error();
          c.*member = *parsed;
        } else {
          const T* value = std::get_if<T>(&v);
          SEAM_CHECK(value != nullptr, fmt::format("{} was given a value of another kind", k.json));
          c.*member = *value;
        }
        return Status::Ok();
      },
      k.field);
}

bool IsSet(const Knob& k, const ParallelConfig& c) {
  ParallelConfig at_default = c;
  std::visit([&at_default](auto member) { at_default.*member = ParallelConfig{}.*member; }, k.field);
  return ResolvedValueOf(k, c) != ResolvedValueOf(k, at_default);
}

std::string SplitText(const std::vector<int>& split) { return fmt::format("{}", fmt::join(split, "+")); }

Expected<ParallelConfig> CompleteConfig(ParallelConfig c, const std::vector<bool>& given) {
  SEAM_CHECK(given.size() == std::size(kKnobs), "one entry per knob");
  for (size_t i = 0; i < given.size(); ++i) {
    const Knob& k = kKnobs[i];
    if (!given[i] && k.default_from != nullptr) c.*std::get<int ParallelConfig::*>(k.field) = k.default_from(c);
  }
  SEAM_RETURN_IF_ERROR(Validate(c));
  return c;
}

ParallelConfig ResolvedConfig(const ParallelConfig& c) {
  ParallelConfig out = c;
  for (const Knob& k : kKnobs) {
    if (k.size != nullptr) out.*std::get<int ParallelConfig::*>(k.field) = (c.*k.size)();
  }
  return out;
}

std::string KnobFlags(const ParallelConfig& c) {
  std::vector<std::string> words;
  for (const Knob& k : kKnobs) {
    if (k.mention != Mention::kAlways && !IsSet(k, c)) continue;
    words.emplace_back(k.flag);
    if (KindOf(k) != KnobKind::kBool) words.push_back(WordOf(ResolvedValueOf(k, c)));
  }
  return fmt::format("{}", fmt::join(words, " "));
}

std::string Describe(const ParallelConfig& cfg) {
  const Knob* const kAttnTp = AttnTpAfter(cfg);
  std::vector<std::string> words;
  for (const Knob* k : kDescribeOrder) {
    if (k->mention == Mention::kWhenSet && !IsSet(*k, cfg)) continue;
    // A switch is named by its flag's word ("dp-lm-head"), the rest as key=value.
    if (KindOf(*k) == KnobKind::kBool) {
      words.emplace_back(k->flag.substr(2));
    } else {
      words.push_back(fmt::format("{}={}", k->json, WordOf(ResolvedValueOf(*k, cfg))));
    }
    // The attention-TP size attn_dp (and cp) imply: the group most plans speak of.
    if (k == kAttnTp) words.push_back(fmt::format("(attn_tp={})", cfg.attn_tp()));
  }
  return fmt::format("{}", fmt::join(words, " "));
}

}  // namespace seam
