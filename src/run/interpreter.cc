// The plan interpreter. Values that still owe a sum are OwedSum handles: the
// only way to their numbers is the collective that completes them, so a plan
// that reads, adds, sends or gathers a partial sum fails here instead of
// computing with it.
#include "run/interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <variant>

#include "numerics/streams.h"
#include "run/a2a.h"
#include "run/rank_kernels.h"
#include "run/rank_place.h"
#include "seam/owed_sum.h"
#include "seam/plan_walk.h"
#include "seam/runtime/gemm.h"
#include "seam/stage_shape.h"
#include "seam/step_rules.h"
#include "seam/weight_specs.h"

namespace seam::exec {
namespace {

using Value = std::variant<Tensor, OwedSum<Tensor>>;

// What an a2a MoE keeps between its dispatch, its experts and its combine.
struct A2aState {
  A2aExchange exchange;
  std::vector<Tensor> received;  // per member: rows + expert id column
  std::vector<Tensor> outputs;   // per member: expert outputs, in received order
  bool dispatched = false;       // whether the rows went through an all-to-all
};

class RankRunner {
 public:
  // Builds every kernel the rank's line needs, then runs it.
  RankRunner(const RunContext& ctx, const Plan& plan, const LinePlan& line, Comm& comm)
      : ctx_(ctx),
        plan_(plan),
        cfg_(plan.config()),
        comm_(comm),
        place_(ctx.layout, cfg_, comm.rank()),
        me_(place_.me()),
        line_(line),
        kernels_(ctx, line, cfg_, me_) {}

  std::optional<FinalRows> Run() {
    // Attention-TP rank 0 of each shard on the last pipeline rank returns the
    // final norm's output, kept before the head gathers its input further.
    const bool returns = line_.end.kind == EndKind::kFinalNorm && me_.attn_tp_rank == 0;
    std::optional<Tensor> hidden;
    WalkLine(line_, [&](const LinePlace& at, const std::vector<Step>& steps) {
      const StageRef* ref = at.in_stage() ? &ctx_.stages[static_cast<size_t>(at.stage->index)] : nullptr;
      if (at.part == LinePart::kHead && returns) hidden = *input_;
      if (at.part == LinePart::kCompute) return RunCompute(steps, *ref);
      RunSteps(steps, ref);
    });
    if (!hidden) return std::nullopt;
    FinalRows out{.hidden = *std::move(hidden), .logits = std::nullopt};
    if (!line_.end.head.empty()) out.logits = std::move(logits_);
    return out;
  }

 private:
  // ---- the rank's rows ----

  RowSpan Span(Rows r) const { return place_.Span(r); }
  RankGroup GroupFor(Group g) const { return place_.GroupFor(g); }
  int Neighbour(int step) const { return place_.Neighbour(step); }

  // ---- values ----

  Tensor Complete(Value v, std::string_view what) const {
    if (auto* t = std::get_if<Tensor>(&v)) return std::move(*t);
    throw Failure(FailedCheck(
        fmt::format("{} a value that still owes a sum over {}", what, Name(std::get<OwedSum<Tensor>>(v).group()))));
  }

  Tensor TakePartial(Owed expected) {
    SEAM_CHECK(value_.has_value(), "no value to sum");
    auto* owed = std::get_if<OwedSum<Tensor>>(&*value_);
    if (owed == nullptr) throw Failure(FailedCheck("sums a value that owes nothing: the sum would be taken twice"));
    if (owed->group() != expected) {
      throw Failure(
          FailedCheck(fmt::format("completes a sum owed over {} over {}", Name(owed->group()), Name(expected))));
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
      std::optional<Tensor>& slot = op == Operand::kResidual ? residual_ : op == Operand::kLogits ? logits_ : input_;
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
    if (op == Operand::kLogits) logits_ = std::move(t);
  }

  Tensor Rounded(Tensor t) const {
    RoundToStorage(t, ctx_.numerics.dtype);
    return t;
  }

  // ---- the embedding ----

  // The tokens of the step's rows, looked up in this rank's vocabulary rows
  // of the table: an even share of them where the step leaves a TP sum (the
  // other ranks' rows add zeros), all of them where it is complete.
  void Embed(const Step& s) {
    const MatrixView table = ctx_.weights.at(kEmbeddingName);
    const bool partial = s.owed_after != Owed::kNothing;
    const RowSpan rows = Span(s.rows_out);
    Tensor x(rows.rows(), table.cols());
    const RowSpan vocab =
        partial ? EvenSpans(table.rows(), cfg_.tp)[static_cast<size_t>(TpRank(cfg_, me_))] : RowSpan{0, table.rows()};
    for (int r = 0; r < rows.rows(); ++r) {
      const int id = ctx_.layout.token_ids[static_cast<size_t>(rows.begin + r)];
      if (id >= vocab.begin && id < vocab.end) table.CopyRow(id, x.row(r));
    }
    if (partial) {
      value_ = OwedSum<Tensor>(std::move(x), s.owed_after);
    } else {
      value_ = std::move(x);
    }
  }

  // ---- the LM head ----

  // This rank's columns of the vocabulary split over the head's group.
  RowSpan VocabColumns(const RankGroup& g) const {
    return exec::VocabColumns(ctx_.weights.at(kLmHeadName).rows(), g.size(), g.IndexOf(comm_.rank()));
  }

  void LmHead(const Step& s) {
    SEAM_CHECK(input_.has_value(), "the LM head has no input");
    const RankGroup g = GroupFor(*LmHeadShape(cfg_).shard);
    const RowSpan cols = VocabColumns(g);
    const MatrixView w = ctx_.weights.at(kLmHeadName);
    const int chunk = (w.rows() + g.size() - 1) / g.size();
    const Tensor mine = Rounded(Gemm(*input_, w.Rows(cols.begin, cols.end)));
    Tensor padded(mine.rows(), chunk);
    for (int r = 0; r < mine.rows(); ++r) std::copy(mine.row(r), mine.row(r) + mine.cols(), padded.row(r));
    SEAM_CHECK(s.width == w.rows(), "the LM head's width is not the vocabulary");
    logits_ = std::move(padded);
  }

  // Each member's columns arrive as a block of rows; they are laid side by
  // side and the padding dropped.
  void GatherVocab(const Step& s) {
    const RankGroup g = GroupFor(*s.group);
    Tensor mine = Take(Operand::kLogits);
    const int rows = mine.rows(), chunk = mine.cols(), vocab = s.width;
    const std::vector<int> rows_of(static_cast<size_t>(g.size()), rows);
    const Tensor all = comm_.AllGather(g, mine, rows_of);
    Tensor out(rows, vocab);
    for (int j = 0; j < g.size(); ++j) {
      const int first = j * chunk, width = std::max(0, std::min(vocab, first + chunk) - first);
      for (int r = 0; r < rows; ++r)
        std::copy(all.row(j * rows + r), all.row(j * rows + r) + width, out.row(r) + first);
    }
    logits_ = std::move(out);
  }

  // ---- steps ----

  void RunSteps(const std::vector<Step>& steps, const StageRef* stage) {
    for (const Step& s : steps) RunStep(s, stage);
  }

  // A step runs only as its kind's rule allows (the plan was verified, so
  // one that does not is a bug).
  void CheckRule(const Step& s) const { SEAM_CHECK(StepRuleError(s, cfg_).empty(), StepRuleError(s, cfg_)); }

  // One handler per step kind.
  void RunStep(const Step& s, const StageRef* stage) {
    CheckRule(s);
    switch (s.kind) {
      case StepKind::kAllReduce: return AllReduce(s);
      case StepKind::kReduceScatter:
      case StepKind::kReduceScatterV: return ReduceScatter(s);
      case StepKind::kAllGather: return AllGather(s);
      case StepKind::kSlice: return Slice(s);
      case StepKind::kStartResidual: return StartResidual();
      case StepKind::kAdd: return AddStep(stage);
      case StepKind::kNorm: return Norm(stage);
      case StepKind::kAllReduceAddNorm: return AllReduceAddNorm(s, stage);
      case StepKind::kCompute: SEAM_CHECK(false, "a compute outside its stage's compute section"); return;
      case StepKind::kLeave: return Leave();
      case StepKind::kEmbed: return Embed(s);
      case StepKind::kLmHead: return LmHead(s);
      case StepKind::kGatherVocab: return GatherVocab(s);
      case StepKind::kDispatch: return Dispatch(s, *stage);
      case StepKind::kCombine: return Combine(s, *stage);
      case StepKind::kSend: return comm_.Send(Neighbour(+1), Take(s.operand));
      case StepKind::kRecv: return Recv(s);
      case StepKind::kGatherKeys:
      case StepKind::kGatherQueries:
      case StepKind::kExchangePartials:
        SEAM_CHECK(false, fmt::format("{} outside an attention's compute", Name(s.kind)));
        return;
    }
  }

  void AllReduce(const Step& s) { value_ = Rounded(comm_.AllReduce(GroupFor(*s.group), TakePartial(s.owed_before))); }

  void ReduceScatter(const Step& s) {
    const RankGroup g = GroupFor(*s.group);
    value_ = Rounded(comm_.ReduceScatter(g, TakePartial(s.owed_before), place_.ScatterSpans(g, s.rows_in, s.rows_out)));
  }

  void AllGather(const Step& s) { Put(s.operand, Gather(s, Take(s.operand))); }

  Tensor Gather(const Step& s, const Tensor& mine) {
    const RankGroup g = GroupFor(*s.group);
    return comm_.AllGather(g, mine, place_.MemberRows(g, s.rows_in));
  }

  void Slice(const Step& s) {
    const RowSpan in = Span(s.rows_in), out = Span(s.rows_out);
    Put(s.operand, Take(s.operand).RowRange(out.begin - in.begin, out.end - in.begin));
  }

  void StartResidual() {
    Tensor x = Take(Operand::kValue);
    const int streams = ctx_.model.residual_streams;
    residual_ = streams > 1 ? StreamKernel::Expand(x, streams, ctx_.numerics.dtype) : std::move(x);
  }

  void AddStep(const StageRef* stage) {
    if (stage != nullptr && stage->decl.update == UpdateKind::kHyperConnection) {
      // The stage writes its streams with the coefficients it read them with.
      auto mix = mixes_.find(stage->index);
      SEAM_CHECK(mix != mixes_.end(), "a hyper-connection write without its read");
      residual_ = kernels_.Streams(stage->index).Write(Take(Operand::kResidual), Take(Operand::kValue), mix->second);
      mixes_.erase(mix);
      return;
    }
    residual_ = Add(Take(Operand::kResidual), Take(Operand::kValue), ctx_.numerics.dtype);
  }

  void AllReduceAddNorm(const Step& s, const StageRef* stage) {
    value_ = Rounded(comm_.AllReduce(GroupFor(*s.group), TakePartial(s.owed_before)));
    residual_ = Add(Take(Operand::kResidual), Take(Operand::kValue), ctx_.numerics.dtype);
    Norm(stage);
  }

  void Leave() const {
    if (!value_ || !std::holds_alternative<OwedSum<Tensor>>(*value_)) {
      throw Failure(FailedCheck("leaves a sum that is not owed"));
    }
  }

  void Recv(const Step& s) {
    const int width =
        s.operand == Operand::kResidual ? ctx_.model.hidden * ctx_.model.residual_streams : ctx_.model.hidden;
    Put(s.operand, comm_.Recv(Neighbour(-1), Span(s.rows_out).rows(), width));
  }

  // The read: the residual (or, with hyper-connections, the stage's mix of
  // its streams, keeping the coefficients its write will use), then the norm.
  void Norm(const StageRef* stage) {
    SEAM_CHECK(residual_.has_value(), "norm without a residual");
    const MatrixView w = ctx_.weights.at(stage != nullptr ? StageNormName(*stage) : kFinalNormName);
    const float eps = static_cast<float>(ctx_.model.dims->rms_eps);
    if (ctx_.model.residual_streams == 1) {
      input_ = RmsNorm(*residual_, w.span(), eps, ctx_.numerics.dtype);
      return;
    }
    Tensor read;
    if (stage == nullptr) {
      read = kernels_.Head().Read(*residual_, nullptr);
    } else {
      read = kernels_.Streams(stage->index).Read(*residual_, &mixes_[stage->index]);
    }
    input_ = RmsNorm(read, w.span(), eps, ctx_.numerics.dtype);
  }

  // ---- compute ----

  // The requests among rows `rows`, each a run of consecutive rows
  // [first, last) relative to them, and every row's position.
  struct RequestRows {
    int first = 0, last = 0, id = 0;
  };
  std::vector<RequestRows> RequestsIn(Rows rows, std::vector<int>& positions) const {
    const RowSpan sp = Span(rows);
    positions.assign(ctx_.layout.positions.begin() + sp.begin, ctx_.layout.positions.begin() + sp.end);
    std::vector<RequestRows> out;
    for (int r = sp.begin; r < sp.end; ++r) {
      const int id = ctx_.layout.request_id[static_cast<size_t>(r)];
      if (out.empty() || out.back().id != id || ctx_.layout.request_start[static_cast<size_t>(r)] == r) {
        out.push_back({r - sp.begin, r - sp.begin, id});
      }
      out.back().last = r - sp.begin + 1;
    }
    return out;
  }

  // An attention's exchanges inside its compute, as the plan lists them
  // before the compute step: they run once its rows are projected.
  struct Exchanges {
    const Step* keys = nullptr;      // ag-kv: the CP peers' cache entries
    const Step* queries = nullptr;   // ag-q: the DCP group's query heads
    const Step* partials = nullptr;  // a2a-lse: the partial outputs to their heads' ranks
    const Step** Slot(StepKind kind) {
      switch (kind) {
        case StepKind::kGatherKeys: return &keys;
        case StepKind::kGatherQueries: return &queries;
        case StepKind::kExchangePartials: return &partials;
        default: return nullptr;
      }
    }
  };

  // A stage's compute section. A gather there is the stage gathering its own
  // prepared input (the latents, for MLA with a query latent; the plan states
  // its width): the attention prepares before it and not again after. A
  // key/value gather is the attention's, once it has projected its rows.
  void RunCompute(const std::vector<Step>& steps, const StageRef& s) {
    bool prepared = false;
    Exchanges ex;
    for (const Step& step : steps) {
      if (step.kind == StepKind::kAllGather) {
        CheckRule(step);
        GatherPrepared(step, s);
        prepared = true;
      } else if (const Step** slot = ex.Slot(step.kind)) {
        CheckRule(step);
        SEAM_CHECK(s.decl.kind == StageKind::kAttention, fmt::format("only an attention runs {}", Name(step.kind)));
        *slot = &step;
      } else if (step.kind == StepKind::kCompute) {
        CheckRule(step);
        Compute(step, s, prepared, ex);
      } else {
        RunStep(step, &s);  // checks its rule itself
      }
    }
  }

  void GatherPrepared(const Step& step, const StageRef& s) {
    SEAM_CHECK(step.operand == Operand::kInput && s.decl.kind == StageKind::kAttention,
               "only an attention gathers its own input");
    Tensor mine = kernels_.Attention(s.index).Prepare(Take(Operand::kInput));
    SEAM_CHECK(mine.cols() == step.width, "the prepared input is not as wide as the plan gathers");
    input_ = Gather(step, mine);
  }

  void Compute(const Step& step, const StageRef& s, bool prepared, const Exchanges& ex) {
    if (s.decl.kind == StageKind::kNoOp) return;
    if (s.decl.kind == StageKind::kLinear) {
      value_ = kernels_.Linear(s.index).Run(Take(Operand::kInput));
      return;
    }
    if (s.decl.kind == StageKind::kSparseFfn && cfg_.moe == MoeMode::kA2a) return RunA2aExperts(s);
    Tensor partial = Partial(step, s, prepared, ex);
    if (step.owed_after != Owed::kNothing) {
      value_ = OwedSum<Tensor>(std::move(partial), step.owed_after);
    } else {
      value_ = Rounded(std::move(partial));
    }
  }

  // The stage's output on this rank: a partial sum where its weights are sharded.
  Tensor Partial(const Step& step, const StageRef& s, bool prepared, const Exchanges& ex) {
    switch (s.decl.kind) {
      case StageKind::kAttention: return Attention(step, s, prepared, ex);
      case StageKind::kMixer: return Mixer(step, s);
      case StageKind::kDenseFfn: return kernels_.Ffn(s.index).Partial(Take(Operand::kInput));
      case StageKind::kSparseFfn: return kernels_.Moe(s.index).TpPartial(Take(Operand::kInput));
      case StageKind::kLinear:
      case StageKind::kNoOp: break;
    }
    SEAM_CHECK(false, "a stage without a partial output");
    return Tensor();
  }

  // Each request's rows extend its cache on this rank (with its CP peers'
  // rows of the same requests, where `ex.keys` gathers them), then attend
  // over it: whole, or under decode context parallelism over the positions
  // this rank holds, its DCP group's heads.
  Tensor Attention(const Step& step, const StageRef& s, bool prepared, const Exchanges& ex) {
    std::vector<int> pos;
    const std::vector<RequestRows> requests = RequestsIn(step.rows_in, pos);
    const AttentionKernel& k = kernels_.Attention(s.index);
    Tensor x = Take(Operand::kInput);
    const AttentionKernel::Projected p = k.Project(prepared ? x : k.Prepare(x), pos);
    if (ex.keys != nullptr) {
      CacheGathered(*ex.keys, s, k, p.entries);
    } else {
      for (const RequestRows& r : requests) {
        CacheOf(s, r.id, k).Append(p.entries, r.first, r.last, pos[r.first]);
      }
    }
    Tensor o(x.rows(), k.out_width());
    SEAM_CHECK((ex.queries == nullptr) == (cfg_.dcp == 1) && (ex.queries == nullptr) == (ex.partials == nullptr),
               "an attention's DCP exchanges do not match the configuration");
    if (ex.queries != nullptr) {
      AttendSplit(ex, s, k, p, requests, pos, o);
    } else {
      for (const RequestRows& r : requests) {
        const CacheRows& cache = CacheOf(s, r.id, k);
        k.AttendCached(p, r.first, r.last, pos, cache.data(), cache.count(), o);
      }
    }
    return k.Output(o, p.gate);
  }

  // The request's cache at the attention: under decode context parallelism
  // the positions p with p mod dcp = this rank's place in its DCP group.
  CacheRows& CacheOf(const StageRef& s, int request, const AttentionKernel& k) {
    return ctx_.cache.Attention(s.index, request, k.cache_width(), cfg_.dcp, me_.attn_tp_rank % cfg_.dcp);
  }

  // Decode context parallelism: the DCP group's queries gathered, each
  // head's partial over this rank's positions, the partials sent to their
  // heads' ranks, and each of this rank's heads merged from its peers'.
  void AttendSplit(const Exchanges& ex, const StageRef& s, const AttentionKernel& k,
                   const AttentionKernel::Projected& p, const std::vector<RequestRows>& requests,
                   std::span<const int> pos, Tensor& o) {
    SEAM_CHECK(ex.queries->width == k.query_width() && ex.partials->width == k.partial_width(),
               "the plan exchanges queries or partials of other widths than the attention makes");
    const RankGroup g = GroupFor(*ex.queries->group);
    const int rows = p.q.rows(), n = g.size();
    const Tensor gathered = comm_.AllGather(g, p.q, std::vector<int>(static_cast<size_t>(n), rows));
    Tensor q_group(rows, n * k.query_width());  // member j's heads after member j-1's
    for (int j = 0; j < n; ++j) {
      for (int r = 0; r < rows; ++r) {
        std::copy(gathered.row(j * rows + r), gathered.row(j * rows + r) + k.query_width(),
                  q_group.row(r) + j * k.query_width());
      }
    }
    Tensor partials(rows, n * k.partial_width());
    for (const RequestRows& r : requests) {
      const CacheRows& cache = CacheOf(s, r.id, k);
      k.AttendPartials(q_group, r.first, r.last, pos, cache.data(), cache.count(), cache.stride(), cache.residue(),
                       partials);
    }
    std::vector<Tensor> to_each;
    for (int j = 0; j < n; ++j)
      to_each.push_back(partials.ColRange(j * k.partial_width(), (j + 1) * k.partial_width()));
    const std::vector<Tensor> from_each = comm_.AllToAll(GroupFor(*ex.partials->group), std::move(to_each));
    k.MergePeers(from_each, o);
  }

  // Context parallelism: the cache entries of every CP peer's rows (the
  // other shards of the same requests), gathered, then written into each
  // request's cache in position order, so the cache a query reads is the
  // one a rank holding the whole request writes.
  void CacheGathered(const Step& step, const StageRef& s, const AttentionKernel& k, const Tensor& entries) {
    SEAM_CHECK(step.width == k.cache_width(), "the plan gathers keys of another width than the attention caches");
    const RankGroup g = GroupFor(*step.group);
    const std::vector<RowSpan> spans = place_.MemberSpans(g, step.rows_in);
    std::vector<int> rows_of;
    for (const RowSpan& sp : spans) rows_of.push_back(sp.rows());
    const Tensor all = comm_.AllGather(g, entries, rows_of);
    std::map<int, std::vector<std::pair<int, int>>> by_request;  // id -> (position, row of `all`)
    int at = 0;
    for (const RowSpan& sp : spans) {
      for (int r = sp.begin; r < sp.end; ++r, ++at) {
        by_request[ctx_.layout.request_id[static_cast<size_t>(r)]].push_back(
            {ctx_.layout.positions[static_cast<size_t>(r)], at});
      }
    }
    for (auto& [id, rows] : by_request) {
      std::sort(rows.begin(), rows.end());
      CacheRows& cache = CacheOf(s, id, k);
      for (const auto& [position, row] : rows) cache.Append(all, row, row + 1, position);
    }
  }

  // Each request's rows continue its state on this rank.
  Tensor Mixer(const Step& step, const StageRef& s) {
    std::vector<int> pos;
    const MixerKernel& k = kernels_.Mixer(s.index);
    std::vector<MixerKernel::Part> parts;
    for (const RequestRows& r : RequestsIn(step.rows_in, pos)) {
      MixerKernel::State& state =
          ctx_.cache.Mixer(s.index, r.id, k, pos[static_cast<size_t>(r.first)], r.last - r.first);
      parts.push_back({r.first, r.last, &state});
    }
    return k.Run(Take(Operand::kInput), parts);
  }

  // ---- a2a MoE: dispatch, experts, combine ----

  // An expert group of one rank has no dispatch or combine step in the plan
  // (the binder emits none): its rows go to its own experts and come
  // straight back, in the same order as the exchange would give them.
  void RunA2aExperts(const StageRef& s) {
    const MoeKernel& moe = kernels_.Moe(s.index);
    const bool alone = !a2a_.dispatched;
    if (alone) {
      SEAM_CHECK(cfg_.ep_size() == 1, "the a2a experts ran without their dispatch");
      a2a_.received = a2a_.exchange.Pack(moe, *input_, 1);
    }
    input_.reset();
    a2a_.outputs = a2a_.exchange.RunExperts(moe, a2a_.received);
    if (alone) return Fold(s, a2a_.outputs);
    value_ = Tensor(0, 0);  // combined at the next step
  }

  void Dispatch(const Step& step, const StageRef& s) {
    a2a_ = A2aState{};
    const RankGroup g = GroupFor(*step.group);
    a2a_.received = comm_.AllToAll(g, a2a_.exchange.Pack(kernels_.Moe(s.index), *input_, g.size()));
    a2a_.dispatched = true;
  }

  void Combine(const Step& step, const StageRef& s) {
    Fold(s, comm_.AllToAll(GroupFor(*step.group), std::move(a2a_.outputs)));
  }

  void Fold(const StageRef& s, const std::vector<Tensor>& back) {
    value_ = a2a_.exchange.Fold(kernels_.Moe(s.index), back, comm_.moves_data(), ctx_.model.dims->experts);
    a2a_ = A2aState{};
  }

  const RunContext& ctx_;
  const Plan& plan_;
  const ParallelConfig& cfg_;
  Comm& comm_;
  RankPlace place_;
  RankCoord me_;
  std::optional<Value> value_;
  std::optional<Tensor> residual_;
  std::optional<Tensor> input_;
  std::optional<Tensor> logits_;
  const LinePlan& line_;
  RankKernels kernels_;
  A2aState a2a_;
  std::map<int, StreamMix> mixes_;  // hyper-connections: per stage, between read and write
};

}  // namespace

RowSpan VocabColumns(int vocab, int members, int member) {
  const int chunk = (vocab + members - 1) / members;
  const int first = std::min(vocab, member * chunk);
  return {first, std::min(vocab, first + chunk)};
}

std::optional<FinalRows> RunRank(const RunContext& ctx, const Plan& plan, Comm& comm) {
  const LinePlan* line = plan.line(ctx.variant);
  SEAM_CHECK(line != nullptr, "the plan has no line for this batch variant");
  return RankRunner(ctx, plan, *line, comm).Run();
}

}  // namespace seam::exec
