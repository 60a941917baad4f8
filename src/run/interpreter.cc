// The plan interpreter. Values that still owe a sum are OwedSum handles: the
// only way to their numbers is the collective that completes them, so a plan
// that reads, adds, sends or gathers a partial sum fails here instead of
// computing with it.
#include "run/interpreter.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <variant>

#include "numerics/streams.h"
#include "seam/owed_sum.h"

namespace seam::exec {
namespace {

using Value = std::variant<Tensor, OwedSum<Tensor>>;

// What an a2a MoE keeps between its dispatch, its experts and its combine.
struct A2aScratch {
  Tensor input;
  std::vector<Routing> routes;
  std::vector<std::vector<std::pair<int, int>>> sent;  // per member: (row, slot) in send order
  std::vector<Tensor> received;                        // per member: rows + expert id column
  std::vector<Tensor> outputs;                         // per member: expert outputs, in received order
  bool dispatched = false;                             // whether the rows went through an all-to-all
};

class RankRunner {
 public:
  RankRunner(const RunContext& ctx, const Plan& plan, Comm& comm)
      : ctx_(ctx), plan_(plan), cfg_(plan.config()), comm_(comm), me_(CoordOf(cfg_, comm.rank())) {}

  std::optional<Tensor> Run() {
    const LinePlan* line = plan_.line(ctx_.variant);
    SEAM_CHECK(line != nullptr, "the plan has no line for this batch variant");
    if (plan_.header().pp_rank == 0) Embed(line->stages.front().arrives);
    RunSteps(line->receive, nullptr);
    for (const StagePlan& s : line->stages) {
      const StageRef& ref = ctx_.stages[static_cast<size_t>(s.index)];
      RunSteps(s.entry, &ref);
      RunSteps(s.compute, &ref);
      RunSteps(s.exit, &ref);
    }
    RunSteps(line->end.steps, nullptr);
    if (line->end.kind != EndKind::kFinalNorm || me_.attn_tp_rank != 0) return std::nullopt;
    return std::move(input_);
  }

 private:
  // ---- the rank's rows ----

  RowSpan Span(Rows r) const { return SpanOf(ctx_.layout, cfg_, r, me_); }

  RankGroup GroupFor(Group g) const { return {GroupRanks(cfg_, g, comm_.rank())}; }

  std::vector<RowSpan> MemberSpans(const RankGroup& g, Rows r) const {
    std::vector<RowSpan> out;
    for (int rank : g.ranks) out.push_back(SpanOf(ctx_.layout, cfg_, r, CoordOf(cfg_, rank)));
    return out;
  }

  // ---- values ----

  Tensor Complete(Value v, std::string_view what) const {
    if (auto* t = std::get_if<Tensor>(&v)) return std::move(*t);
    throw std::runtime_error(fmt::format("{} a value that still owes a sum over {}", what,
                                         Name(std::get<OwedSum<Tensor>>(v).group())));
  }

  Tensor TakePartial(Owed expected) {
    SEAM_CHECK(value_.has_value(), "no value to sum");
    auto* owed = std::get_if<OwedSum<Tensor>>(&*value_);
    if (owed == nullptr) throw std::runtime_error("sums a value that owes nothing: the sum would be taken twice");
    if (owed->group() != expected) {
      throw std::runtime_error(fmt::format("completes a sum owed over {} over {}", Name(owed->group()),
                                           Name(expected)));
    }
    Tensor partial = std::move(*owed).Complete([](Tensor t, Owed) { return t; });
    value_.reset();
    return partial;
  }

  Tensor Take(Operand op) {
    std::optional<Tensor> t;
    if (op == Operand::kValue) {
      SEAM_CHECK(value_.has_value(), "no value");
      t = Complete(std::move(*value_), "moves");
      value_.reset();
    } else {
      std::optional<Tensor>& slot = op == Operand::kResidual ? residual_ : input_;
      SEAM_CHECK(slot.has_value(), std::string("no ") + std::string(Name(op)));
      t = std::move(*slot);
      slot.reset();
    }
    return std::move(*t);
  }

  void Put(Operand op, Tensor t) {
    if (op == Operand::kValue) value_ = std::move(t);
    if (op == Operand::kResidual) residual_ = std::move(t);
    if (op == Operand::kInput) input_ = std::move(t);
  }

  Tensor Rounded(Tensor t) const {
    RoundToStorage(t, ctx_.numerics.dtype);
    return t;
  }

  // ---- the embedding ----

  // The first rank starts from the embedding: on the attention rows, or on
  // input-scattered batches as a vocab-parallel TP partial sum on the full rows.
  void Embed(const Boundary& arrives) {
    const Tensor& table = ctx_.weights.at(kEmbeddingName);
    const bool partial = arrives.value && arrives.value->owed != Owed::kNothing;
    const RowSpan rows = Span(arrives.value ? arrives.value->rows : Rows::Attention(cfg_));
    Tensor x(rows.rows(), table.cols());
    const RowSpan vocab = partial ? EvenSpans(table.rows(), cfg_.tp)[static_cast<size_t>(TpRank(cfg_, me_))]
                                  : RowSpan{0, table.rows()};
    for (int r = 0; r < rows.rows(); ++r) {
      const int id = ctx_.layout.token_ids[static_cast<size_t>(rows.begin + r)];
      if (id >= vocab.begin && id < vocab.end) std::copy(table.row(id), table.row(id) + table.cols(), x.row(r));
    }
    if (partial) {
      value_ = OwedSum<Tensor>(std::move(x), arrives.value->owed);
    } else {
      value_ = std::move(x);
    }
  }

  // ---- steps ----

  void RunSteps(const std::vector<Step>& steps, const StageRef* stage) {
    for (const Step& s : steps) RunStep(s, stage);
  }

  void RunStep(const Step& s, const StageRef* stage) {
    switch (s.kind) {
      case StepKind::kAllReduce: {
        const RankGroup g = GroupFor(*s.group);
        value_ = Rounded(comm_.AllReduce(g, TakePartial(s.owed_before)));
        return;
      }
      case StepKind::kReduceScatter:
      case StepKind::kReduceScatterV: {
        const RankGroup g = GroupFor(*s.group);
        const RowSpan in = Span(s.rows_in);
        std::vector<RowSpan> spans = MemberSpans(g, s.rows_out);
        for (RowSpan& sp : spans) sp = {sp.begin - in.begin, sp.end - in.begin};
        value_ = Rounded(comm_.ReduceScatter(g, TakePartial(s.owed_before), spans));
        return;
      }
      case StepKind::kAllGather: {
        const RankGroup g = GroupFor(*s.group);
        std::vector<int> rows_of;
        for (const RowSpan& sp : MemberSpans(g, s.rows_in)) rows_of.push_back(sp.rows());
        Tensor mine = Take(s.operand);
        // An attention that gathers its own input gathers what it prepared
        // from its slice: the latents, for MLA with a query latent.
        if (s.operand == Operand::kInput && stage != nullptr && stage->decl.kind == StageKind::kAttention &&
            prepared_for_ != stage->index) {
          mine = Attention(*stage).Prepare(mine);
          prepared_for_ = stage->index;
        }
        Put(s.operand, comm_.AllGather(g, mine, rows_of));
        return;
      }
      case StepKind::kSlice: {
        const RowSpan in = Span(s.rows_in), out = Span(s.rows_out);
        Put(s.operand, Take(s.operand).RowRange(out.begin - in.begin, out.end - in.begin));
        return;
      }
      case StepKind::kStartResidual: {
        Tensor x = Take(Operand::kValue);
        const int streams = ctx_.model.residual_streams;
        residual_ = streams > 1 ? StreamKernel::Expand(x, streams, ctx_.numerics.dtype) : std::move(x);
        return;
      }
      case StepKind::kAdd:
        if (stage != nullptr && stage->decl.update == UpdateKind::kHyperConnection) {
          // The stage writes its streams with the coefficients it read them with.
          auto mix = mixes_.find(stage->index);
          SEAM_CHECK(mix != mixes_.end(), "a hyper-connection write without its read");
          residual_ = Streams(*stage).Write(Take(Operand::kResidual), Take(Operand::kValue), mix->second);
          mixes_.erase(mix);
          return;
        }
        residual_ = Add(Take(Operand::kResidual), Take(Operand::kValue), ctx_.numerics.dtype);
        return;
      case StepKind::kNorm: Norm(stage); return;
      case StepKind::kAllReduceAddNorm: {
        value_ = Rounded(comm_.AllReduce(GroupFor(*s.group), TakePartial(s.owed_before)));
        residual_ = Add(Take(Operand::kResidual), Take(Operand::kValue), ctx_.numerics.dtype);
        Norm(stage);
        return;
      }
      case StepKind::kCompute: Compute(s, *stage); return;
      case StepKind::kLeave:
        if (!value_ || !std::holds_alternative<OwedSum<Tensor>>(*value_)) {
          throw std::runtime_error("leaves a sum that is not owed");
        }
        return;
      case StepKind::kDispatch: Dispatch(*stage); return;
      case StepKind::kCombine: Combine(*stage); return;
      case StepKind::kSend: comm_.Send(Neighbour(+1), Take(s.operand)); return;
      case StepKind::kRecv: {
        const int width = s.operand == Operand::kResidual ? ctx_.model.hidden * ctx_.model.residual_streams
                                                          : ctx_.model.hidden;
        Put(s.operand, comm_.Recv(Neighbour(-1), Span(s.rows_out).rows(), width));
        return;
      }
    }
  }

  int Neighbour(int step) const {
    return GlobalRank(cfg_, {me_.pp_rank + step, me_.dp_rank, me_.attn_tp_rank});
  }

  // The read: the residual (or, with hyper-connections, the stage's mix of
  // its streams, keeping the coefficients its write will use), then the norm.
  void Norm(const StageRef* stage) {
    SEAM_CHECK(residual_.has_value(), "norm without a residual");
    const Tensor& w = ctx_.weights.at(stage != nullptr ? StageNormName(*stage) : kFinalNormName);
    const float eps = static_cast<float>(ctx_.model.dims->rms_eps);
    if (ctx_.model.residual_streams == 1) {
      input_ = RmsNorm(*residual_, w.span(), eps, ctx_.numerics.dtype);
      return;
    }
    Tensor read;
    if (stage == nullptr) {
      read = Head().Read(*residual_, nullptr);
    } else {
      read = Streams(*stage).Read(*residual_, &mixes_[stage->index]);
    }
    input_ = RmsNorm(read, w.span(), eps, ctx_.numerics.dtype);
  }

  const StreamKernel& Streams(const StageRef& s) {
    auto& k = streams_[s.index];
    if (!k) {
      k = std::make_unique<StreamKernel>(ctx_.weights, StagePrefix(s), false, ctx_.model.residual_streams,
                                         ctx_.model.hidden, *ctx_.model.dims, ctx_.numerics);
    }
    return *k;
  }

  const StreamKernel& Head() {
    if (!head_) {
      head_ = std::make_unique<StreamKernel>(ctx_.weights, kStreamHeadName, true, ctx_.model.residual_streams,
                                             ctx_.model.hidden, *ctx_.model.dims, ctx_.numerics);
    }
    return *head_;
  }

  // ---- compute ----

  Shard ShardOf(Group g) const {
    switch (g) {
      case Group::kAttnTp: return {me_.attn_tp_rank, cfg_.attn_tp()};
      case Group::kTp: return {TpRank(cfg_, me_), cfg_.tp};
      default: return {0, 1};
    }
  }

  Shard DenseShard() const {
    switch (DenseWidthOf(cfg_)) {
      case DenseWidth::kTp: return ShardOf(Group::kTp);
      case DenseWidth::kAttnTp: return ShardOf(Group::kAttnTp);
      case DenseWidth::kRank: break;
    }
    return {0, 1};
  }

  // Positions and request starts of rows on the attention rows, relative to them.
  void RowsMeta(Rows rows, std::vector<int>& positions, std::vector<int>& starts) const {
    const RowSpan sp = Span(rows);
    positions.assign(ctx_.layout.positions.begin() + sp.begin, ctx_.layout.positions.begin() + sp.end);
    starts.clear();
    for (int r = sp.begin; r < sp.end; ++r) starts.push_back(ctx_.layout.request_start[static_cast<size_t>(r)] - sp.begin);
  }

  template <class K, class... Args>
  const K& Kernel(const StageRef& s, Args&&... args) {
    auto& slot = kernels_[s.index];
    if (!slot) slot = std::make_shared<K>(std::forward<Args>(args)...);
    return *std::static_pointer_cast<K>(slot);
  }

  void Compute(const Step& step, const StageRef& s) {
    const Numerics& n = ctx_.numerics;
    Tensor partial;
    switch (s.decl.kind) {
      case StageKind::kAttention: {
        std::vector<int> pos, starts;
        RowsMeta(step.rows_in, pos, starts);
        const AttentionKernel& k = Attention(s);
        Tensor x = Take(Operand::kInput);
        const bool prepared = prepared_for_ == s.index;
        prepared_for_ = -1;
        partial = k.Run(prepared ? x : k.Prepare(x), pos, starts);
        break;
      }
      case StageKind::kLinear: {
        const auto& k = Kernel<LinearKernel>(s, s, ctx_.weights, n);
        value_ = k.Run(Take(Operand::kInput));
        return;
      }
      case StageKind::kMixer: {
        std::vector<int> pos, starts;
        RowsMeta(step.rows_in, pos, starts);
        const auto& k = Kernel<MixerKernel>(s, s, ctx_.model, ctx_.weights, ShardOf(Group::kAttnTp), n);
        partial = k.Run(Take(Operand::kInput), starts);
        break;
      }
      case StageKind::kDenseFfn: {
        const ModelDims& d = *ctx_.model.dims;
        const auto& k = Kernel<FfnKernel>(s, ctx_.weights, StagePrefix(s), DenseShape(s.decl, d), DenseShard(), n);
        partial = k.Partial(Take(Operand::kInput));
        break;
      }
      case StageKind::kSparseFfn:
        if (cfg_.moe == MoeMode::kA2a) {
          RunA2aExperts(s);
          return;
        }
        partial = Moe(s).TpPartial(Take(Operand::kInput));
        break;
      case StageKind::kNoOp: return;
    }
    if (step.owed_after != Owed::kNothing) {
      value_ = OwedSum<Tensor>(std::move(partial), step.owed_after);
    } else {
      value_ = Rounded(std::move(partial));
    }
  }

  const AttentionKernel& Attention(const StageRef& s) {
    return Kernel<AttentionKernel>(s, s, ctx_.model, ctx_.weights, ShardOf(Group::kAttnTp), ctx_.numerics);
  }

  const MoeKernel& Moe(const StageRef& s) {
    return Kernel<MoeKernel>(s, s, ctx_.model, ctx_.weights, ShardOf(Group::kTp), cfg_.moe, ctx_.numerics);
  }

  // ---- a2a MoE: dispatch, experts, combine ----

  // A TP group of one rank has no dispatch or combine step in the plan (the
  // binder emits none): its rows go to its own experts and come straight
  // back, in the same order as the exchange would give them.
  void RunA2aExperts(const StageRef& s) {
    const bool alone = !a2a_.dispatched;
    if (alone) {
      SEAM_CHECK(cfg_.tp == 1, "the a2a experts ran without their dispatch");
      a2a_.received = PackForExperts(s);
    }
    RunExperts(s);
    if (alone) {
      Fold(s, std::move(a2a_.outputs));
      return;
    }
    value_ = Tensor(0, 0);  // combined at the next step
  }

  void Dispatch(const StageRef& s) {
    std::vector<Tensor> to_each = PackForExperts(s);
    a2a_.received = comm_.AllToAll(GroupFor(Group::kTp), std::move(to_each));
    a2a_.dispatched = true;
  }

  // Routes the input's rows and packs, per TP member, the rows its experts take.
  std::vector<Tensor> PackForExperts(const StageRef& s) {
    const MoeKernel& moe = Moe(s);
    const RankGroup g = GroupFor(Group::kTp);
    a2a_ = A2aScratch{};
    a2a_.input = *input_;
    a2a_.routes = moe.Route(a2a_.input);
    a2a_.sent.assign(static_cast<size_t>(g.size()), {});
    for (int r = 0; r < a2a_.input.rows(); ++r) {
      const Routing& route = a2a_.routes[static_cast<size_t>(r)];
      for (size_t slot = 0; slot < route.experts.size(); ++slot) {
        if (moe.IsSkip(route.experts[slot])) continue;  // passes the input through, here
        a2a_.sent[static_cast<size_t>(moe.OwnerOf(route.experts[slot]))].push_back({r, static_cast<int>(slot)});
      }
    }
    std::vector<Tensor> to_each;
    const int h = moe.hidden();
    for (const auto& rows : a2a_.sent) {
      Tensor t(static_cast<int>(rows.size()), h + 1);  // the row, then its expert's id
      for (size_t i = 0; i < rows.size(); ++i) {
        const auto [r, slot] = rows[i];
        std::copy(a2a_.input.row(r), a2a_.input.row(r) + h, t.row(static_cast<int>(i)));
        t.at(static_cast<int>(i), h) = static_cast<float>(a2a_.routes[static_cast<size_t>(r)].experts[static_cast<size_t>(slot)]);
      }
      to_each.push_back(std::move(t));
    }
    return to_each;
  }

  void RunExperts(const StageRef& s) {
    const MoeKernel& moe = Moe(s);
    const int h = moe.hidden();
    input_.reset();
    a2a_.outputs.clear();
    for (const Tensor& got : a2a_.received) {
      Tensor out(got.rows(), h);
      std::map<int, std::vector<int>> rows_of;  // expert -> received rows, in order
      for (int r = 0; r < got.rows(); ++r) rows_of[static_cast<int>(got.at(r, h))].push_back(r);
      for (const auto& [expert, rows] : rows_of) {
        Tensor x(static_cast<int>(rows.size()), h);
        for (size_t i = 0; i < rows.size(); ++i) std::copy(got.row(rows[i]), got.row(rows[i]) + h, x.row(static_cast<int>(i)));
        const Tensor y = moe.Expert(expert, x);
        for (size_t i = 0; i < rows.size(); ++i) std::copy(y.row(static_cast<int>(i)), y.row(static_cast<int>(i)) + h, out.row(rows[i]));
      }
      a2a_.outputs.push_back(std::move(out));
    }
  }

  void Combine(const StageRef& s) { Fold(s, comm_.AllToAll(GroupFor(Group::kTp), std::move(a2a_.outputs))); }

  // Weighs the experts' outputs that came `back` (per member, in sent order)
  // into each row's output.
  void Fold(const StageRef& s, const std::vector<Tensor>& back) {
    const MoeKernel& moe = Moe(s);
    const int h = moe.hidden();
    const bool recording = !comm_.moves_data();  // no data comes back: use zeros
    const Tensor zeros(1, h);
    std::vector<std::vector<const float*>> outputs(static_cast<size_t>(a2a_.input.rows()));
    for (auto& o : outputs) o.assign(static_cast<size_t>(ctx_.model.dims->experts), nullptr);
    for (size_t j = 0; j < a2a_.sent.size(); ++j) {
      const auto& rows = a2a_.sent[j];
      if (!recording && back[j].rows() != static_cast<int>(rows.size())) {
        throw std::runtime_error(fmt::format("the a2a combine returned {} rows for {} sent", back[j].rows(), rows.size()));
      }
      for (size_t i = 0; i < rows.size(); ++i) {
        const float* p = static_cast<int>(i) < back[j].rows() ? back[j].row(static_cast<int>(i)) : zeros.row(0);
        outputs[static_cast<size_t>(rows[i].first)][static_cast<size_t>(rows[i].second)] = p;
      }
    }
    const Tensor shared = moe.Shared(a2a_.input);
    Tensor out(a2a_.input.rows(), h);
    for (int r = 0; r < out.rows(); ++r) {
      const Routing& route = a2a_.routes[static_cast<size_t>(r)];
      std::vector<const float*> slots(outputs[static_cast<size_t>(r)].begin(),
                                      outputs[static_cast<size_t>(r)].begin() + static_cast<long>(route.experts.size()));
      for (size_t slot = 0; slot < route.experts.size(); ++slot) {
        if (moe.IsSkip(route.experts[slot])) slots[slot] = a2a_.input.row(r);
      }
      moe.Fold(route, slots, shared.empty() ? nullptr : shared.row(r), out.row(r));
    }
    value_ = std::move(out);
    a2a_ = A2aScratch{};
  }

  const RunContext& ctx_;
  const Plan& plan_;
  const ParallelConfig& cfg_;
  Comm& comm_;
  RankCoord me_;
  std::optional<Value> value_;
  std::optional<Tensor> residual_;
  std::optional<Tensor> input_;
  A2aScratch a2a_;
  int prepared_for_ = -1;  // the attention whose input was prepared before its gather
  std::map<int, StreamMix> mixes_;                         // hyper-connections: per stage, between read and write
  std::map<int, std::unique_ptr<StreamKernel>> streams_;  // per stage
  std::unique_ptr<StreamKernel> head_;
  std::map<int, std::shared_ptr<void>> kernels_;  // per stage index, built on first use
};

}  // namespace

std::optional<Tensor> RunRank(const RunContext& ctx, const Plan& plan, Comm& comm) {
  return RankRunner(ctx, plan, comm).Run();
}

}  // namespace seam::exec
