// Generation: the schedule engines run (prefill whole or in chunks, decode
// one token a step, mixed batches, attention-DP placement with idle groups)
// and its invariance: every token's hidden state and logits equal the
// unsharded reference's single pass over the final sequence, bit for bit,
// whatever the configuration, the batch, the chunk or the step.
#include <gtest/gtest.h>

#include "exec_testing.h"
#include "seam/runtime/generate.h"

namespace seam {
namespace {

using testing::MustWeights;

Request Of(int prompt, int output, int arrival = 0, int first_id = 1) {
  Request r{.output = output, .arrival = arrival};
  for (int i = 0; i < prompt; ++i) r.prompt.push_back((first_id + 7 * i) % 100);
  return r;
}

std::vector<std::vector<StepPart>> Steps(const std::vector<Request>& rs, int dp, ServeOptions o) {
  Expected<Schedule> s = ScheduleRequests(rs, dp, o);
  if (!s) throw std::runtime_error(s.error().message);
  return s->steps;
}

// ---- the schedule ----

TEST(Schedule, APrefillTakesAtMostTheChunkAndTheCutPromptLeadsTheNextPrefill) {
  const auto steps = Steps({Of(5, 2), Of(3, 2)}, 1, {.chunk = 4});
  const std::vector<std::vector<StepPart>> want = {
      {{0, 0, 4}},             // the first prompt, cut at the chunk
      {{0, 4, 1}, {1, 0, 3}},  // its rest first, then the next prompt
      {{0, 5, 1}, {1, 3, 1}},  // one decode token each
  };
  EXPECT_EQ(steps, want);
}

TEST(Schedule, WithoutMixingAWaitingPromptHoldsBackTheDecodes) {
  // Request 1 arrives while request 0 decodes: its prefill runs alone.
  const auto steps = Steps({Of(2, 4), Of(3, 1, 2)}, 1, {});
  const std::vector<std::vector<StepPart>> want = {{{0, 0, 2}}, {{0, 2, 1}}, {{1, 0, 3}}, {{0, 3, 1}}, {{0, 4, 1}}};
  EXPECT_EQ(steps, want);
}

TEST(Schedule, MixedStepsCarryTheDecodesAfterThePrefillAndTheDecodesTakeTheirShareOfTheChunk) {
  const auto steps = Steps({Of(2, 3), Of(6, 1, 1)}, 1, {.chunk = 4, .mixed = true});
  const std::vector<std::vector<StepPart>> want = {
      {{0, 0, 2}},
      {{1, 0, 3}, {0, 2, 1}},  // 4 tokens: one decode, three of the prompt
      {{1, 3, 3}, {0, 3, 1}},  // the prompt's rest (3 of the 3 left), a decode
  };
  EXPECT_EQ(steps, want);
}

TEST(Schedule, RequestsGoToTheDpGroupsRoundRobinInOrderOfArrivalAndAnIdleGroupHasNoParts) {
  Expected<Schedule> s = ScheduleRequests({Of(2, 1, 3), Of(2, 2), Of(2, 1, 1)}, 2, {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  // Arrival order 1, 2, 0: groups 0, 1, 0.
  EXPECT_EQ(s->group, (std::vector<int>{0, 0, 1}));
  const std::vector<std::vector<StepPart>> want = {
      {{1, 0, 2}},             // group 1 idle
      {{1, 2, 1}, {2, 0, 2}},  // group 0 decodes, group 1 prefills
      // nothing runs at clock 2: request 0 arrives at 3
      {{0, 0, 2}},
  };
  EXPECT_EQ(s->steps, want);
  EXPECT_EQ(s->clock, (std::vector<int>{0, 1, 3}));
}

TEST(Schedule, BadRequestsAreRefusedByName) {
  const auto refused = [](std::vector<Request> rs, ServeOptions o = {}) {
    Expected<Schedule> s = ScheduleRequests(rs, 1, o);
    return s.ok() ? std::string("accepted") : s.error().message;
  };
  EXPECT_EQ(refused({}), "no requests to serve");
  EXPECT_EQ(refused({Of(2, 1), Of(0, 1)}), "request 1 has an empty prompt");
  EXPECT_EQ(refused({Of(2, 0)}), "request 0 generates 0 tokens: at least 1");
  EXPECT_EQ(refused({Of(2, 1, -1)}), "request 0 arrives at step -1");
  EXPECT_EQ(refused({Of(2, 1)}, {.chunk = -2}), "--chunk -2 must be at least 1");
}

// ---- invariance ----

struct Served {
  Generation g;
  Tensor ref_hidden, ref_logits;
};

Served Serve(const Model& m, const ParallelConfig& cfg, const Weights& w, const std::vector<Request>& rs,
             ServeOptions o, Dtype d) {
  Expected<Pipeline> plans = BindPipelineChecked(m, cfg);
  if (!plans) throw std::runtime_error(plans.error().message);
  Expected<Generation> g = Generate(m, *plans, w, rs, o, {.dtype = d});
  if (!g) throw std::runtime_error(g.error().message);
  Expected<Tensor> ref = RunReference(m, w, TeacherForced(rs, *g), NumericsOf(cfg, d));
  if (!ref) throw std::runtime_error(ref.error().message);
  Tensor logits = ReferenceLogits(*ref, w, d);
  return {*std::move(g), *std::move(ref), std::move(logits)};
}

void ExpectTeacherForced(const Served& s, const std::string& what) {
  EXPECT_TRUE(s.g.hidden == s.ref_hidden)
      << what << ": hidden states, max |diff| " << MaxAbsDiff(s.g.hidden, s.ref_hidden);
  EXPECT_TRUE(s.g.logits == s.ref_logits) << what << ": logits, max |diff| " << MaxAbsDiff(s.g.logits, s.ref_logits);
}

TEST(Generate, EveryTokenOfAChunkedMixedGenerationEqualsTheTeacherForcedReference) {
  const Model m = testing::RunnableStack("AFAF");
  const Weights w = MustWeights(m, Dtype::kF32);
  const std::vector<Request> rs = {Of(7, 5), Of(3, 6, 1, 11), Of(9, 2, 2, 5)};
  const Served s = Serve(m, {.tp = 2}, w, rs, {.chunk = 4, .mixed = true}, Dtype::kF32);
  ExpectTeacherForced(s, "tp2 chunk 4 mixed");
  ASSERT_EQ(s.g.tokens.size(), 3u);
  EXPECT_EQ(s.g.tokens[0].size(), 5u);
  EXPECT_EQ(s.g.tokens[1].size(), 6u);
}

// One request's rows, whatever else the step held: alone on one rank, in a
// batch of others under attention DP (in either group), chunked by 1, 3 or
// not at all, mixed with others' decodes or not, arriving first or last.
TEST(Generate, ARequestsTokensAreTheSameBitsWhateverItIsBatchedWith) {
  const Model m = CatalogueModel("qwen3-moe").value();
  const Weights w = MustWeights(m, Dtype::kBf16);
  const Request a = Of(7, 6, 0, 42);
  const auto rows_of_a = [&](const ParallelConfig& cfg, std::vector<Request> rs, size_t at, ServeOptions o) {
    rs.insert(rs.begin() + static_cast<std::ptrdiff_t>(at), a);
    Expected<Pipeline> plans = BindPipelineChecked(m, cfg);
    if (!plans) throw std::runtime_error(plans.error().message);
    Expected<Generation> g = Generate(m, *plans, w, rs, o, {.dtype = Dtype::kBf16});
    if (!g) throw std::runtime_error(g.error().message);
    int first = 0;
    for (size_t q = 0; q < at; ++q) first += static_cast<int>(rs[q].prompt.size()) + rs[q].output - 1;
    return std::pair{g->logits.RowRange(first, first + 12), g->tokens[at]};
  };
  // An a2a MoE sums each token's experts in its own order (per expert): its
  // request alone runs a2a too.
  const auto tp_alone = rows_of_a({.tp = 1}, {}, 0, {});
  const auto a2a_alone = rows_of_a({.tp = 2, .moe = MoeMode::kA2a}, {}, 0, {});
  const std::vector<Request> others = {Of(3, 9, 0, 5), Of(11, 2, 1, 8), Of(1, 4, 2, 3)};
  for (const auto& [what, cfg, at, o] : std::vector<std::tuple<std::string, ParallelConfig, size_t, ServeOptions>>{
           {"tp4 attn-dp2, first, chunks of 3 mixed", {.tp = 4, .attn_dp = 2}, 0, {.chunk = 3, .mixed = true}},
           {"tp4 attn-dp2, second (the other group)", {.tp = 4, .attn_dp = 2}, 1, {.chunk = 3, .mixed = true}},
           {"tp4 a2a, last, one token a step", {.tp = 4, .moe = MoeMode::kA2a}, 3, {.chunk = 1}},
           {"tp2 pp2, third, whole prompts", {.tp = 2, .pp = 2}, 2, {}},
           {"tp4 input-scattered, chunks of 5", {.tp = 4, .input_scattered = true}, 1, {.chunk = 5}},
           // Sequence shards: its tokens split over the CP ranks each step, a decode's on CP rank 0.
           {"tp4 cp2, second, chunks of 3 mixed", {.tp = 4, .cp = 2}, 1, {.chunk = 3, .mixed = true}},
           {"tp8 cp4, first, whole prompts", {.tp = 8, .cp = 4}, 0, {}},
           // Its cache split by position over the DCP ranks, their partials merged by the canonical tree.
           {"tp8 dcp2, second, chunks of 3 mixed", {.tp = 8, .dcp = 2}, 1, {.chunk = 3, .mixed = true}},
           {"tp8 dcp4, last, one token a step", {.tp = 8, .dcp = 4}, 3, {.chunk = 1}},
           {"tp8 cp2 dcp2, first, chunks of 5", {.tp = 8, .cp = 2, .dcp = 2}, 0, {.chunk = 5}}}) {
    const auto& alone = cfg.moe == MoeMode::kA2a ? a2a_alone : tp_alone;
    const auto batched = rows_of_a(cfg, others, at, o);
    EXPECT_TRUE(batched.first == alone.first) << what;
    EXPECT_EQ(batched.second, alone.second) << what;
  }
}

// Every layer's output for every token: the model cut after each of its
// layers (the same weights, which come from their names) generates, and
// each token's state after that layer (through the final norm) and its
// logits equal the cut reference's, bit for bit.
TEST(Generate, EveryLayersOutputForEveryTokenEqualsTheTeacherForcedReference) {
  for (const std::string family : {"llama", "deepseek-v2-lite", "nemotron-h", "qwen3-next"}) {
    const Model whole = CatalogueModel(family).value();
    for (int layers = 1; layers <= whole.num_layers; ++layers) {
      Model m = whole;
      m.num_layers = layers;
      const Weights w = MustWeights(m, Dtype::kBf16);
      const Served s = Serve(m, {.tp = 2, .attn_dp = 2}, w, {Of(6, 4), Of(3, 5, 1, 9), Of(8, 2, 2, 4)},
                             {.chunk = 3, .mixed = true}, Dtype::kBf16);
      ExpectTeacherForced(s, family + " cut after layer " + std::to_string(layers));
    }
  }
}

// The memory estimate's caches are what the ranks hold at the last step of
// requests that arrive together and end together: GQA's KV heads a rank
// holds (one, replicated, past the KV heads), MLA's latent whole on every
// attention-TP rank, a mixer's state per request.
TEST(Generate, TheMemoryEstimatesCachesAreWhatTheRanksHoldAtTheEnd) {
  for (const auto& [family, cfg] :
       std::vector<std::pair<std::string, ParallelConfig>>{{"llama", {.tp = 2}},
                                                           {"llama", {.tp = 4, .attn_dp = 2}},
                                                           {"qwen3", {.tp = 8}},
                                                           {"deepseek-v2-lite", {.tp = 4, .attn_dp = 2}},
                                                           {"nemotron-h", {.tp = 2}},
                                                           {"qwen3-next", {.tp = 2}},
                                                           // Every CP rank holds its group's whole K/V.
                                                           {"llama", {.tp = 4, .cp = 2}},
                                                           {"deepseek-v2-lite", {.tp = 8, .attn_dp = 2, .cp = 2}},
                                                           // Each token's entries on one rank of its DCP group.
                                                           {"llama", {.tp = 8, .dcp = 4}},
                                                           {"deepseek-v2-lite", {.tp = 8, .attn_dp = 2, .dcp = 2}},
                                                           {"nemotron-h", {.tp = 4, .dcp = 2}},
                                                           {"qwen3", {.tp = 8, .cp = 2, .dcp = 2}}}) {
    const Model m = CatalogueModel(family).value();
    const Weights w = MustWeights(m, Dtype::kF32);
    const std::vector<Request> rs = {Of(6, 3), Of(6, 3, 0, 9)};
    const Served s = Serve(m, cfg, w, rs, {}, Dtype::kF32);
    const int64_t outputs = 16 * (m.hidden + m.dims->vocab) * 4;  // every token's hidden state and logits
    EXPECT_EQ(s.g.peak_cache_bytes, GenerationCacheBytes(m, cfg, {.fed = 16, .requests = 2}) - outputs)
        << family << " " << Describe(cfg);
    ExpectTeacherForced(s, family);
  }
}

}  // namespace
}  // namespace seam
