#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "seam/model.h"
#include "seam/stage.h"

namespace seam {
namespace {

Model MustCatalogue(const std::string& name) {
  Expected<Model> m = CatalogueModel(name);
  if (!m) ADD_FAILURE() << m.error().message;
  return m ? *std::move(m) : Model{};
}

std::vector<StageKind> KindsOf(const std::vector<StageRef>& stages) {
  std::vector<StageKind> out;
  for (const StageRef& s : stages) out.push_back(s.decl.kind);
  return out;
}

// ---------------------------------------------------------------------------
// The catalogue.

const std::vector<std::string> kFamilies = {
    "llama",   "llama3",     "qwen3",           "qwen3-moe", "gpt-oss",    "deepseek-v2-lite", "deepseek-qlora",
    "kimi-k2", "nemotron-h", "nemotron-3-nano", "zaya1",     "qwen3-next", "nemotron-nas",     "mhc"};

TEST(Catalogue, ListsEveryFamilyInOrder) {
  std::vector<std::string> names;
  for (const CatalogueEntry& e : Catalogue()) names.push_back(e.name);
  EXPECT_EQ(names, kFamilies);
}

TEST(Catalogue, EveryEntryHasASummaryAndBuildsAModelOfItsName) {
  for (const CatalogueEntry& e : Catalogue()) {
    EXPECT_FALSE(e.summary.empty()) << e.name;
    EXPECT_FALSE(e.features.empty()) << e.name;
    EXPECT_FALSE(e.source.empty()) << e.name;
    const Model m = e.make();
    EXPECT_EQ(m.name, e.name);
    EXPECT_GT(m.num_layers, 0) << e.name;
    EXPECT_GT(m.hidden, 0) << e.name;
    EXPECT_EQ(m.residual_streams, e.name == "mhc" ? 4 : 1) << e.name;
  }
}

TEST(Catalogue, ModelByNameIsTheEntrysModel) {
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = MustCatalogue(e.name);
    EXPECT_EQ(m.name, e.name);
    EXPECT_EQ(PatternOf(m), PatternOf(e.make()));
  }
}

TEST(Catalogue, LlamaIsFourDenseDecoderLayers) {
  const Model m = MustCatalogue("llama");
  EXPECT_EQ(m.num_layers, 4);
  EXPECT_EQ(m.hidden, 64);
  EXPECT_EQ(PatternOf(m), "[A F][A F][A F][A F]");
}

TEST(Catalogue, EveryFamilyHasTheSizesToRun) {
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    ASSERT_TRUE(m.dims.has_value()) << e.name;
    EXPECT_EQ(m.dims->heads, 8) << e.name;  // splits over up to 8 attention-TP ranks
    EXPECT_GT(m.dims->vocab, 0) << e.name;
  }
}

TEST(Catalogue, DeepseekHasItsFirstLayerDenseAndTheRestSparse) {
  const Model m = MustCatalogue("deepseek-v2-lite");
  EXPECT_EQ(m.num_layers, 4);
  EXPECT_EQ(m.hidden, 64);
  EXPECT_EQ(PatternOf(m), "[A F][A E][A E][A E]");
}

TEST(Catalogue, DeepseekRoutesEachTokenToThreeExperts) {
  const Model m = MustCatalogue("deepseek-v2-lite");
  for (int layer = 1; layer < m.num_layers; ++layer) {
    EXPECT_EQ(m.layer(layer)[1].top_k, 3) << "layer " << layer;
  }
}

TEST(Catalogue, NemotronHIsSingleStageHybridLayers) {
  const Model m = MustCatalogue("nemotron-h");
  EXPECT_EQ(m.num_layers, 6);
  EXPECT_EQ(m.hidden, 128);
  // 'M-M*M-' in Nemotron-H's own letters: mixer, MLP, mixer, attention, mixer, MLP.
  EXPECT_EQ(PatternOf(m), "MFMAMF");
}

TEST(Catalogue, Zaya1AlternatesAttentionAndTopOneMoe) {
  const Model m = MustCatalogue("zaya1");
  EXPECT_EQ(m.num_layers, 4);
  EXPECT_EQ(m.hidden, 64);
  EXPECT_EQ(PatternOf(m), "AEAE");
  EXPECT_EQ(m.layer(1)[0].top_k, 1);
  EXPECT_EQ(m.layer(3)[0].top_k, 1);
}

TEST(Catalogue, RejectsAnUnknownModelAndListsTheCatalogue) {
  Expected<Model> m = CatalogueModel("gpt-2");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(m.error().message,
            "unknown model 'gpt-2'; the catalogue has: llama, llama3, qwen3, qwen3-moe, gpt-oss, "
            "deepseek-v2-lite, deepseek-qlora, kimi-k2, nemotron-h, nemotron-3-nano, zaya1, qwen3-next, "
            "nemotron-nas, mhc (see `seam models`)");
}

// Each family's tiny shape keeps its stage pattern and distinguishing parts.

TEST(Catalogue, EveryFamilyHasItsStagePattern) {
  const std::map<std::string, std::string> patterns = {{"llama", "[A F][A F][A F][A F]"},
                                                       {"llama3", "[A F][A F][A F][A F]"},
                                                       {"qwen3", "[A F][A F][A F][A F]"},
                                                       {"qwen3-moe", "[A E][A E][A E][A E]"},
                                                       {"gpt-oss", "[A E][A E][A E][A E]"},
                                                       {"deepseek-v2-lite", "[A F][A E][A E][A E]"},
                                                       {"deepseek-qlora", "[A F][A E][A E][A E]"},
                                                       {"kimi-k2", "[A F][A E][A E][A E]"},
                                                       {"nemotron-h", "MFMAMF"},
                                                       {"nemotron-3-nano", "MEMAEM"},
                                                       {"zaya1", "AEAE"},
                                                       {"qwen3-next", "[M E][M E][M E][A E]"},
                                                       {"nemotron-nas", "[A F][A F][. F][A F][L F][. .]"},
                                                       {"mhc", "[A F][A E][A E][A E]"}};
  for (const std::string& name : kFamilies) EXPECT_EQ(PatternOf(MustCatalogue(name)), patterns.at(name)) << name;
}

TEST(Catalogue, Llama3ScalesItsRope) {
  EXPECT_GT(MustCatalogue("llama3").dims->rope_scaling.factor, 0);
  EXPECT_EQ(MustCatalogue("llama").dims->rope_scaling.factor, 0);
}

TEST(Catalogue, TheDeepseekFamiliesRunTheirRopeAndRoutingMath) {
  // YaRN and adjacent rope pairs as the real DeepSeek-V2-Lite and Kimi-K2 have
  // them; Kimi-K2's tiny shape limits each row to its best groups (DeepSeek-V3's
  // routing) so the group mask is exercised.
  for (const std::string name : {"deepseek-v2-lite", "deepseek-qlora", "kimi-k2"}) {
    const ModelDims d = *MustCatalogue(name).dims;
    EXPECT_GT(d.yarn.factor, 0) << name;
    EXPECT_GT(d.yarn.mscale_all_dim, 0) << name;
    EXPECT_EQ(d.rope_pairing, RopePairing::kInterleaved) << name;
  }
  const ExpertGroups g = MustCatalogue("kimi-k2").dims->expert_groups;
  EXPECT_GT(g.count, 1);
  EXPECT_LT(g.keep, g.count);
  EXPECT_EQ(g.score, GroupScore::kTopTwoSum);
}

TEST(Catalogue, Qwen3NormsQueriesAndKeys) {
  EXPECT_TRUE(MustCatalogue("qwen3").dims->qk_norm);
  EXPECT_TRUE(MustCatalogue("qwen3-moe").dims->qk_norm);
  EXPECT_TRUE(MustCatalogue("qwen3-moe").dims->renormalize);
}

TEST(Catalogue, GptOssHasSinksBiasesClampedExpertsAlternatingWindowsAndNoA2a) {
  const Model m = MustCatalogue("gpt-oss");
  EXPECT_TRUE(m.dims->attention_sinks);
  EXPECT_TRUE(m.dims->qkv_bias);
  EXPECT_TRUE(m.dims->moe_bias);
  EXPECT_EQ(m.dims->activation, Activation::kClampedSwiGlu);
  EXPECT_EQ(m.layer(0)[0].window, 8);
  EXPECT_EQ(m.layer(1)[0].window, 0);
  EXPECT_FALSE(m.layer(0)[1].a2a);
  EXPECT_FALSE(MoeDispatchesA2a(m));
}

TEST(Catalogue, DeepseekLiteIsMlaWithoutAQueryLatentAndQloraWithOne) {
  const ModelDims lite = *MustCatalogue("deepseek-v2-lite").dims;
  EXPECT_GT(lite.mla.kv_lora, 0);
  EXPECT_EQ(lite.mla.q_lora, 0);
  EXPECT_GT(lite.shared_intermediate, 0);
  EXPECT_GT(MustCatalogue("deepseek-qlora").dims->mla.q_lora, 0);
}

TEST(Catalogue, KimiRoutesBySigmoidWithACorrectionBiasAndScales) {
  const ModelDims d = *MustCatalogue("kimi-k2").dims;
  EXPECT_EQ(d.scoring, RouterScoring::kSigmoid);
  EXPECT_TRUE(d.correction_bias);
  EXPECT_NE(d.routed_scaling, 1.0);
  EXPECT_GT(d.mla.q_lora, 0);
}

TEST(Catalogue, NemotronsHaveNoRopeAndReluSquared) {
  for (const char* name : {"nemotron-h", "nemotron-3-nano"}) {
    const ModelDims d = *MustCatalogue(name).dims;
    EXPECT_FALSE(d.rope) << name;
    EXPECT_EQ(d.activation, Activation::kRelu2) << name;
  }
  EXPECT_EQ(MustCatalogue("nemotron-3-nano").dims->scoring, RouterScoring::kSigmoid);
}

TEST(Catalogue, Zaya1HasASkipExpertAndPartialRope) {
  const ModelDims d = *MustCatalogue("zaya1").dims;
  EXPECT_TRUE(d.skip_expert);
  EXPECT_EQ(d.rope_fraction, 0.5);
}

TEST(Catalogue, Qwen3NextGatesItsAttention) {
  const ModelDims d = *MustCatalogue("qwen3-next").dims;
  EXPECT_TRUE(d.attention_gate);
  EXPECT_EQ(d.rope_fraction, 0.25);
}

TEST(Catalogue, NemotronNasVariesItsBlocks) {
  const Model m = MustCatalogue("nemotron-nas");
  EXPECT_EQ(m.layer(0)[0].kv_heads, 4);
  EXPECT_EQ(m.layer(3)[0].kv_heads, 2);
  EXPECT_EQ(m.layer(1)[1].ffn_width, 512);
  EXPECT_EQ(m.layer(2)[0].kind, StageKind::kNoOp);
  EXPECT_EQ(m.layer(4)[0].kind, StageKind::kLinear);
  EXPECT_EQ(m.layer(5)[1].kind, StageKind::kNoOp);
}

TEST(Catalogue, MhcWritesFourStreamsThroughHyperConnections) {
  const Model m = MustCatalogue("mhc");
  EXPECT_EQ(m.residual_streams, 4);
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
    EXPECT_EQ(s.decl.update, UpdateKind::kHyperConnection) << s.index;
  }
}

TEST(Catalogue, NamesAreCaseSensitive) { EXPECT_FALSE(CatalogueModel("Llama").ok()); }

// ---------------------------------------------------------------------------
// The family builders.

TEST(LlamaModel, HasTheRequestedLayerCount) {
  const Model m = LlamaModel(5);
  EXPECT_EQ(m.num_layers, 5);
  EXPECT_EQ(PatternOf(m), "[A F][A F][A F][A F][A F]");
}

TEST(DeepseekModel, TakesHiddenAndTopK) {
  const Model m = DeepseekModel(2, 96, 6);
  EXPECT_EQ(m.hidden, 96);
  EXPECT_EQ(PatternOf(m), "[A F][A E]");
  EXPECT_EQ(m.layer(1)[1], SparseFfnStage({.top_k = 6}));
}

TEST(NemotronHModel, BuildsOneLayerPerPatternCharacter) {
  Expected<Model> m = NemotronHModel("M*-E", 32);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->num_layers, 4);
  EXPECT_EQ(m->hidden, 32);
  EXPECT_EQ(PatternOf(*m), "MAFE");
  EXPECT_EQ(m->layer(3)[0].top_k, 2);
}

TEST(NemotronHModel, RejectsABadPatternCharacter) {
  Expected<Model> m = NemotronHModel("MM*x-", 64);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(m.error().message,
            "nemotron-h pattern 'MM*x-' has 'x' at position 3; use M (mamba mixer), * (attention), "
            "- (dense MLP) or E (MoE)");
}

TEST(NemotronHModel, ReportsTheFirstBadCharacter) {
  Expected<Model> m = NemotronHModel("AM", 64);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message,
            "nemotron-h pattern 'AM' has 'A' at position 0; use M (mamba mixer), * (attention), "
            "- (dense MLP) or E (MoE)");
}

TEST(Zaya1Model, EvenLayersAreAttentionOddLayersMoe) {
  const Model m = Zaya1Model(5);
  EXPECT_EQ(PatternOf(m), "AEAEA");
}

// ---------------------------------------------------------------------------
// PatternOf.

TEST(PatternOf, ShowsNoOpStagesAsDots) {
  const Model m{.name = "nas", .num_layers = 3, .hidden = 8, .layer = [](int i) {
                  return i == 1 ? std::vector{NoOpStage()} : std::vector{MixerStage()};
                }};
  EXPECT_EQ(PatternOf(m), "M.M");
}

TEST(PatternOf, BracketsMultiStageLayersAndNotSingleStageOnes) {
  const Model m{.name = "mixed", .num_layers = 2, .hidden = 8, .layer = [](int i) {
                  return i == 0 ? std::vector{AttentionStage()} : std::vector{MixerStage(), SparseFfnStage()};
                }};
  EXPECT_EQ(PatternOf(m), "A[M E]");
}

TEST(PatternOf, IsEmptyForAModelWithoutLayers) { EXPECT_EQ(PatternOf(LlamaModel(0)), ""); }

// ---------------------------------------------------------------------------
// StagesOf.

TEST(StagesOf, NumbersEveryStageOfTheModel) {
  const Model m = MustCatalogue("deepseek-v2-lite");
  const std::vector<StageRef> s = StagesOf(m, 0, m.num_layers);
  ASSERT_EQ(s.size(), 8u);
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].index, static_cast<int>(i));
    EXPECT_EQ(s[i].layer, static_cast<int>(i / 2));
  }
  EXPECT_EQ(KindsOf(s), (std::vector<StageKind>{StageKind::kAttention, StageKind::kDenseFfn, StageKind::kAttention,
                                                StageKind::kSparseFfn, StageKind::kAttention, StageKind::kSparseFfn,
                                                StageKind::kAttention, StageKind::kSparseFfn}));
}

TEST(StagesOf, KeepsModelWideIndicesForALayerRange) {
  const Model m = MustCatalogue("deepseek-v2-lite");
  const std::vector<StageRef> s = StagesOf(m, 1, 3);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].index, 2);
  EXPECT_EQ(s[0].layer, 1);
  EXPECT_EQ(s[3].index, 5);
  EXPECT_EQ(s[3].layer, 2);
  EXPECT_EQ(s[1].decl, SparseFfnStage({.top_k = 3}));
}

TEST(StagesOf, SlicesTheMiddleOfASingleStageModel) {
  const Model m = MustCatalogue("nemotron-h");
  const std::vector<StageRef> s = StagesOf(m, 2, 4);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].index, 2);
  EXPECT_EQ(s[1].index, 3);
  EXPECT_EQ(KindsOf(s), (std::vector<StageKind>{StageKind::kMixer, StageKind::kAttention}));
}

TEST(StagesOf, NumbersAfterLayersOfDifferentWidths) {
  const Model m{
      .name = "uneven", .num_layers = 3, .hidden = 8, .layer = [](int i) {
        return i == 0 ? std::vector{AttentionStage(), MixerStage(), DenseFfnStage()} : std::vector{NoOpStage()};
      }};
  const std::vector<StageRef> s = StagesOf(m, 2, 3);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].index, 4);
  EXPECT_EQ(s[0].layer, 2);
}

TEST(StagesOf, AnEmptyRangeHasNoStages) {
  const Model m = MustCatalogue("llama");
  EXPECT_TRUE(StagesOf(m, 1, 1).empty());
  EXPECT_TRUE(StagesOf(m, m.num_layers, m.num_layers).empty());
}

TEST(StagesOf, RejectsARangeOutsideTheModel) {
  const Model m = MustCatalogue("llama");
  EXPECT_THROW(StagesOf(m, 0, m.num_layers + 1), InternalError);
  EXPECT_THROW(StagesOf(m, -1, 1), InternalError);
  EXPECT_THROW(StagesOf(m, 2, 1), InternalError);
}

// ---------------------------------------------------------------------------
// Stage factories.

TEST(AttentionStage, DefaultsToAnAlwaysPartialAttentionThatGathersItsInput) {
  const StageDecl d = AttentionStage();
  EXPECT_EQ(d.kind, StageKind::kAttention);
  EXPECT_EQ(d.attention_sum, AttentionSum::kAlwaysPartial);
  EXPECT_TRUE(d.gathers_input);
  EXPECT_EQ(d.gather_width, 0);
  EXPECT_EQ(d.update, UpdateKind::kPlainAdd);
  EXPECT_EQ(d.read, ReadKind::kPlainNorm);
  EXPECT_EQ(d.top_k, 0);
}

TEST(AttentionStage, TakesEveryOption) {
  const StageDecl d = AttentionStage({.sum = AttentionSum::kReducesItself,
                                      .gathers_input = false,
                                      .gather_width = 48,
                                      .update = UpdateKind::kHyperConnection,
                                      .read = ReadKind::kAllRows});
  EXPECT_EQ(d.kind, StageKind::kAttention);
  EXPECT_EQ(d.attention_sum, AttentionSum::kReducesItself);
  EXPECT_FALSE(d.gathers_input);
  EXPECT_EQ(d.gather_width, 48);
  EXPECT_EQ(d.update, UpdateKind::kHyperConnection);
  EXPECT_EQ(d.read, ReadKind::kAllRows);
}

TEST(MixerStage, NeverGathersItsInput) {
  const StageDecl d = MixerStage();
  EXPECT_EQ(d.kind, StageKind::kMixer);
  EXPECT_FALSE(d.gathers_input);
  EXPECT_EQ(d.gather_width, 0);
  EXPECT_EQ(d.top_k, 0);
  EXPECT_EQ(d.update, UpdateKind::kPlainAdd);
  EXPECT_EQ(d.read, ReadKind::kPlainNorm);
}

TEST(MixerStage, TakesUpdateAndRead) {
  const StageDecl d = MixerStage({.update = UpdateKind::kHyperConnection, .read = ReadKind::kAllRows});
  EXPECT_EQ(d.update, UpdateKind::kHyperConnection);
  EXPECT_EQ(d.read, ReadKind::kAllRows);
}

TEST(DenseFfnStage, IsADenseFfnWithThePlainDefaults) {
  const StageDecl d = DenseFfnStage();
  EXPECT_EQ(d.kind, StageKind::kDenseFfn);
  EXPECT_FALSE(d.gathers_input);
  EXPECT_EQ(d.top_k, 0);
  EXPECT_EQ(d.update, UpdateKind::kPlainAdd);
  EXPECT_EQ(d.read, ReadKind::kPlainNorm);
}

TEST(DenseFfnStage, TakesUpdateAndRead) {
  const StageDecl d = DenseFfnStage({.update = UpdateKind::kHyperConnection, .read = ReadKind::kAllRows});
  EXPECT_EQ(d.update, UpdateKind::kHyperConnection);
  EXPECT_EQ(d.read, ReadKind::kAllRows);
}

TEST(SparseFfnStage, DefaultsToTopOne) {
  const StageDecl d = SparseFfnStage();
  EXPECT_EQ(d.kind, StageKind::kSparseFfn);
  EXPECT_EQ(d.top_k, 1);
  EXPECT_FALSE(d.gathers_input);
}

TEST(SparseFfnStage, TakesTopKUpdateAndRead) {
  const StageDecl d = SparseFfnStage({.top_k = 7, .update = UpdateKind::kHyperConnection, .read = ReadKind::kAllRows});
  EXPECT_EQ(d.top_k, 7);
  EXPECT_EQ(d.update, UpdateKind::kHyperConnection);
  EXPECT_EQ(d.read, ReadKind::kAllRows);
}

TEST(NoOpStage, IsANoOpWithNothingSet) {
  const StageDecl d = NoOpStage();
  EXPECT_EQ(d.kind, StageKind::kNoOp);
  EXPECT_EQ(d, StageDecl{});
}

TEST(StageFacts, IsFfnHoldsForDenseAndSparseOnly) {
  EXPECT_TRUE(IsFfn(DenseFfnStage()));
  EXPECT_TRUE(IsFfn(SparseFfnStage()));
  EXPECT_FALSE(IsFfn(AttentionStage()));
  EXPECT_FALSE(IsFfn(MixerStage()));
  EXPECT_FALSE(IsFfn(NoOpStage()));
}

TEST(StageFacts, IsAttentionLikeHoldsForAttentionAndMixer) {
  EXPECT_TRUE(IsAttentionLike(AttentionStage()));
  EXPECT_TRUE(IsAttentionLike(MixerStage()));
  EXPECT_FALSE(IsAttentionLike(DenseFfnStage()));
  EXPECT_FALSE(IsAttentionLike(SparseFfnStage()));
  EXPECT_FALSE(IsAttentionLike(NoOpStage()));
}

TEST(StageFacts, IsAlwaysPartialAttentionExcludesSelfReducingAttention) {
  EXPECT_TRUE(IsAlwaysPartialAttention(AttentionStage()));
  EXPECT_FALSE(IsAlwaysPartialAttention(AttentionStage({.sum = AttentionSum::kReducesItself})));
  EXPECT_FALSE(IsAlwaysPartialAttention(MixerStage()));
}

TEST(StageFacts, IsAlwaysPartialAttentionLooksAtTheKindNotTheDefaultSum) {
  // StageDecl's attention_sum defaults to always-partial for every kind.
  EXPECT_FALSE(IsAlwaysPartialAttention(DenseFfnStage()));
  EXPECT_FALSE(IsAlwaysPartialAttention(NoOpStage()));
}

// ---------------------------------------------------------------------------
// Names and parsing of stage facts.

TEST(StageKindText, NamesEachKind) {
  EXPECT_EQ(Name(StageKind::kAttention), "attention");
  EXPECT_EQ(Name(StageKind::kMixer), "mixer");
  EXPECT_EQ(Name(StageKind::kDenseFfn), "dense-ffn");
  EXPECT_EQ(Name(StageKind::kSparseFfn), "sparse-ffn");
  EXPECT_EQ(Name(StageKind::kNoOp), "no-op");
  EXPECT_EQ(Name(StageKind::kLinear), "linear");
}

TEST(StageKindText, NamesRoundTrip) {
  for (StageKind k : {StageKind::kAttention, StageKind::kMixer, StageKind::kDenseFfn, StageKind::kSparseFfn,
                      StageKind::kNoOp, StageKind::kLinear}) {
    Expected<StageKind> parsed = ParseStageKind(Name(k));
    ASSERT_TRUE(parsed.ok()) << Name(k);
    EXPECT_EQ(*parsed, k);
  }
}

TEST(StageKindText, RejectsAnUnknownKindWithTheChoices) {
  Expected<StageKind> parsed = ParseStageKind("conv");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(parsed.error().message,
            "unknown stage kind 'conv'; expected one of: attention, mixer, dense-ffn, sparse-ffn, no-op, linear");
}

TEST(AttentionSumText, NamesEachSum) {
  EXPECT_EQ(Name(AttentionSum::kAlwaysPartial), "always-partial");
  EXPECT_EQ(Name(AttentionSum::kReducesItself), "reduces-itself");
}

TEST(AttentionSumText, NamesRoundTrip) {
  for (AttentionSum s : {AttentionSum::kAlwaysPartial, AttentionSum::kReducesItself}) {
    Expected<AttentionSum> parsed = ParseAttentionSum(Name(s));
    ASSERT_TRUE(parsed.ok()) << Name(s);
    EXPECT_EQ(*parsed, s);
  }
}

TEST(AttentionSumText, RejectsAnUnknownSumWithTheChoices) {
  Expected<AttentionSum> parsed = ParseAttentionSum("partial");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kMalformed);
  // The article is the shared ParseEnum's ("a {what}"), not grammatical here.
  EXPECT_EQ(parsed.error().message, "unknown attention sum 'partial'; expected one of: always-partial, reduces-itself");
}

TEST(UpdateKindText, NamesEachKind) {
  EXPECT_EQ(Name(UpdateKind::kPlainAdd), "plain-add");
  EXPECT_EQ(Name(UpdateKind::kHyperConnection), "hyper-connection");
}

TEST(UpdateKindText, NamesRoundTrip) {
  for (UpdateKind u : {UpdateKind::kPlainAdd, UpdateKind::kHyperConnection}) {
    Expected<UpdateKind> parsed = ParseUpdateKind(Name(u));
    ASSERT_TRUE(parsed.ok()) << Name(u);
    EXPECT_EQ(*parsed, u);
  }
}

TEST(UpdateKindText, RejectsAnUnknownKindWithTheChoices) {
  Expected<UpdateKind> parsed = ParseUpdateKind("add");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kMalformed);
  // The article is the shared ParseEnum's ("a {what}"), not grammatical here.
  EXPECT_EQ(parsed.error().message, "unknown update kind 'add'; expected one of: plain-add, hyper-connection");
}

TEST(ReadKindText, NamesEachKind) {
  EXPECT_EQ(Name(ReadKind::kPlainNorm), "plain-norm");
  EXPECT_EQ(Name(ReadKind::kAllRows), "all-rows");
}

TEST(ReadKindText, NamesRoundTrip) {
  for (ReadKind r : {ReadKind::kPlainNorm, ReadKind::kAllRows}) {
    Expected<ReadKind> parsed = ParseReadKind(Name(r));
    ASSERT_TRUE(parsed.ok()) << Name(r);
    EXPECT_EQ(*parsed, r);
  }
}

TEST(ReadKindText, RejectsAnUnknownKindWithTheChoices) {
  Expected<ReadKind> parsed = ParseReadKind("norm");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(parsed.error().message, "unknown read kind 'norm'; expected one of: plain-norm, all-rows");
}

TEST(StageText, ParsingIsCaseSensitive) {
  EXPECT_FALSE(ParseStageKind("Attention").ok());
  EXPECT_FALSE(ParseReadKind("PLAIN-NORM").ok());
}

}  // namespace
}  // namespace seam
