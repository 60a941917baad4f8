// The reference: the model unsharded, one token at a time, with the same
// kernels the ranks use (every stage held whole), so a row's arithmetic is
// the ranks' arithmetic and only the batching differs.
#include <map>
#include <memory>

#include "exec/stages.h"
#include "seam/exec.h"

namespace seam {
namespace {

using exec::AttentionKernel;
using exec::FfnKernel;
using exec::MixerKernel;
using exec::MoeKernel;
using exec::Shard;

constexpr Shard kWhole{0, 1};

// One stage held whole, with the state it keeps per request.
class ReferenceStage {
 public:
  ReferenceStage(const StageRef& s, const Model& m, const Weights& w, const RunNumerics& n) : ref_(s), n_(n) {
    switch (s.decl.kind) {
      case StageKind::kAttention: attention_ = std::make_unique<AttentionKernel>(s, m, w, kWhole, n); break;
      case StageKind::kMixer: mixer_ = std::make_unique<MixerKernel>(s, m, w, kWhole, n); break;
      case StageKind::kDenseFfn:
        ffn_ = std::make_unique<FfnKernel>(w, StagePrefix(s), m.dims->intermediate, m.dims->activation, kWhole, n);
        break;
      case StageKind::kSparseFfn: moe_ = std::make_unique<MoeKernel>(s, m, w, kWhole, n.moe_order, n); break;
      case StageKind::kNoOp: break;
    }
  }

  const StageRef& ref() const { return ref_; }

  // A new request of `length` tokens starts.
  void Reset(int length) {
    if (attention_) {
      keys_ = Tensor(length, attention_->kv_width());
      values_ = Tensor(length, attention_->kv_width());
    }
    if (mixer_) state_ = mixer_->NewState();
  }

  // The stage's complete output for one token (a row of x) at `position`.
  Tensor Token(const Tensor& x, int position) {
    Tensor out;
    switch (ref_.decl.kind) {
      case StageKind::kAttention: {
        Tensor q, k, v;
        const int pos[] = {position};
        attention_->Project(x, pos, q, k, v);
        std::copy(k.row(0), k.row(0) + k.cols(), keys_.row(position));
        std::copy(v.row(0), v.row(0) + v.cols(), values_.row(position));
        const int begin[] = {0};
        const int end[] = {position + 1};
        out = attention_->Output(attention_->Attend(q, keys_, values_, begin, end));
        break;
      }
      case StageKind::kMixer: out = mixer_->Output(mixer_->Scan(x, state_)); break;
      case StageKind::kDenseFfn: out = ffn_->Partial(x); break;
      case StageKind::kSparseFfn: out = n_.moe_order == MoeMode::kTp ? moe_->TpPartial(x) : A2aToken(x); break;
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
    for (int e : r.experts) outs.push_back(moe_->Expert(e, x));
    std::vector<const float*> ptrs;
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
  Tensor keys_, values_;
  std::vector<float> state_;
};

}  // namespace

Expected<Tensor> RunReference(const Model& m, const Weights& w, const Batch& b, const RunNumerics& n) {
  if (Status s = CheckWeights(m, w); !s.ok()) return s.error();
  std::vector<ReferenceStage> stages;
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
    if (s.decl.kind != StageKind::kNoOp) stages.emplace_back(s, m, w, n);
  }
  const Tensor& table = w.at(kEmbeddingName);
  const float eps = static_cast<float>(m.dims->rms_eps);
  Tensor hidden(b.tokens(), m.hidden);
  int row = 0;
  for (const std::vector<int>& request : b.requests) {
    for (ReferenceStage& s : stages) s.Reset(static_cast<int>(request.size()));
    for (size_t t = 0; t < request.size(); ++t) {
      Tensor residual = table.RowRange(request[t], request[t] + 1);
      Tensor out;
      for (ReferenceStage& s : stages) {
        if (!out.empty()) residual = Add(residual, out, n.dtype);
        const Tensor input = RmsNorm(residual, w.at(StageNormName(s.ref())).span(), eps, n.dtype);
        out = s.Token(input, static_cast<int>(t));
      }
      if (!out.empty()) residual = Add(residual, out, n.dtype);
      const Tensor y = RmsNorm(residual, w.at(kFinalNormName).span(), eps, n.dtype);
      std::copy(y.row(0), y.row(0) + y.cols(), hidden.row(row++));
    }
  }
  return hidden;
}

}  // namespace seam
