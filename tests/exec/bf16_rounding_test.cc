// The rounding points of a bf16 run, checked from the bits: where a bf16
// model's tensors are stored in bf16, every value a kernel hands on (to the
// next part of the stage, to a collective, to the next stage) is one bf16
// holds exactly, i.e. an fp32 whose low 16 bits are zero. The runs compare
// with a reference that shares the kernels, so a rounding point dropped from
// a kernel leaves both alike; these tests read the values themselves, not
// the kernels' rounding calls.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "exec_testing.h"
#include "numerics/gated_deltanet.h"
#include "numerics/mamba2.h"
#include "numerics/mixer.h"
#include "numerics/request_cache.h"
#include "numerics/stages.h"
#include "numerics/streams.h"
#include "seam/weight_specs.h"

namespace seam::exec {
namespace {

constexpr Shard kWhole{0, 1};
const Numerics kBf16{.dtype = Dtype::kBf16};

bool HeldByBf16(float x) {
  uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & 0xFFFFu) == 0;
}

// The entries of `t` that bf16 does not hold: how many, and the first.
std::string NotBf16(const Tensor& t) {
  int count = 0;
  std::string first;
  for (int r = 0; r < t.rows(); ++r) {
    for (int c = 0; c < t.cols(); ++c) {
      if (HeldByBf16(t.at(r, c))) continue;
      if (count++ == 0) first = fmt::format("({}, {}) = {}", r, c, t.at(r, c));
    }
  }
  return count == 0 ? "" : fmt::format("{} of {} values, first {}", count, t.size(), first);
}

// A stage's input as a bf16 run hands it on: distinct values bf16 holds
// (multiples of 1/64 below 2).
Tensor Input(int rows, int cols, int salt = 0) {
  Tensor t(rows, cols);
  for (int i = 0; i < rows * cols; ++i) {
    t.data()[i] = static_cast<float>(((i * 37 + salt * 11) % 129) - 64) / 64.0f * 1.5f;
  }
  EXPECT_EQ(NotBf16(t), "");
  return t;
}

struct Subject {
  std::string name;
  Model model;
  Weights weights;
};

// Every catalogue model (tiny shapes) with its bf16 weights.
const std::vector<Subject>& Subjects() {
  static const std::vector<Subject> subjects = [] {
    std::vector<Subject> out;
    for (const CatalogueEntry& e : Catalogue()) {
      Model m = e.make();
      Weights w = testing::MustWeights(m, Dtype::kBf16);
      out.push_back({e.name, std::move(m), std::move(w)});
    }
    return out;
  }();
  return subjects;
}

// Calls visit(subject, stage) for every stage of `kind` in the catalogue;
// returns how many.
template <class Visit>
int ForEachStage(StageKind kind, Visit&& visit) {
  int n = 0;
  for (const Subject& s : Subjects()) {
    for (const StageRef& ref : StagesOf(s.model, 0, s.model.num_layers)) {
      if (ref.decl.kind != kind) continue;
      ++n;
      visit(s, ref);
    }
  }
  return n;
}

std::string Where(const Subject& s, const StageRef& ref, std::string_view what) {
  return fmt::format("{} stage {}: {}", s.name, ref.index, what);
}

constexpr int kRows = 6;

TEST(Bf16RoundingPoints, AttentionHandsOnItsProjectionsAndItsOutputInBf16) {
  int mla = 0;
  const int stages = ForEachStage(StageKind::kAttention, [&](const Subject& s, const StageRef& ref) {
    const AttentionKernel k(ref, s.model, s.weights, kWhole, kBf16);
    if (s.model.dims->mla.kv_lora > 0) ++mla;
    const Tensor prepared = k.Prepare(Input(kRows, s.model.hidden));
    EXPECT_EQ(NotBf16(prepared), "") << Where(s, ref, "the prepared input");
    std::vector<int> positions(kRows);
    for (int r = 0; r < kRows; ++r) positions[static_cast<size_t>(r)] = r;
    const AttentionKernel::Projected p = k.Project(prepared, positions);
    EXPECT_EQ(NotBf16(p.q), "") << Where(s, ref, "q");
    EXPECT_EQ(NotBf16(p.entries), "") << Where(s, ref, "the cache entries");
    Tensor keys, values;
    k.KeyValues(p.entries.data(), 0, kRows, keys, values);
    EXPECT_EQ(NotBf16(keys), "") << Where(s, ref, "k");
    EXPECT_EQ(NotBf16(values), "") << Where(s, ref, "v");
    CacheRows cache(k.cache_width());
    Tensor out(kRows, k.out_width());
    AttendRequest(k, p, 0, kRows, positions, cache, out);
    EXPECT_EQ(NotBf16(out), "") << Where(s, ref, "the attention's output");
  });
  EXPECT_GT(stages, 0);
  EXPECT_GT(mla, 0);  // multi-head latent attention among them
}

TEST(Bf16RoundingPoints, GatedDeltaNetHandsOnItsProjectionsConvRecurrenceAndNormInBf16) {
  int kernels = 0;
  ForEachStage(StageKind::kMixer, [&](const Subject& s, const StageRef& ref) {
    if (s.model.dims->mixer != MixerKind::kGatedDeltaNet) return;
    ++kernels;
    const GatedDeltaNetKernel k(ref, s.model, s.weights, kWhole, kBf16);
    MixerKernel::State state = k.NewState();
    const GatedDeltaNetKernel::Projected p = k.Project(Input(kRows, s.model.hidden));
    EXPECT_EQ(NotBf16(p.qkv), "") << Where(s, ref, "the q, k, v projection");
    EXPECT_EQ(NotBf16(p.z), "") << Where(s, ref, "the z projection");
    EXPECT_EQ(NotBf16(p.b), "") << Where(s, ref, "the b projection");
    EXPECT_EQ(NotBf16(p.a), "") << Where(s, ref, "the a projection");
    const Tensor conv = k.Conv(p.qkv, state);
    EXPECT_EQ(NotBf16(conv), "") << Where(s, ref, "the conv's output");
    const Tensor o = k.Recur(conv, p.b, p.a, state);
    EXPECT_EQ(NotBf16(o), "") << Where(s, ref, "the delta rule's output");
    EXPECT_EQ(NotBf16(k.GatedNorm(o, p.z)), "") << Where(s, ref, "the gated norm");
    MixerKernel::State fresh = k.NewState();
    EXPECT_EQ(NotBf16(k.Scan(Input(kRows, s.model.hidden, 1), fresh)), "") << Where(s, ref, "the scan");
  });
  EXPECT_GT(kernels, 0);
}

TEST(Bf16RoundingPoints, Mamba2HandsOnItsProjectionsConvScanAndNormInBf16) {
  int kernels = 0;
  ForEachStage(StageKind::kMixer, [&](const Subject& s, const StageRef& ref) {
    if (s.model.dims->mixer != MixerKind::kMamba2) return;
    ++kernels;
    const Mamba2Kernel k(ref, s.model, s.weights, kWhole, kBf16);
    MixerKernel::State state = k.NewState();
    const Mamba2Kernel::Projected p = k.Project(Input(kRows, s.model.hidden));
    EXPECT_EQ(NotBf16(p.z), "") << Where(s, ref, "the z projection");
    EXPECT_EQ(NotBf16(p.xbc), "") << Where(s, ref, "the x, B, C projection");
    EXPECT_EQ(NotBf16(p.dt), "") << Where(s, ref, "the dt projection");
    const Tensor conv = k.Conv(p.xbc, state);
    EXPECT_EQ(NotBf16(conv), "") << Where(s, ref, "the conv's output");
    const Tensor y = k.Ssm(conv, p.dt, state);
    EXPECT_EQ(NotBf16(y), "") << Where(s, ref, "the scan's output");
    EXPECT_EQ(NotBf16(k.GatedNorm(y, p.z)), "") << Where(s, ref, "the gated norm");
    MixerKernel::State fresh = k.NewState();
    EXPECT_EQ(NotBf16(k.Scan(Input(kRows, s.model.hidden, 1), fresh)), "") << Where(s, ref, "the scan");
  });
  EXPECT_GT(kernels, 0);
}

// An FFN's intermediate (the activation of its gate and up projections)
// feeds its down projection; it is read here through a down projection
// that copies it: row j of the copy holds 1 at column `first + j`, so with
// one K-block output column j is intermediate column first + j exactly.
Tensor IntermediateColumns(const Weights& w, const std::string& prefix, const FfnShape& shape, int hidden, int first) {
  std::map<std::string, Tensor> t;
  for (const char* part : {".gate_proj", ".up_proj"}) {
    for (const char* what : {".weight", ".bias"}) {
      if (w.contains(prefix + part + what)) t[prefix + part + what] = w.at(prefix + part + what).Copy();
    }
  }
  Tensor down(hidden, shape.width);
  for (int j = 0; j < hidden && first + j < shape.width; ++j) down.at(j, first + j) = 1.0f;
  t[prefix + ".down_proj.weight"] = down;
  if (shape.bias) t[prefix + ".down_proj.bias"] = Tensor(1, hidden);
  const Weights copying(std::move(t));
  const FfnKernel k(copying, prefix, shape, kWhole, {.dtype = Dtype::kBf16, .k_blocks = 1});
  const std::vector<Tensor> blocks = k.Blocks(Input(kRows, hidden));
  EXPECT_EQ(blocks.size(), 1U);
  return blocks.front();
}

void ExpectIntermediateInBf16(const Weights& w, const std::string& prefix, const FfnShape& shape, int hidden,
                              const std::string& where) {
  for (int first = 0; first < shape.width; first += hidden) {
    EXPECT_EQ(NotBf16(IntermediateColumns(w, prefix, shape, hidden, first)), "")
        << where << ", intermediate columns from " << first;
  }
}

TEST(Bf16RoundingPoints, ADenseFfnHandsItsDownProjectionAnIntermediateInBf16) {
  const int stages = ForEachStage(StageKind::kDenseFfn, [&](const Subject& s, const StageRef& ref) {
    const FfnShape shape = DenseShape(ref.decl, *s.model.dims);
    ExpectIntermediateInBf16(s.weights, StagePrefix(ref), shape, s.model.hidden, Where(s, ref, "dense FFN"));
  });
  EXPECT_GT(stages, 0);
}

TEST(Bf16RoundingPoints, AMoeHandsOnEachExpertsIntermediateAndOutputTheSharedExpertsAndTheFoldInBf16) {
  const int stages = ForEachStage(StageKind::kSparseFfn, [&](const Subject& s, const StageRef& ref) {
    const ModelDims& d = *s.model.dims;
    const MoeKernel k(ref, s.model, s.weights, kWhole, MoeMode::kA2a, kBf16);
    const Tensor x = Input(kRows, s.model.hidden);
    const FfnShape expert{d.moe_intermediate, d.activation, d.moe_bias, static_cast<float>(d.swiglu_limit)};
    ExpectIntermediateInBf16(s.weights, StagePrefix(ref) + ".experts.0", expert, s.model.hidden,
                             Where(s, ref, "expert 0"));
    std::vector<Tensor> outputs;
    for (int e = 0; e < d.experts; ++e) {
      outputs.push_back(k.Expert(e, x));
      EXPECT_EQ(NotBf16(outputs.back()), "") << Where(s, ref, fmt::format("expert {}'s output", e));
    }
    const Tensor shared = k.Shared(x);
    EXPECT_EQ(NotBf16(shared), "") << Where(s, ref, "the shared expert's output");
    const std::vector<Routing> routes = k.Route(x);
    Tensor folded(kRows, s.model.hidden);
    for (int r = 0; r < kRows; ++r) {
      const Routing& route = routes[static_cast<size_t>(r)];
      std::vector<const float*> picked;
      for (int e : route.experts) picked.push_back(k.IsSkip(e) ? x.row(r) : outputs[static_cast<size_t>(e)].row(r));
      k.Fold(route, picked, shared.empty() ? nullptr : shared.row(r), folded.row(r));
    }
    EXPECT_EQ(NotBf16(folded), "") << Where(s, ref, "the folded output");
  });
  EXPECT_GT(stages, 0);
}

TEST(Bf16RoundingPoints, ALinearStageHandsOnItsOutputInBf16) {
  const int stages = ForEachStage(StageKind::kLinear, [&](const Subject& s, const StageRef& ref) {
    const LinearKernel k(ref, s.weights, kBf16);
    EXPECT_EQ(NotBf16(k.Run(Input(kRows, s.model.hidden))), "") << Where(s, ref, "the linear output");
  });
  EXPECT_GT(stages, 0);
}

// Hyper-connections: the streams a stack starts with, the mix a stage reads
// and the streams it writes back.
TEST(Bf16RoundingPoints, HyperConnectionStreamsAreExpandedReadAndWrittenInBf16) {
  int stages = 0;
  for (const StageKind kind : {StageKind::kAttention, StageKind::kMixer, StageKind::kDenseFfn, StageKind::kSparseFfn}) {
    ForEachStage(kind, [&](const Subject& s, const StageRef& ref) {
      if (ref.decl.update != UpdateKind::kHyperConnection) return;
      ++stages;
      const int n = s.model.residual_streams, hidden = s.model.hidden;
      const StreamKernel k(s.weights, StagePrefix(ref), false, n, hidden, *s.model.dims, kBf16);
      const Tensor streams = StreamKernel::Expand(Input(kRows, hidden), n, Dtype::kBf16);
      EXPECT_EQ(NotBf16(streams), "") << Where(s, ref, "the expanded streams");
      StreamMix mix;
      EXPECT_EQ(NotBf16(k.Read(streams, &mix)), "") << Where(s, ref, "the mix the stage reads");
      const Tensor written = k.Write(streams, Input(kRows, hidden, 1), mix);
      EXPECT_EQ(NotBf16(written), "") << Where(s, ref, "the streams the stage writes");
      EXPECT_EQ(NotBf16(k.Read(written, &mix)), "") << Where(s, ref, "the next read");
    });
  }
  EXPECT_GT(stages, 0);
}

TEST(Bf16RoundingPoints, TheNormAndTheResidualAddHandOnBf16) {
  const Tensor x = Input(kRows, 64), y = Input(kRows, 64, 1);
  const Tensor w = Input(1, 64, 2);
  EXPECT_EQ(NotBf16(RmsNorm(x, w.span(), 1e-5f, Dtype::kBf16)), "");
  EXPECT_EQ(NotBf16(Add(x, y, Dtype::kBf16)), "");
  // The checks see a value bf16 does not hold.
  EXPECT_EQ(NotBf16(Tensor(1, 2, {0.5f, 1.0f + 1.0f / 1024})), "1 of 2 values, first (0, 1) = 1.0009766");
}

}  // namespace
}  // namespace seam::exec
