#include <gtest/gtest.h>

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

TEST(Catalogue, ListsTheFourFamiliesInOrder) {
  std::vector<std::string> names;
  for (const CatalogueEntry& e : Catalogue()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"llama", "deepseek-v2-lite", "nemotron-h", "zaya1"}));
}

TEST(Catalogue, EveryEntryHasASummaryAndBuildsAModelOfItsName) {
  for (const CatalogueEntry& e : Catalogue()) {
    EXPECT_FALSE(e.summary.empty()) << e.name;
    const Model m = e.make();
    EXPECT_EQ(m.name, e.name);
    EXPECT_GT(m.num_layers, 0) << e.name;
    EXPECT_GT(m.hidden, 0) << e.name;
    EXPECT_EQ(m.residual_streams, 1) << e.name;
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
            "unknown model 'gpt-2'; the catalogue has: llama, deepseek-v2-lite, nemotron-h, zaya1 "
            "(see `seam models`)");
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
  const Model m{.name = "nas",
                .num_layers = 3,
                .hidden = 8,
                .layer = [](int i) {
                  return i == 1 ? std::vector{NoOpStage()} : std::vector{MixerStage()};
                }};
  EXPECT_EQ(PatternOf(m), "M.M");
}

TEST(PatternOf, BracketsMultiStageLayersAndNotSingleStageOnes) {
  const Model m{.name = "mixed",
                .num_layers = 2,
                .hidden = 8,
                .layer = [](int i) {
                  return i == 0 ? std::vector{AttentionStage()} : std::vector{MixerStage(), SparseFfnStage()};
                }};
  EXPECT_EQ(PatternOf(m), "A[M E]");
}

TEST(PatternOf, IsEmptyForAModelWithoutLayers) {
  EXPECT_EQ(PatternOf(LlamaModel(0)), "");
}

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
  EXPECT_EQ(KindsOf(s), (std::vector<StageKind>{StageKind::kAttention, StageKind::kDenseFfn,
                                                StageKind::kAttention, StageKind::kSparseFfn,
                                                StageKind::kAttention, StageKind::kSparseFfn,
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
  const Model m{.name = "uneven",
                .num_layers = 3,
                .hidden = 8,
                .layer = [](int i) {
                  return i == 0 ? std::vector{AttentionStage(), MixerStage(), DenseFfnStage()}
                                : std::vector{NoOpStage()};
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
  const StageDecl d =
      SparseFfnStage({.top_k = 7, .update = UpdateKind::kHyperConnection, .read = ReadKind::kAllRows});
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
}

TEST(StageKindText, NamesRoundTrip) {
  for (StageKind k : {StageKind::kAttention, StageKind::kMixer, StageKind::kDenseFfn, StageKind::kSparseFfn,
                      StageKind::kNoOp}) {
    Expected<StageKind> parsed = ParseStageKind(Name(k));
    ASSERT_TRUE(parsed.ok()) << Name(k);
    EXPECT_EQ(*parsed, k);
  }
}

TEST(StageKindText, RejectsAnUnknownKindWithTheChoices) {
  Expected<StageKind> parsed = ParseStageKind("linear");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(parsed.error().message,
            "unknown stage kind 'linear'; expected one of: attention, mixer, dense-ffn, sparse-ffn, no-op");
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
  EXPECT_EQ(parsed.error().message,
            "unknown attention sum 'partial'; expected one of: always-partial, reduces-itself");
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
