// The reference: the model unsharded, one token at a time, with the same
// kernels the ranks use (every stage held whole), so a row's arithmetic is
// the ranks' arithmetic and only the batching differs.
#include "seam/runtime/reference.h"

#include <map>
#include <memory>

#include "numerics/mixer.h"
#include "numerics/request_cache.h"
#include "numerics/stages.h"
#include "numerics/streams.h"
#include "seam/runtime/gemm.h"
#include "seam/sharding.h"

namespace seam {
namespace {

using exec::AttentionKernel;
using exec::DenseShape;
using exec::FfnKernel;
using exec::LinearKernel;
using exec::MakeMixerKernel;
using exec::MixerKernel;
using exec::MoeKernel;
using exec::Shard;
using exec::StreamKernel;
using exec::StreamMix;

constexpr Shard kWhole{0, 1};

// One stage held whole, with the state it keeps per request.
class ReferenceStage {
 public:
  ReferenceStage(const StageRef& s, const Model& m, const Weights& w, const RunNumerics& n) : ref_(s), n_(n) {
    switch (s.decl.kind) {
      case StageKind::kAttention: attention_ = std::make_unique<AttentionKernel>(s, m, w, kWhole, n); break;
      case StageKind::kMixer: mixer_ = MakeMixerKernel(s, m, w, kWhole, n); break;
      case StageKind::kDenseFfn:
        ffn_ = std::make_unique<FfnKernel>(w, StagePrefix(s), DenseShape(s.decl, *m.dims), kWhole, n);
        break;
      // On one rank every expert is whole, however the run holds them.
      case StageKind::kSparseFfn: moe_ = std::make_unique<MoeKernel>(s, m, w, kWhole, MoeMode::kA2a, n); break;
      case StageKind::kLinear: linear_ = std::make_unique<LinearKernel>(s, w, n); break;
      case StageKind::kNoOp: break;
    }
    if (s.decl.update == UpdateKind::kHyperConnection) {
      streams_ = std::make_unique<StreamKernel>(w, StagePrefix(s), false, m.residual_streams, m.hidden, *m.dims, n);
    }
  }

  const StageRef& ref() const { return ref_; }
  const StreamKernel* streams() const { return streams_.get(); }

  // A new request starts.
  void Reset() {
    if (attention_) cache_ = exec::CacheRows(attention_->cache_width());
    if (mixer_) state_ = mixer_->NewState();
  }

  // The stage's complete output for one token (a row of x) at `position`;
  // an MoE appends the experts it chose to `route`.
  Tensor Token(const Tensor& x, int position, std::vector<int>& route) {
    Tensor out;
    switch (ref_.decl.kind) {
      case StageKind::kAttention: {
        const int pos[] = {position};
        const AttentionKernel::Projected p = attention_->Project(attention_->Prepare(x), pos);
        Tensor o(1, attention_->out_width());
        exec::AttendRequest(*attention_, p, 0, 1, pos, cache_, o);
        out = attention_->Output(o, p.gate);
        break;
      }
      case StageKind::kMixer: out = mixer_->Output(mixer_->Scan(x, state_)); break;
      case StageKind::kDenseFfn: out = ffn_->Partial(x); break;
      case StageKind::kSparseFfn: {
        const std::vector<int> chosen = moe_->Route(x).front().experts;
        route.insert(route.end(), chosen.begin(), chosen.end());
        out = n_.moe_order == MoeSumOrder::kPerKBlock ? moe_->TpPartial(x) : A2aToken(x);
        break;
      }
      case StageKind::kLinear: out = linear_->Run(x); break;
      case StageKind::kNoOp: break;
    }
    RoundToStorage(out, n_.dtype);
    return out;
  }

 private:
  // An a2a MoE sums whole experts: each routed expert's output, then the fold.
  Tensor A2aToken(const Tensor& x) const {
    const Routing r = moe_->Route(x).front();
    std::vector<Tensor> outs;
    std::vector<const float*> ptrs;
    for (int e : r.experts) outs.push_back(moe_->IsSkip(e) ? x : moe_->Expert(e, x));
    for (const Tensor& o : outs) ptrs.push_back(o.row(0));
    const Tensor shared = moe_->Shared(x);
    Tensor out(1, moe_->hidden());
    moe_->Fold(r, ptrs, shared.empty() ? nullptr : shared.row(0), out.row(0));
    return out;
  }

  StageRef ref_;
  RunNumerics n_;
  std::unique_ptr<AttentionKernel> attention_;
  std::unique_ptr<MixerKernel> mixer_;
  std::unique_ptr<FfnKernel> ffn_;
  std::unique_ptr<MoeKernel> moe_;
  std::unique_ptr<LinearKernel> linear_;
  std::unique_ptr<StreamKernel> streams_;
  exec::CacheRows cache_{0};
  MixerKernel::State state_;
};

}  // namespace

RunNumerics NumericsOf(const ParallelConfig& cfg, Dtype dtype) {
  const MoeSumOrder order = cfg.moe == MoeMode::kTp ? MoeSumOrder::kPerKBlock : MoeSumOrder::kPerExpert;
  return {dtype, order, CanonicalKBlocks(cfg)};
}

Tensor ReferenceLogits(const Tensor& hidden, const Weights& w, Dtype dtype) {
  Tensor logits = Gemm(hidden, w.at(kLmHeadName));
  RoundToStorage(logits, dtype);
  return logits;
}

Expected<Tensor> RunReference(const Model& m, const Weights& w, const Batch& b, const RunNumerics& n,
                              std::vector<std::vector<int>>* routes) {
  SEAM_RETURN_IF_ERROR(CheckWeights(m, w));
  std::vector<ReferenceStage> stages;
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
    if (s.decl.kind != StageKind::kNoOp) stages.emplace_back(s, m, w, n);
  }
  const bool hyper = m.residual_streams > 1;
  std::unique_ptr<StreamKernel> head;
  if (hyper) head = std::make_unique<StreamKernel>(w, kStreamHeadName, true, m.residual_streams, m.hidden, *m.dims, n);
  const MatrixView table = w.at(kEmbeddingName);
  const float eps = static_cast<float>(m.dims->rms_eps);
  Tensor hidden(b.tokens(), m.hidden);
  int row = 0;
  for (const std::vector<int>& request : b.requests) {
    for (ReferenceStage& s : stages) s.Reset();
    for (size_t t = 0; t < request.size(); ++t) {
      const Tensor x = table.Rows(request[t], request[t] + 1).Copy();
      Tensor residual = hyper ? StreamKernel::Expand(x, m.residual_streams, n.dtype) : x;
      Tensor out;
      std::vector<int> route;
      for (ReferenceStage& s : stages) {
        if (!out.empty()) residual = Add(residual, out, n.dtype);  // plain adds wait for the next read
        StreamMix mix;
        const Tensor read = s.streams() ? s.streams()->Read(residual, &mix) : residual;
        const Tensor input = RmsNorm(read, w.at(StageNormName(s.ref())).span(), eps, n.dtype);
        out = s.Token(input, static_cast<int>(t), route);
        if (s.streams()) {  // a hyper-connection update: the stage writes its streams itself
          residual = s.streams()->Write(residual, out, mix);
          out = Tensor();
        }
      }
      if (!out.empty()) residual = Add(residual, out, n.dtype);
      const Tensor read = head ? head->Read(residual, nullptr) : residual;
      const Tensor y = RmsNorm(read, w.at(kFinalNormName).span(), eps, n.dtype);
      std::copy(y.row(0), y.row(0) + y.cols(), hidden.row(row++));
      if (routes != nullptr) routes->push_back(std::move(route));
    }
  }
  return hidden;
}

}  // namespace seam
