// The corpus's subjects and scenarios: which models, under which
// configurations, and their names.
#include <fmt/format.h>

#include <charconv>

#include "corpus.h"
#include "seam/bind.h"
#include "seam/families.h"
#include "seam/pipeline.h"

namespace seam::golden {
namespace {

// A model of the given layers, named after its subject, declared stage by stage.
Model Stack(const std::string& name, int hidden, int streams, std::vector<std::vector<StageDecl>> layers) {
  const int n = static_cast<int>(layers.size());
  return {.name = name, .num_layers = n, .hidden = hidden, .residual_streams = streams, .layer = [layers](int i) {
            return layers[static_cast<size_t>(i)];
          }};
}

std::vector<std::vector<StageDecl>> Repeat(int n, const std::vector<StageDecl>& layer) {
  return std::vector<std::vector<StageDecl>>(static_cast<size_t>(n), layer);
}

const StageDecl kPartial = AttentionStage();
const StageDecl kReducing = AttentionStage({.sum = AttentionSum::kReducesItself});
const StageDecl kDense = DenseFfnStage();
const StageDecl kSparse = SparseFfnStage({.top_k = 2});

// The seed PR's stack shapes that the catalogue does not already hold.
std::vector<Subject> SeedShapes() {
  constexpr UpdateKind kHc = UpdateKind::kHyperConnection;
  return {
      {"decoder-af-reducing", "[A F] x 4, attentions that complete their own sum (an output transform)",
       [] {
         return Stack("decoder-af-reducing", 64, 1, Repeat(4, {kReducing, kDense}));
       }},
      {"decoder-ae-reducing", "[A E] x 4, attentions that complete their own sum (an output transform)",
       [] {
         return Stack("decoder-ae-reducing", 64, 1, Repeat(4, {kReducing, kSparse}));
       }},
      {"decoder-hc",
       "[A F] [A F] [A E] [A E], every stage a hyper-connection update (2 streams), attentions "
       "that complete their own sum",
       [] {
         const StageDecl a = AttentionStage({.sum = AttentionSum::kReducesItself, .update = kHc});
         const StageDecl f = DenseFfnStage({.update = kHc});
         const StageDecl e = SparseFfnStage({.top_k = 2, .update = kHc});
         return Stack("decoder-hc", 64, 2, {{a, f}, {a, f}, {a, e}, {a, e}});
       }},
      {"decoder-af-hc-partial", "[A F] x 2, always-partial attentions with a hyper-connection update (rejected)",
       [] {
         return Stack("decoder-af-hc-partial", 64, 4,
                      Repeat(2, {AttentionStage({.update = kHc}), DenseFfnStage({.update = kHc})}));
       }},
      {"nemotron-h-short", "Nemotron-H pattern 'M*-E': mixer, attention, dense FFN, MoE",
       [] {
         Model m = NemotronHModel("M*-E", 128).value();
         m.name = "nemotron-h-short";
         return m;
       }},
      {"appends-aeaf", "single-stage appends A E A F (the residual sliced once, never twice)",
       [] {
         return Stack("appends-aeaf", 64, 1, {{kPartial}, {kSparse}, {kPartial}, {kDense}});
       }},
      {"appends-aea", "single-stage appends A E A (ends on an attention after an FFN on its own rows)",
       [] {
         return Stack("appends-aea", 64, 1, {{kPartial}, {kSparse}, {kPartial}});
       }},
      {"nas-mixed", "NAS-style layers [A F] [A .] [. F] [L F]: attention-only, attention-free, linear",
       [] {
         return Stack("nas-mixed", 64, 1,
                      {{kPartial, kDense}, {kPartial, NoOpStage()}, {NoOpStage(), kDense}, {LinearStage(), kDense}});
       }},
  };
}

ParallelConfig Config(int tp, int attn_dp, int dense_tp, MoeMode moe = MoeMode::kTp, bool scattered = false) {
  return {.tp = tp, .attn_dp = attn_dp, .dense_tp = dense_tp, .moe = moe, .input_scattered = scattered};
}

ParallelConfig ContextParallel(int tp, int attn_dp, int cp, int dense_tp, MoeMode moe = MoeMode::kTp) {
  return {.tp = tp, .attn_dp = attn_dp, .cp = cp, .dense_tp = dense_tp, .moe = moe};
}

ParallelConfig DecodeContextParallel(int tp, int attn_dp, int cp, int dcp, int dense_tp, MoeMode moe = MoeMode::kTp) {
  return {.tp = tp, .attn_dp = attn_dp, .cp = cp, .dcp = dcp, .dense_tp = dense_tp, .moe = moe};
}

// Two-rank splits: every one for up to four layers, else an even and an uneven one.
std::vector<std::vector<int>> TwoRankSplits(int layers) {
  if (layers < 2) return {};
  if (layers > 4) return {{layers / 2, layers - layers / 2}, {layers / 2 - 1, layers - layers / 2 + 1}};
  std::vector<std::vector<int>> out;
  for (int first = 1; first < layers; ++first) out.push_back({first, layers - first});
  return out;
}

// Reads "<word><number>" (e.g. "tp4"); nullopt when `word` does not start it.
std::optional<int> Numbered(std::string_view token, std::string_view word) {
  if (!token.starts_with(word) || token.size() == word.size()) return std::nullopt;
  const std::string_view digits = token.substr(word.size());
  int v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || v < 1 || v > 1024) return std::nullopt;
  return v;
}

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < text.size();) {
    const size_t stop = std::min(text.find(' ', i), text.size());
    out.push_back(text.substr(i, stop - i));
    i = stop + 1;
  }
  return out;
}

}  // namespace

const std::vector<Subject>& Subjects() {
  static const std::vector<Subject> subjects = [] {
    std::vector<Subject> out;
    for (const CatalogueEntry& e : Catalogue()) out.push_back({e.name, e.summary, e.make});
    for (Subject& s : SeedShapes()) out.push_back(std::move(s));
    return out;
  }();
  return subjects;
}

std::vector<ParallelConfig> BaseConfigs() {
  const MoeMode a2a = MoeMode::kA2a;
  return {
      Config(1, 1, 1),
      Config(2, 1, 2),
      Config(4, 1, 4),
      Config(8, 1, 8),  // TP
      Config(2, 1, 2, a2a),
      Config(4, 1, 4, a2a),
      Config(8, 1, 8, a2a),  // a2a MoE
      Config(2, 1, 2, {}, true),
      Config(4, 1, 4, {}, true),
      Config(8, 1, 8, {}, true),  // input-scattered
      Config(4, 1, 1),
      Config(2, 1, 1, {}, true),
      Config(4, 1, 4, a2a, true),  // fully DP dense; rejections
      Config(2, 2, 2),
      Config(2, 2, 2, a2a),  // attention DP, attn_tp 1
      Config(4, 2, 4),
      Config(4, 2, 2),
      Config(4, 2, 1),
      Config(4, 2, 1, a2a),
      Config(4, 2, 4, a2a),
      Config(4, 4, 4),
      Config(4, 4, 1, a2a),
      Config(8, 2, 4),
      Config(8, 2, 1, a2a),
      Config(8, 4, 2),
      Config(8, 4, 8, a2a),
      Config(8, 8, 8),
      Config(8, 8, 1, a2a),
      ContextParallel(2, 1, 2, 2),
      ContextParallel(4, 1, 2, 4),
      ContextParallel(4, 1, 4, 4),  // context parallel
      ContextParallel(4, 1, 2, 2),
      ContextParallel(4, 1, 2, 1, a2a),
      ContextParallel(8, 2, 2, 8),
      ContextParallel(8, 2, 2, 1, a2a),
      DecodeContextParallel(4, 1, 1, 2, 4),  // decode context parallel
      DecodeContextParallel(8, 1, 1, 4, 8),
      DecodeContextParallel(8, 2, 1, 2, 1, a2a),
      DecodeContextParallel(8, 1, 2, 2, 8),
  };
}

std::string ConfigName(const ParallelConfig& cfg) {
  std::string out = fmt::format("tp{}", cfg.tp);
  if (cfg.attn_dp != 1) out += fmt::format(" attn-dp{}", cfg.attn_dp);
  if (cfg.cp != 1) out += fmt::format(" cp{}", cfg.cp);
  if (cfg.dcp != 1) out += fmt::format(" dcp{}", cfg.dcp);
  if (cfg.dense_tp_size() != cfg.tp) out += fmt::format(" dense-tp{}", cfg.dense_tp_size());
  if (cfg.moe == MoeMode::kA2a) out += " a2a";
  if (cfg.input_scattered) out += " input-scattered";
  out += fmt::format(" {} pp{}", Name(cfg.reduction), cfg.pp);
  if (!cfg.pp_split.empty()) out += fmt::format(" {}", fmt::join(cfg.pp_split, "+"));
  return out;
}

Expected<ParallelConfig> ParseConfigName(std::string_view name) {
  const std::vector<std::string_view> words = Words(name);
  size_t i = 0;
  auto bad = [&](std::string_view expected) {
    const std::string_view got = i < words.size() ? words[i] : std::string_view("the end");
    return Malformed(fmt::format("configuration '{}': expected {}, got '{}'", name, expected, got));
  };
  ParallelConfig cfg;
  std::optional<int> v = i < words.size() ? Numbered(words[i], "tp") : std::nullopt;
  if (!v) return bad("tpN");
  cfg.tp = *v;
  ++i;
  // Each optional word in its place, or its default.
  auto word = [&](std::string_view w) { return i < words.size() && words[i] == w ? (++i, true) : false; };
  auto number = [&](std::string_view w, int fallback) {
    const std::optional<int> n = i < words.size() ? Numbered(words[i], w) : std::nullopt;
    if (n) ++i;
    return n.value_or(fallback);
  };
  cfg.attn_dp = number("attn-dp", 1);
  cfg.cp = number("cp", 1);
  cfg.dcp = number("dcp", 1);
  cfg.dense_tp = number("dense-tp", cfg.tp);
  if (word("a2a")) cfg.moe = MoeMode::kA2a;
  cfg.input_scattered = word("input-scattered");
  if (i >= words.size() || !ParseReduction(words[i])) return bad("a reduction (ar, rs, rsv or rs+rsv)");
  cfg.reduction = *ParseReduction(words[i++]);
  if (i >= words.size() || !(v = Numbered(words[i], "pp"))) return bad("ppN");
  cfg.pp = *v;
  ++i;
  if (cfg.pp > 1) {
    if (i >= words.size()) return bad("a layer split like 1+3");
    std::string_view split = words[i];
    while (true) {
      const size_t plus = split.find('+');
      std::optional<int> n = Numbered(fmt::format("n{}", split.substr(0, plus)), "n");
      if (!n) return bad("a layer split like 1+3");
      cfg.pp_split.push_back(*n);
      if (plus == std::string_view::npos) break;
      split = split.substr(plus + 1);
    }
    ++i;
  }
  if (i != words.size()) return bad("nothing more");
  // One spelling per configuration, so a scenario cannot be stored twice.
  if (ConfigName(cfg) != name) {
    return Malformed(fmt::format("configuration '{}' is not written as '{}'", name, ConfigName(cfg)));
  }
  return cfg;
}

std::vector<Scenario> ScenariosOf(const std::string& subject, int layers) {
  std::vector<Scenario> out;
  for (const ParallelConfig& base : BaseConfigs()) {
    for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
      ParallelConfig cfg = base;
      cfg.reduction = r;
      out.push_back({fmt::format("{} {}", subject, ConfigName(cfg)), cfg});
      for (const std::vector<int>& split : TwoRankSplits(layers)) {
        cfg.pp = 2;
        cfg.pp_split = split;
        out.push_back({fmt::format("{} {}", subject, ConfigName(cfg)), cfg});
      }
    }
  }
  return out;
}

Expected<Pipeline> BindScenario(const Model& model, const Scenario& s) { return BindPipeline(model, s.cfg); }

std::string FileName(const Subject& s) { return s.name + ".plans"; }

}  // namespace seam::golden
