// Each rank's trace aligned with its plan's collectives, step by step: a
// call matches the plan's, or an engine's stated way of doing the same
// thing, or is the engine's own bookkeeping; the first that is none of
// these is the divergence, named as the defect it looks like.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

#include "run/trace_align.h"

namespace seam {
namespace {

constexpr std::string_view kFusedNorm = "fused add and norm";
constexpr std::string_view kGatherAsBroadcasts = "all-gather as broadcasts";
constexpr std::string_view kScatterAsReduces = "reduce-scatter as reduces";
constexpr std::string_view kScatterAsAllReduce = "reduce-scatter as all-reduce and slice";
constexpr std::string_view kRoutedRows = "routed rows";
constexpr std::string_view kUnseenAllToAll = "all-to-all outside NCCL";
constexpr std::string_view kBookkeeping = "engine bookkeeping";
constexpr std::string_view kPadding = "padded batch";
constexpr std::string_view kPointToPoint = "point-to-point group";

constexpr std::array kAllowances = {
    Allowance{kFusedNorm,
              "the plan's ar+add+norm is one all-reduce in a trace: the add and the norm run in the kernel after it "
              "(or fused into it), moving nothing more",
              "SGLang --enable-flashinfer-allreduce-fusion (python/sglang/srt/layers/communicator.py); vLLM's "
              "AllReduceFusionPass (vllm/compilation/collective_fusion.py)"},
    Allowance{kGatherAsBroadcasts,
              "an all-gather of uneven rows is a broadcast from each member in group order, each of that member's rows",
              "vLLM vllm/distributed/device_communicators/pynccl.py all_gatherv (one ncclBroadcast per member inside "
              "ncclGroupStart/End); SGLang's pynccl all_gatherv, the same"},
    Allowance{kScatterAsReduces,
              "a reduce-scatter of uneven rows is a reduce to each member in group order, each of that member's rows",
              "vLLM vllm/distributed/device_communicators/pynccl.py reduce_scatterv (one ncclReduce per member inside "
              "ncclGroupStart/End)"},
    Allowance{kScatterAsAllReduce,
              "a reduce-scatter may be an all-reduce of the whole input over the same group, each member then "
              "keeping its rows: the same sum on the same rows, twice the bytes",
              "SGLang python/sglang/srt/layers/communicator.py (an all-reduce then dp_scatter where the rows do not "
              "divide)"},
    Allowance{
        kRoutedRows,
        "an all-to-all's rows follow the router, so only its group, dtype and row width (the hidden size, with or "
        "without an expert id beside it) are checked",
        "every MoE dispatch: the rows each expert takes depend on the tokens"},
    Allowance{kUnseenAllToAll,
              "where a rank's trace holds no all-to-all at all, the plan's dispatches and combines are not checked: "
              "DeepEP, pplx and Mooncake move them with NVSHMEM or their own kernels, outside NCCL and "
              "torch.distributed",
              "SGLang --moe-a2a-backend deepep|mooncake; vLLM --all2all-backend deepep_low_latency|pplx"},
    Allowance{kBookkeeping,
              "calls in integer dtypes (token counts, expert ids, DP groups' sizes) and float calls smaller than one "
              "activation row (warm-up, barriers) are passed over",
              "vLLM PyNcclCommunicator's warm-up all_reduce of one element (pynccl.py); SGLang's DP-attention gather "
              "of each group's token count (python/sglang/srt/layers/dp_attention.py); c10d barrier, a one-element "
              "all-reduce"},
    Allowance{kPadding,
              "the batch is read from the trace's own sizes, so a batch padded to a CUDA-graph size, or every DP "
              "group padded to the largest, is checked at the padded rows",
              "SGLang cuda_graph_bs and DP-attention padding (python/sglang/srt/model_executor/cuda_graph_runner.py); "
              "vLLM cudagraph_capture_sizes"},
    Allowance{kPointToPoint,
              "a send or receive is matched by its peer, not its group: PyTorch runs point-to-point on a two-rank "
              "communicator of its own",
              "PyTorch ProcessGroupNCCL (getKeySendRecv: one communicator per pair of ranks)"},
};

bool IsFloat(const std::string& dtype) { return dtype.starts_with("float") || dtype.starts_with("bfloat"); }
bool Reduces(TraceOp op) {
  return op == TraceOp::kAllReduce || op == TraceOp::kReduceScatter || op == TraceOp::kReduce;
}
bool IsPointToPoint(TraceOp op) { return op == TraceOp::kSend || op == TraceOp::kRecv; }
int64_t Cols(const PlannedCollective& p) { return p.event.shape.back(); }
int64_t RowsOf(const PlannedCollective& p) { return p.event.shape.front(); }

bool SameMembers(const std::vector<int>& a, const std::vector<int>& b) {
  return std::set<int>(a.begin(), a.end()) == std::set<int>(b.begin(), b.end());
}

// The group matches: a sum's members in any order; a gather's, scatter's or
// exchange's in the plan's (it says which rows are whose).
bool SameGroup(const PlannedCollective& p, const TraceEvent& o) {
  return p.event.op == TraceOp::kAllReduce ? SameMembers(p.event.group, o.group) : p.event.group == o.group;
}

bool RowWidthFits(const PlannedCollective& p, const TraceEvent& o) {
  const int64_t cols = Cols(p);
  if (cols > 0 && o.elements % cols == 0) return true;
  return p.kind == StepKind::kDispatch && cols > 1 && o.elements % (cols - 1) == 0;
}

// The call is the plan's, as it is or with its rows routed.
bool Matches(const PlannedCollective& p, const TraceEvent& o) {
  if (p.event.op != o.op || p.event.dtype != o.dtype) return false;
  if (IsPointToPoint(o.op)) return o.peer == p.event.peer && o.elements == p.event.elements;
  if (!SameGroup(p, o)) return false;
  return p.routed ? RowWidthFits(p, o) : o.elements == p.event.elements;
}

struct Aligner {
  const ParallelConfig& cfg;
  const std::vector<PlannedCollective>& plan;
  const std::vector<TraceEvent>& seen;
  int64_t smallest_row = 1;
  bool saw_all_to_all = false;
  RankCheck out;
  size_t consumed = 0;

  void Use(std::string_view name) {
    if (std::find(out.allowances.begin(), out.allowances.end(), name) == out.allowances.end()) {
      out.allowances.emplace_back(name);
    }
  }

  // A run of `n` calls of `op` from (or to) each member in turn, each of its part.
  size_t PerMember(const PlannedCollective& p, size_t j, TraceOp op) const {
    const size_t n = p.event.group.size();
    if (p.member_elements.size() != n || j + n > seen.size()) return 0;
    for (size_t k = 0; k < n; ++k) {
      const TraceEvent& o = seen[j + k];
      if (o.op != op || o.dtype != p.event.dtype || !SameMembers(o.group, p.event.group) ||
          o.peer != p.event.group[k] || o.elements != p.member_elements[k]) {
        return 0;
      }
    }
    return n;
  }

  // An allowed form of the plan's call at the trace's call j: how many
  // calls it takes (0: none fits) and the allowance.
  std::pair<size_t, std::string_view> Allowed(const PlannedCollective& p, size_t j) const {
    const TraceEvent& o = seen[j];
    if (p.event.op == TraceOp::kAllGather) {
      if (const size_t n = PerMember(p, j, TraceOp::kBroadcast)) return {n, kGatherAsBroadcasts};
    }
    if (p.event.op == TraceOp::kReduceScatter) {
      if (const size_t n = PerMember(p, j, TraceOp::kReduce)) return {n, kScatterAsReduces};
      if (o.op == TraceOp::kAllReduce && o.dtype == p.event.dtype && SameMembers(o.group, p.event.group) &&
          o.elements == p.event.elements) {
        return {1, kScatterAsAllReduce};
      }
    }
    return {0, {}};
  }

  bool Bookkeeping(const TraceEvent& o) const { return IsBookkeeping(o, smallest_row); }

  void Run() {
    for (const PlannedCollective& p : plan) {
      if (Cols(p) > 0) smallest_row = std::min(smallest_row == 1 ? Cols(p) : smallest_row, Cols(p));
    }
    saw_all_to_all =
        std::any_of(seen.begin(), seen.end(), [](const TraceEvent& e) { return e.op == TraceOp::kAllToAll; });
    out.planned = static_cast<int>(plan.size());
    size_t i = 0, j = 0;
    while (i < plan.size()) {
      const PlannedCollective& p = plan[i];
      if (j < seen.size() && Matches(p, seen[j])) {
        Noted(p, seen[j]);
        ++i, ++j, ++out.matched;
      } else if (p.routed && !saw_all_to_all) {
        Use(kUnseenAllToAll);
        ++i;
      } else if (const auto [n, allowance] = j < seen.size() ? Allowed(p, j) : std::pair{size_t{0}, ""}; n > 0) {
        Use(allowance);
        j += n;
        ++i, ++out.matched;
      } else if (j < seen.size() && Bookkeeping(seen[j])) {
        Use(kBookkeeping);
        ++j, ++out.skipped;
      } else {
        out.divergence = Diverged(i, j);
        return;
      }
    }
    while (j < seen.size() && Bookkeeping(seen[j])) Use(kBookkeeping), ++j, ++out.skipped;
    consumed = j;  // what is left may be another pass
  }

  void Noted(const PlannedCollective& p, const TraceEvent& o) {
    if (p.kind == StepKind::kAllReduceAddNorm) Use(kFusedNorm);
    if (p.routed && o.elements != p.event.elements) Use(kRoutedRows);
    if (IsPointToPoint(o.op) && o.group != p.event.group) Use(kPointToPoint);
  }

  struct Follow {
    size_t matched = 0;
    bool complete = false;
  };
  Follow Follows(size_t i, size_t j) const;
  TraceDivergence Diverged(size_t i, size_t j) const;
  std::string Defect(size_t i, size_t j) const;
};

std::string BytesOf(int64_t elements, const std::string& dtype) {
  const int64_t each = dtype.ends_with("64") ? 8 : dtype.ends_with("32") ? 4 : (dtype.ends_with("16")) ? 2 : 1;
  const double b = static_cast<double>(elements * each);
  if (b >= 1 << 30) return fmt::format("{:.2f} GiB", b / (1 << 30));
  if (b >= 1 << 20) return fmt::format("{:.2f} MiB", b / (1 << 20));
  if (b >= 1 << 10) return fmt::format("{:.2f} KiB", b / (1 << 10));
  return fmt::format("{} bytes", b);
}

std::string Members(const std::vector<int>& g) { return fmt::format("{}", fmt::join(g, ",")); }

std::string Verb(const PlannedCollective& p) {
  switch (p.kind) {
    case StepKind::kAllReduce:
    case StepKind::kAllReduceAddNorm: return "completes the sum with an all-reduce";
    case StepKind::kReduceScatter:
    case StepKind::kReduceScatterV: return "completes the sum with a reduce-scatter";
    case StepKind::kAllGather: return "gathers the rows with an all-gather";
    case StepKind::kGatherVocab: return "gathers the vocabulary's columns with an all-gather";
    case StepKind::kGatherKeys: return "gathers its CP peers' keys and values with an all-gather";
    case StepKind::kGatherQueries: return "gathers its DCP group's queries with an all-gather";
    case StepKind::kExchangePartials: return "sends each DCP peer its heads' partial outputs with an all-to-all";
    case StepKind::kDispatch: return "sends the rows to their experts with an all-to-all";
    case StepKind::kCombine: return "brings the experts' outputs back with an all-to-all";
    case StepKind::kSend: return "sends its rows";
    case StepKind::kRecv: return "receives its rows";
    default: return "runs";
  }
}

std::string PlannedText(const PlannedCollective& p) {
  const TraceEvent& e = p.event;
  const std::string size =
      p.routed ? fmt::format("rows as routed, {} wide, {}", Cols(p), e.dtype)
               : fmt::format("{} x {} {}, {}", RowsOf(p), Cols(p), e.dtype, BytesOf(e.elements, e.dtype));
  if (IsPointToPoint(e.op)) {
    return fmt::format("the plan {} {} rank {} ({})", Verb(p), e.op == TraceOp::kSend ? "to" : "from", e.peer, size);
  }
  return fmt::format("the plan {} over {} ({} ranks: {}; {})", Verb(p), Name(*p.group), e.group.size(),
                     Members(e.group), size);
}

std::string SeenText(const TraceEvent& o) {
  const std::string size = fmt::format("{} elements of {}, {}", o.elements, o.dtype, BytesOf(o.elements, o.dtype));
  std::string what;
  if (IsPointToPoint(o.op)) {
    what = fmt::format("a {} {} rank {}", Name(o.op), o.op == TraceOp::kSend ? "to" : "from", o.peer);
  } else {
    what = fmt::format("{} over {} ranks ({})", Name(o.op), o.group.size(), Members(o.group));
    if (o.peer >= 0) what += fmt::format(" rooted at {}", o.peer);
  }
  return fmt::format("the engine ran {} ({}) at trace line {}{}", what, size, o.line,
                     o.tag.empty() ? "" : fmt::format(", tagged '{}'", o.tag));
}

// How far the plan from i and the trace from j go on together, call for
// call, and whether they end together.
Aligner::Follow Aligner::Follows(size_t i, size_t j) const {
  Follow f;
  while (i < plan.size() && j < seen.size()) {
    if (Matches(plan[i], seen[j])) {
      ++j;
    } else if (const size_t n = Allowed(plan[i], j).first; n > 0) {
      j += n;
    } else {
      return f;
    }
    ++i, ++f.matched;
  }
  while (j < seen.size() && Bookkeeping(seen[j])) ++j;
  f.complete = i == plan.size() && j == seen.size();
  return f;
}

std::string Aligner::Defect(size_t i, size_t j) const {
  const PlannedCollective& p = plan[i];
  if (j >= seen.size()) {
    if (Spec(p.kind).completes) return "a sum left owed (its reduction missing)";
    if (p.kind == StepKind::kAllGather) return "a gather missing";
    return "a collective missing (the trace ends)";
  }
  const TraceEvent& o = seen[j];
  // Which story the rest of the trace tells: the engine's call took the
  // plan's place, came in addition to it, or the plan's call is missing.
  // The one the trace follows furthest wins (the first, where even).
  enum class Story { kInstead, kExtra, kMissing } story = Story::kInstead;
  Follow best = Follows(i + 1, j + 1);
  for (const auto& [s, f] :
       {std::pair{Story::kExtra, Follows(i, j + 1)}, std::pair{Story::kMissing, Follows(i + 1, j)}}) {
    if (std::pair{f.complete, f.matched} > std::pair{best.complete, best.matched}) story = s, best = f;
  }
  if (story == Story::kExtra) return Reduces(o.op) ? "a sum completed twice" : "a collective the plan does not have";
  if (story == Story::kMissing) {
    if (Spec(p.kind).completes) {
      return i + 1 < plan.size() && plan[i + 1].kind == StepKind::kSend ? "a partial sent across a handoff"
                                                                        : "a sum left owed (its reduction missing)";
    }
    if (p.kind == StepKind::kAllGather || p.kind == StepKind::kGatherVocab) return "a gather missing";
    return "a collective missing";
  }
  if (Reduces(o.op) && Reduces(p.event.op) && o.group.size() > p.event.group.size()) {
    return "a sum over ranks that hold other rows (the wrong group)";
  }
  if (o.op == p.event.op && SameGroup(p, o) && o.dtype == p.event.dtype && o.elements != p.event.elements) {
    const int64_t cols = Cols(p), rows = RowsOf(p), n = cfg.attn_tp();
    if (cols > 0 && o.elements % cols == 0 && o.elements < p.event.elements) {
      const int64_t got = o.elements / cols;
      return n > 1 && got * n > rows - n && got * n < rows + n ? "rows sliced twice" : "fewer rows than the plan";
    }
    return "more rows than the plan (a slice missing, or rows gathered twice)";
  }
  if (o.op == p.event.op && o.elements == p.event.elements && o.dtype == p.event.dtype) return "the wrong group";
  if (o.op == p.event.op && o.elements == p.event.elements) return "another dtype on the wire";
  return "another collective";
}

TraceDivergence Aligner::Diverged(size_t i, size_t j) const {
  const PlannedCollective& p = plan[i];
  return {.plan_index = static_cast<int>(i),
          .trace_line = j < seen.size() ? seen[j].line : 0,
          .where = p.where,
          .expected = PlannedText(p),
          .observed = j < seen.size() ? SeenText(seen[j]) : "the engine's trace ends",
          .defect = Defect(i, j)};
}

}  // namespace

std::span<const Allowance> Allowances() { return kAllowances; }

bool IsBookkeeping(const TraceEvent& e, int64_t smallest_row) { return !IsFloat(e.dtype) || e.elements < smallest_row; }

bool TraceCheck::ok() const {
  return std::none_of(ranks.begin(), ranks.end(), [](const RankCheck& r) { return r.divergence.has_value(); });
}

Aligned AlignRank(const ParallelConfig& cfg, const std::vector<PlannedCollective>& plan, const RankTrace& trace) {
  Aligner a{cfg, plan, trace.events};
  a.out.rank = trace.rank;
  a.Run();
  const size_t consumed = a.out.divergence ? 0 : a.consumed;
  return {std::move(a.out), consumed};
}

TraceDivergence PastThePlan(const TraceEvent& e, int planned) {
  return {.plan_index = planned,
          .trace_line = e.line,
          .where = "after the plan's last collective",
          .expected = "the plan has no more collectives, and no batch starts another pass here",
          .observed = SeenText(e),
          .defect = "a collective the plan does not have"};
}

}  // namespace seam
