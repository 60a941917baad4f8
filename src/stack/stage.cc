#include "seam/stage.h"

#include <fmt/format.h>

#include "core/enum_text.h"

namespace seam {

StageDecl AttentionStage(const AttentionOptions& o) {
  return {.kind = StageKind::kAttention,
          .attention_sum = o.sum,
          .gathers_input = o.gathers_input,
          .update = o.update,
          .read = o.read,
          .gather_width = o.gather_width,
          .window = o.window,
          .kv_heads = o.kv_heads};
}

StageDecl MixerStage(const StageOptions& o) { return {.kind = StageKind::kMixer, .update = o.update, .read = o.read}; }

StageDecl DenseFfnStage(const DenseOptions& o) {
  return {.kind = StageKind::kDenseFfn, .update = o.update, .read = o.read, .ffn_width = o.width};
}

StageDecl SparseFfnStage(const SparseOptions& o) {
  return {.kind = StageKind::kSparseFfn, .update = o.update, .read = o.read, .top_k = o.top_k, .a2a = o.a2a};
}

StageDecl NoOpStage() { return {.kind = StageKind::kNoOp}; }

StageDecl LinearStage(const StageOptions& o) {
  return {.kind = StageKind::kLinear, .update = o.update, .read = o.read};
}

std::string FirstDifference(const StageDecl& a, const StageDecl& b) {
  auto text = [](std::string_view field, auto x, auto y) { return fmt::format("{}={} vs {}={}", field, x, field, y); };
  if (a.kind != b.kind) return text("kind", Name(a.kind), Name(b.kind));
  if (a.attention_sum != b.attention_sum) return text("attention_sum", Name(a.attention_sum), Name(b.attention_sum));
  if (a.gathers_input != b.gathers_input) return text("gathers_input", a.gathers_input, b.gathers_input);
  if (a.update != b.update) return text("update", Name(a.update), Name(b.update));
  if (a.read != b.read) return text("read", Name(a.read), Name(b.read));
  if (a.gather_width != b.gather_width) return text("gather_width", a.gather_width, b.gather_width);
  if (a.top_k != b.top_k) return text("top_k", a.top_k, b.top_k);
  if (a.a2a != b.a2a) return text("a2a", a.a2a, b.a2a);
  if (a.window != b.window) return text("window", a.window, b.window);
  if (a.kv_heads != b.kv_heads) return text("kv_heads", a.kv_heads, b.kv_heads);
  if (a.ffn_width != b.ffn_width) return text("ffn_width", a.ffn_width, b.ffn_width);
  return "";
}

bool IsFfn(const StageDecl& d) { return d.kind == StageKind::kDenseFfn || d.kind == StageKind::kSparseFfn; }

bool IsAttentionLike(const StageDecl& d) { return d.kind == StageKind::kAttention || d.kind == StageKind::kMixer; }

bool IsAlwaysPartialAttention(const StageDecl& d) {
  return d.kind == StageKind::kAttention && d.attention_sum == AttentionSum::kAlwaysPartial;
}

namespace {

constexpr auto kStageKinds = EnumNames<StageKind>("stage kind", {{StageKind::kAttention, "attention"},
                                                                 {StageKind::kMixer, "mixer"},
                                                                 {StageKind::kDenseFfn, "dense-ffn"},
                                                                 {StageKind::kSparseFfn, "sparse-ffn"},
                                                                 {StageKind::kNoOp, "no-op"},
                                                                 {StageKind::kLinear, "linear"}});
constexpr auto kAttentionSums = EnumNames<AttentionSum>(
    "attention sum",
    {{AttentionSum::kAlwaysPartial, "always-partial"}, {AttentionSum::kReducesItself, "reduces-itself"}});
constexpr auto kUpdates = EnumNames<UpdateKind>(
    "update kind", {{UpdateKind::kPlainAdd, "plain-add"}, {UpdateKind::kHyperConnection, "hyper-connection"}});
constexpr auto kReads =
    EnumNames<ReadKind>("read kind", {{ReadKind::kPlainNorm, "plain-norm"}, {ReadKind::kAllRows, "all-rows"}});

}  // namespace

std::string_view Name(StageKind k) { return kStageKinds.Name(k); }
std::string_view Name(AttentionSum s) { return kAttentionSums.Name(s); }
std::string_view Name(UpdateKind u) { return kUpdates.Name(u); }
std::string_view Name(ReadKind r) { return kReads.Name(r); }
Expected<StageKind> ParseStageKind(std::string_view text) { return kStageKinds.Parse(text); }
Expected<AttentionSum> ParseAttentionSum(std::string_view text) { return kAttentionSums.Parse(text); }
Expected<UpdateKind> ParseUpdateKind(std::string_view text) { return kUpdates.Parse(text); }
Expected<ReadKind> ParseReadKind(std::string_view text) { return kReads.Parse(text); }

}  // namespace seam
