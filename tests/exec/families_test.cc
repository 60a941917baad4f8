// The compute of each family's distinguishing parts. The bit-identity matrix
// shows the sharded runs equal the reference; these show the reference does
// what the family does: each part changes the output when it is there, and
// does its own math (a window hides old keys, a skip expert passes its row
// through, sigmoid routing selects by the corrected score but weighs by the
// plain one, the stream mix is doubly stochastic).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "exec_testing.h"
#include "numerics/stages.h"
#include "numerics/streams.h"

namespace seam {
namespace {

using exec::MoeKernel;
using exec::Shard;
using exec::StreamKernel;
using exec::StreamMix;
using testing::MustReference;
using testing::MustWeights;

Model Family(const std::string& name) {
  Expected<Model> m = CatalogueModel(name);
  if (!m) throw std::runtime_error(m.error().message);
  return *std::move(m);
}

Batch OneRequest(std::vector<int> ids) { return Batch{{std::move(ids)}}; }

Tensor Reference(const Model& m, const Batch& b) {
  return MustReference(m, {.tp = 1}, MustWeights(m, Dtype::kF32), b, Dtype::kF32);
}

bool RowsEqual(const Tensor& a, const Tensor& b, int row) {
  for (int c = 0; c < a.cols(); ++c) {
    if (a.at(row, c) != b.at(row, c)) return false;
  }
  return true;
}

// The first stage of `kind` in the model.
StageRef FirstOf(const Model& m, StageKind kind) {
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
    if (s.decl.kind == kind) return s;
  }
  throw std::runtime_error("no stage of that kind");
}

Weights With(const Weights& w, const std::string& name, const std::function<void(Tensor&)>& edit) {
  std::map<std::string, Tensor> all = w.Copies();
  edit(all.at(name));
  return Weights(std::move(all));
}

// ---------------------------------------------------------------------------
// Each part changes the output: the same model without it (and the same
// weights for everything else, which come from their names) computes
// something else.

struct Part {
  std::string family;
  std::string part;
  std::function<void(ModelDims&)> remove;
};

void PrintTo(const Part& p, std::ostream* os) { *os << p.family << " " << p.part; }

class EachPart : public ::testing::TestWithParam<Part> {};

TEST_P(EachPart, ChangesTheOutput) {
  const Model with = Family(GetParam().family);
  Model without = with;
  GetParam().remove(*without.dims);
  const Expected<Batch> b = RandomBatch(10, 2, with.dims->vocab, 3);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(Reference(with, *b) == Reference(without, *b));
}

INSTANTIATE_TEST_SUITE_P(
    Families, EachPart,
    ::testing::Values(Part{"llama3", "rope_scaling", [](ModelDims& d) { d.rope_scaling.factor = 0; }},
                      Part{"qwen3", "qk_norm", [](ModelDims& d) { d.qk_norm = false; }},
                      Part{"gpt-oss", "sinks", [](ModelDims& d) { d.attention_sinks = false; }},
                      Part{"gpt-oss", "biases", [](ModelDims& d) { d.qkv_bias = false; }},
                      Part{"gpt-oss", "expert_biases", [](ModelDims& d) { d.moe_bias = false; }},
                      Part{"gpt-oss", "clamped_swiglu", [](ModelDims& d) { d.activation = Activation::kSwiGlu; }},
                      Part{"gpt-oss", "swiglu_limit", [](ModelDims& d) { d.swiglu_limit = 0.25; }},
                      Part{"kimi-k2", "correction_bias", [](ModelDims& d) { d.correction_bias = false; }},
                      Part{"kimi-k2", "routed_scaling", [](ModelDims& d) { d.routed_scaling = 1.0; }},
                      Part{"kimi-k2", "sigmoid_scoring", [](ModelDims& d) { d.scoring = RouterScoring::kSoftmax; }},
                      Part{"nemotron-h", "time_step_limit", [](ModelDims& d) { d.mixer_dt_max = INFINITY; }},
                      Part{"qwen3-next", "attention_gate", [](ModelDims& d) { d.attention_gate = false; }},
                      Part{"qwen3-next", "partial_rope", [](ModelDims& d) { d.rope_fraction = 1.0; }},
                      Part{"kimi-k2", "expert_groups", [](ModelDims& d) { d.expert_groups = {}; }},
                      Part{"kimi-k2", "yarn", [](ModelDims& d) { d.yarn = {}; }},
                      Part{"deepseek-v2-lite", "shared_experts", [](ModelDims& d) { d.shared_intermediate = 0; }},
                      Part{"deepseek-v2-lite", "yarn", [](ModelDims& d) { d.yarn = {}; }},
                      Part{"deepseek-v2-lite", "mscale_all_dim", [](ModelDims& d) { d.yarn.mscale_all_dim = 0; }},
                      Part{"deepseek-v2-lite", "rope_pairing",
                           [](ModelDims& d) { d.rope_pairing = RopePairing::kHalf; }},
                      Part{"mhc", "sinkhorn", [](ModelDims& d) { d.hc_sinkhorn_iters = 0; }}),
    [](const auto& i) {
      std::string n = i.param.family + "_" + i.param.part;
      for (char& c : n) {
        if (c == '-') c = '_';
      }
      return n;
    });

// ---------------------------------------------------------------------------
// Sliding window.

TEST(SlidingWindow, AQueryAtPositionPSeesTheLastWindowKeysOnly) {
  // GPT-OSS's layer 0 has a window of 8: position 7 still sees token 0,
  // position 8 no longer does. One layer, so nothing else carries token 0 on.
  Model m = Family("gpt-oss");
  m.num_layers = 1;
  std::vector<int> ids = {5, 17, 42, 8, 99, 3, 71, 64, 12, 200, 33, 150};
  const Tensor a = Reference(m, OneRequest(ids));
  ids[0] = 6;
  const Tensor b = Reference(m, OneRequest(ids));
  for (int p = 0; p < 8; ++p) EXPECT_FALSE(RowsEqual(a, b, p)) << "position " << p;
  for (int p = 8; p < 12; ++p) EXPECT_TRUE(RowsEqual(a, b, p)) << "position " << p;
}

TEST(SlidingWindow, AFullAttentionLayerSeesEveryEarlierKey) {
  Model m = Family("gpt-oss");
  m.num_layers = 2;  // layer 1 has full attention
  std::vector<int> ids = {5, 17, 42, 8, 99, 3, 71, 64, 12, 200, 33, 150};
  const Tensor a = Reference(m, OneRequest(ids));
  ids[0] = 6;
  EXPECT_FALSE(RowsEqual(a, Reference(m, OneRequest(ids)), 11));
}

// ---------------------------------------------------------------------------
// Routing.

TEST(SkipExpert, ARowRoutedToItPassesItsInputThroughScaledByItsWeight) {
  const Model m = Family("zaya1");
  const StageRef s = FirstOf(m, StageKind::kSparseFfn);
  const int experts = m.dims->experts;
  // A router that scores every real expert 0 and the skip expert sum(x) > 0.
  const Weights w = With(MustWeights(m, Dtype::kF32), StagePrefix(s) + ".gate.weight", [&](Tensor& router) {
    ASSERT_EQ(router.rows(), experts + 1);
    for (int e = 0; e <= experts; ++e) {
      for (int c = 0; c < router.cols(); ++c) router.at(e, c) = e == experts ? 1.0f : 0.0f;
    }
  });
  Tensor x(1, m.hidden);
  float sum = 0;
  for (int c = 0; c < m.hidden; ++c) sum += x.at(0, c) = 0.01f * static_cast<float>(c % 7 + 1);
  const MoeKernel moe(s, m, w, Shard{0, 1}, MoeMode::kTp, {});
  const Routing r = moe.Route(x).front();
  ASSERT_EQ(r.experts, std::vector<int>{experts});
  const double p = std::exp(sum) / (std::exp(sum) + static_cast<double>(experts));  // softmax over 0, ..., 0, sum
  EXPECT_NEAR(r.weights[0], p, 1e-6);
  const Tensor out = moe.TpPartial(x);
  for (int c = 0; c < m.hidden; ++c) EXPECT_NEAR(out.at(0, c), p * x.at(0, c), 1e-7) << c;
}

TEST(SigmoidRouting, SelectsByTheCorrectedScoreAndWeighsByThePlainOne) {
  const Model m = Family("kimi-k2");
  const StageRef s = FirstOf(m, StageKind::kSparseFfn);
  const std::string router = StagePrefix(s) + ".gate.weight";
  Weights w = With(MustWeights(m, Dtype::kF32), router, [](Tensor& t) {
    for (float& v : t.span()) v = 0.0f;  // every plain score sigmoid(0) = 1/2
  });
  w = With(w, StagePrefix(s) + ".gate.e_score_correction_bias", [](Tensor& t) {
    for (float& v : t.span()) v = 0.0f;
    t.at(0, 5) = 1.0f;
    t.at(0, 2) = 0.5f;
  });
  Tensor x(1, m.hidden);
  for (int c = 0; c < m.hidden; ++c) x.at(0, c) = 0.1f;
  const Routing r = MoeKernel(s, m, w, Shard{0, 1}, MoeMode::kTp, {}).Route(x).front();
  EXPECT_EQ(r.experts, (std::vector<int>{5, 2}));
  // Renormalised over the two plain scores (1/2 each), then scaled.
  const float each = 0.5f / (0.5f + 0.5f) * static_cast<float>(m.dims->routed_scaling);
  EXPECT_EQ(r.weights, (std::vector<float>{each, each}));
}

// ---------------------------------------------------------------------------
// Hyper-connections.

TEST(StreamMix, SinkhornMakesEachRowsResidualMixDoublyStochastic) {
  const Model m = Family("mhc");
  const StageRef s = FirstOf(m, StageKind::kAttention);
  const int k = m.residual_streams;
  const Weights w = MustWeights(m, Dtype::kF32);
  const StreamKernel hc(w, StagePrefix(s), false, k, m.hidden, *m.dims, {});
  Tensor x(3, m.hidden);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < m.hidden; ++c) x.at(r, c) = 0.01f * static_cast<float>((r * 13 + c * 5) % 17 - 8);
  }
  StreamMix mix;
  hc.Read(StreamKernel::Expand(x, k, Dtype::kF32), &mix);
  for (int r = 0; r < 3; ++r) {
    const float* res = mix.res.row(r);
    for (int i = 0; i < k; ++i) {
      double row = 0, col = 0;
      for (int j = 0; j < k; ++j) {
        row += res[i * k + j];
        col += res[j * k + i];
      }
      EXPECT_NEAR(row, 1.0, 1e-4) << "row " << r << " mix row " << i;
      EXPECT_NEAR(col, 1.0, 1e-6) << "row " << r << " mix column " << i;
    }
    for (int i = 0; i < k; ++i) {
      EXPECT_GT(mix.post.at(r, i), 0.0f);
      EXPECT_LT(mix.post.at(r, i), 2.0f);
    }
  }
}

TEST(StreamMix, EveryStreamStartsAsTheStacksInput) {
  Tensor x(2, 3);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 3; ++c) x.at(r, c) = static_cast<float>(r * 3 + c + 1);
  }
  const Tensor s = StreamKernel::Expand(x, 4, Dtype::kF32);
  ASSERT_EQ(s.cols(), 12);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 12; ++c) EXPECT_EQ(s.at(r, c), x.at(r, c % 3));
  }
}

}  // namespace
}  // namespace seam

namespace seam {
namespace {

// At tp 1 the binder emits no dispatch or combine around an a2a MoE (there is
// no one to exchange with): the experts must still see the rows and fold
// their outputs in the a2a order, bit for bit the reference's. Every family
// with an a2a path, so a hyper-connection write is covered too.
TEST(A2aAtTpOne, EveryFamilyWithAnA2aMoeRunsBitIdentical) {
  int families = 0;
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    if (!HasStageKind(m, StageKind::kSparseFfn) || !MoeDispatchesA2a(m)) continue;
    ++families;
    const ParallelConfig cfg{.moe = MoeMode::kA2a};
    const Weights w = MustWeights(m, Dtype::kF32);
    const Batch b = testing::MustBatch(12, 2);
    const testing::Ran ran = testing::MustRun(m, cfg, w, b, Dtype::kF32, Backend::kThreads);
    EXPECT_TRUE(ran.hidden == MustReference(m, cfg, w, b, Dtype::kF32)) << e.name;
    EXPECT_EQ(ran.ranks.at(0).calls(), 0) << e.name;  // nothing to exchange with
  }
  EXPECT_EQ(families, 8);
}

}  // namespace
}  // namespace seam
