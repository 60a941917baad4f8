// A trace checked against its plan: seam's own run, written in every format
// an engine's tools write, matches its plan for every family and every kind
// of configuration; and each of the seed PR's defects, written into a trace
// as an engine shows it, is reported at its layer and boundary by name.
#include "seam/runtime/trace_check.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <iterator>

#include "defect_plans.h"
#include "exec_testing.h"

namespace seam {
namespace {

using testing::Cut;
using testing::DefectCase;

struct Format {
  std::string name;
  std::function<Expected<std::vector<RankTrace>>(const std::vector<RankTrace>&)> round_trip;
};

Expected<std::vector<RankTrace>> ViaNccl(const std::vector<RankTrace>& t, NcclVersion v) {
  const std::vector<std::string> logs = WriteNcclLogs(t, v);
  return ReadNcclLogs(logs);
}

Expected<std::vector<RankTrace>> ViaTorch(const std::vector<RankTrace>& t) {
  std::vector<std::string> files;
  for (const RankTrace& r : t) files.push_back(WriteTorchTrace(r, static_cast<int>(t.size())));
  return ReadTorchTraces(files);
}

const std::vector<Format>& Formats() {
  static const std::vector<Format> formats = {
      {"seam.trace", [](const std::vector<RankTrace>& t) { return ReadJsonlTrace(WriteJsonlTrace(t)); }},
      {"NCCL 2.18", [](const std::vector<RankTrace>& t) { return ViaNccl(t, NcclVersion::k2_18); }},
      {"NCCL 2.21", [](const std::vector<RankTrace>& t) { return ViaNccl(t, NcclVersion::k2_21); }},
      {"NCCL 2.25", [](const std::vector<RankTrace>& t) { return ViaNccl(t, NcclVersion::k2_25); }},
      {"PyTorch profiler", ViaTorch},
  };
  return formats;
}

// One of each kind of configuration: TP, attention DP, input-scattered, a
// fully data-parallel dense FFN, a2a MoE with expert groups apart from TP,
// context parallelism, and pipelines of each.
std::vector<ParallelConfig> Configs() {
  return {{.tp = 4},
          {.tp = 4, .attn_dp = 2},
          {.tp = 4, .input_scattered = true},
          {.tp = 4, .dense_tp = 1},
          {.tp = 4, .attn_dp = 2, .dense_tp = 1},
          {.tp = 4, .moe = MoeMode::kA2a, .ep = 2},
          {.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .ep = 4},
          Cut({.tp = 2}, {2, 2}),
          Cut({.tp = 4, .attn_dp = 2}, {1, 3}),
          Cut({.tp = 2, .input_scattered = true}, {3, 1}),
          {.tp = 4, .cp = 2},
          Cut({.tp = 8, .attn_dp = 2, .cp = 2}, {2, 2}),
          {.tp = 4, .dcp = 2},
          Cut({.tp = 8, .attn_dp = 2, .dcp = 2}, {2, 2})};
}

std::string Report(const TraceCheck& c) {
  std::string out;
  for (const RankCheck& r : c.ranks) {
    if (!r.divergence) continue;
    out += fmt::format("rank {}: {}: {}; {} ({})\n", r.rank, r.divergence->where, r.divergence->expected,
                       r.divergence->observed, r.divergence->defect);
  }
  return out;
}

TEST(TraceCheck, EveryFamilysOwnRunMatchesItsPlanInEveryTraceFormatWithTheBatchReadFromTheTrace) {
  for (const CatalogueEntry& entry : Catalogue()) {
    const Model m = entry.make();
    if (!m.dims) continue;
    const Weights w = testing::MustWeights(m, Dtype::kF32);
    int checked = 0;
    for (const ParallelConfig& cfg : Configs()) {
      Expected<Pipeline> plans = BindPipelineChecked(m, cfg);
      if (!plans || !CheckRunnable(m, cfg).ok()) continue;
      // 23 tokens in 3 requests: DP groups and attention-TP slices of
      // different sizes, so a call sized for another rank's rows shows.
      const Expected<Batch> b = RandomBatch(23, 3, m.dims->vocab, 5);
      ASSERT_TRUE(b.ok());
      const Expected<RunOutput> out = RunPlans(m, *plans, w, *b, {.log_calls = true});
      ASSERT_TRUE(out.ok()) << entry.name << " " << Describe(cfg) << ": " << out.error().message;
      const std::vector<RankTrace> traces = TraceOfRun(*out, *plans);
      const std::vector<int> rows = LayoutOf(*b, cfg.attn_dp, cfg.cp).group_rows;
      for (const Format& f : Formats()) {
        const Expected<std::vector<RankTrace>> read = f.round_trip(traces);
        ASSERT_TRUE(read.ok()) << entry.name << " " << Describe(cfg) << " " << f.name << ": " << read.error().message;
        const Expected<TraceCheck> c = CheckTraces(m, *plans, *read, {});
        ASSERT_TRUE(c.ok()) << entry.name << " " << Describe(cfg) << " " << f.name << ": " << c.error().message;
        EXPECT_TRUE(c->ok()) << entry.name << " " << Describe(cfg) << " " << f.name << ":\n" << Report(*c);
        EXPECT_EQ(c->group_rows, rows) << entry.name << " " << Describe(cfg) << " " << f.name;
        EXPECT_TRUE(c->missing.empty());
        for (const RankCheck& r : c->ranks) {
          EXPECT_EQ(r.matched, r.planned) << entry.name << " " << Describe(cfg) << " " << f.name << " rank " << r.rank;
          EXPECT_GT(r.planned, 0);
        }
      }
      ++checked;
    }
    EXPECT_GE(checked, 6) << entry.name << " binds too few of the configurations";
  }
}

// A plan's collectives as the trace an engine running it would leave.
std::vector<RankTrace> TraceOfPlan(const Model& m, const Pipeline& plans, const std::vector<int>& rows) {
  const Expected<std::vector<std::vector<PlannedCollective>>> planned = PlannedTraces(m, plans, rows);
  if (!planned) throw std::runtime_error(planned.error().message);
  std::vector<RankTrace> out;
  for (size_t r = 0; r < planned->size(); ++r) {
    RankTrace& t = out.emplace_back();
    t.rank = static_cast<int>(r);
    for (const PlannedCollective& p : (*planned)[r]) {
      t.events.push_back(p.event);
      t.events.back().line = static_cast<int>(t.events.size());
    }
  }
  return out;
}

// The rows of `rows` an attention-TP member keeps when they are sliced over
// attention TP once more.
int64_t SlicedAgain(int64_t rows, int attn_tp, int member) {
  return EvenSpans(static_cast<int>(rows), attn_tp)[static_cast<size_t>(member)].rows();
}

// The first planned collective of `rank` at `where` (and of `kind`).
size_t IndexAt(const std::vector<PlannedCollective>& plan, const std::string& where, StepKind kind) {
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].where == where && plan[i].kind == kind) return i;
  }
  throw std::runtime_error("no " + std::string(Name(kind)) + " at " + where);
}

struct Seen {
  int rank;
  std::string where;
  std::string defect;
};

// Each defect as the engine's trace shows it, and what the check says of it:
// on which ranks, where and what it looks like.
struct DefectTrace {
  DefectCase c;
  std::vector<RankTrace> trace;
  std::vector<Seen> expect;
};

DefectTrace Written(const DefectCase& d, std::vector<int>& rows) {
  const Expected<Batch> b = RandomBatch(11, 2, d.model.dims->vocab, 5);
  rows = LayoutOf(*b, d.cfg.attn_dp).group_rows;
  return {d, TraceOfPlan(d.model, d.fixed, rows), {}};
}

// (1) The residual sliced twice shows where it is next gathered, at the end
// of the stack: each rank gathers the rows of its slice's slice.
DefectTrace Defect1Trace(std::vector<int>& rows) {
  DefectTrace t = Written(testing::Defect1(), rows);
  const std::string where = "layer 5 exit (sparse-ffn -> the final norm)";
  const auto planned = PlannedTraces(t.c.model, t.c.fixed, rows).value();
  for (int r : {0, 1}) {
    TraceEvent& e =
        t.trace[static_cast<size_t>(r)].events[IndexAt(planned[static_cast<size_t>(r)], where, StepKind::kAllGather)];
    e.shape = {SlicedAgain(e.shape[0], 2, r), e.shape[1]};
    e.elements = e.shape[0] * e.shape[1];
    e.splits.clear();
    t.expect.push_back({r, where, "rows sliced twice"});
  }
  return t;
}

// (2) The stack's last attention after an a2a MoE: the MoE's exit leaves the
// residual on the slice, its gather missing (the old plan as it ran).
DefectTrace Defect2Trace(std::vector<int>& rows) {
  DefectTrace t = Written(testing::Defect2(), rows);
  t.trace = TraceOfPlan(t.c.model, t.c.old, rows);
  for (int r : {0, 1}) t.expect.push_back({r, "layer 1 exit (sparse-ffn -> attention)", "a gather missing"});
  return t;
}

// (3) The later rank re-declares the received sum and completes it again:
// an all-reduce over TP of what it received, before its first stage.
DefectTrace Defect3Trace(std::vector<int>& rows) {
  DefectTrace t = Written(testing::Defect3(), rows);
  const auto planned = PlannedTraces(t.c.model, t.c.fixed, rows).value();
  for (int r : {2, 3}) {
    std::vector<TraceEvent>& events = t.trace[static_cast<size_t>(r)].events;
    const std::vector<PlannedCollective>& plan = planned[static_cast<size_t>(r)];
    size_t after = 0;
    while (after < plan.size() && plan[after].where == "the handoff from pipeline rank 0") ++after;
    const TraceEvent twice{.op = TraceOp::kAllReduce,
                           .group = {2, 3},
                           .shape = {11, 64},
                           .elements = 11 * 64,
                           .dtype = "bfloat16",
                           .reduce = "sum"};
    events.insert(events.begin() + static_cast<std::ptrdiff_t>(after), twice);
    for (size_t i = 0; i < events.size(); ++i) events[i].line = static_cast<int>(i + 1);
    t.expect.push_back({r, plan[after].where, "a sum completed twice"});
  }
  return t;
}

// (4) The FFN before the handoff slices a residual already on the slice:
// the handoff sends the slice's slice.
DefectTrace Defect4Trace(std::vector<int>& rows) {
  DefectTrace t = Written(testing::Defect4(), rows);
  const std::string where = "the handoff to pipeline rank 1";
  const auto planned = PlannedTraces(t.c.model, t.c.fixed, rows).value();
  for (int r : {0, 1}) {
    TraceEvent& e =
        t.trace[static_cast<size_t>(r)].events[IndexAt(planned[static_cast<size_t>(r)], where, StepKind::kSend)];
    e.shape = {SlicedAgain(e.shape[0], 2, r), e.shape[1]};
    e.elements = e.shape[0] * e.shape[1];
    t.expect.push_back({r, where, "rows sliced twice"});
  }
  return t;
}

// (5) to_pp sends the mixer's declared sum unreduced: no reduce-scatter
// before the sends.
DefectTrace Defect5Trace(std::vector<int>& rows) {
  DefectTrace t = Written(testing::Defect5(), rows);
  const std::string where = "the handoff to pipeline rank 1";
  const auto planned = PlannedTraces(t.c.model, t.c.fixed, rows).value();
  for (int r : {0, 1}) {
    std::vector<TraceEvent>& events = t.trace[static_cast<size_t>(r)].events;
    events.erase(events.begin() + static_cast<std::ptrdiff_t>(
                                      IndexAt(planned[static_cast<size_t>(r)], where, StepKind::kReduceScatter)));
    t.expect.push_back({r, where, "a partial sent across a handoff"});
  }
  return t;
}

TEST(TraceCheck, EachOfTheSeedPrsDefectsInAnEnginesTraceIsNamedAtItsLayerAndBoundary) {
  for (const auto& make : {Defect1Trace, Defect2Trace, Defect3Trace, Defect4Trace, Defect5Trace}) {
    std::vector<int> rows;
    const DefectTrace t = make(rows);
    for (const Format& f : Formats()) {
      const Expected<std::vector<RankTrace>> read = f.round_trip(t.trace);
      ASSERT_TRUE(read.ok()) << t.c.name << " " << f.name << ": " << read.error().message;
      const Expected<TraceCheck> c = CheckTraces(t.c.model, t.c.fixed, *read, {});
      ASSERT_TRUE(c.ok()) << t.c.name << " " << f.name << ": " << c.error().message;
      EXPECT_FALSE(c->ok()) << t.c.name << " " << f.name;
      std::vector<Seen> seen;
      for (const RankCheck& r : c->ranks) {
        if (r.divergence) seen.push_back({r.rank, r.divergence->where, r.divergence->defect});
      }
      ASSERT_EQ(seen.size(), t.expect.size()) << t.c.name << " " << f.name << ":\n" << Report(*c);
      for (size_t i = 0; i < seen.size(); ++i) {
        EXPECT_EQ(seen[i].rank, t.expect[i].rank) << t.c.name << " " << f.name;
        EXPECT_EQ(seen[i].where, t.expect[i].where) << t.c.name << " " << f.name << ":\n" << Report(*c);
        EXPECT_EQ(seen[i].defect, t.expect[i].defect) << t.c.name << " " << f.name << ":\n" << Report(*c);
      }
    }
  }
}

// A run's own trace at a configuration, and its plans.
struct OwnTrace {
  Model model;
  Pipeline plans;
  std::vector<RankTrace> trace;
  std::vector<int> rows;  // each DP group's
};

OwnTrace Own(const std::string& family, const ParallelConfig& cfg, int tokens = 23) {
  OwnTrace o{CatalogueModel(family).value(), {}, {}, {}};
  o.plans = BindPipelineChecked(o.model, cfg).value();
  const Expected<Batch> b = RandomBatch(tokens, 3, o.model.dims->vocab, 5);
  const Expected<RunOutput> out =
      RunPlans(o.model, o.plans, testing::MustWeights(o.model, Dtype::kF32), *b, {.log_calls = true});
  o.trace = TraceOfRun(*out, o.plans);
  o.rows = LayoutOf(*b, cfg.attn_dp, cfg.cp).group_rows;
  return o;
}

// The one divergence of rank `rank` (and that the others match).
TraceDivergence OnlyDivergence(const OwnTrace& o, const std::vector<RankTrace>& trace, int rank) {
  const Expected<TraceCheck> c = CheckTraces(o.model, o.plans, trace, {});
  if (!c) throw std::runtime_error(c.error().message);
  for (const RankCheck& r : c->ranks) {
    if (r.rank != rank && r.divergence) throw std::runtime_error("rank " + std::to_string(r.rank) + " diverges too");
  }
  const RankCheck& mine = c->ranks[static_cast<size_t>(rank)];
  if (!mine.divergence) throw std::runtime_error("no divergence on rank " + std::to_string(rank));
  return *mine.divergence;
}

TEST(TraceCheck, EachKindOfDifferenceIsNamed) {
  const OwnTrace o = Own("llama", {.tp = 4});
  const auto edited = [&](const std::function<void(std::vector<TraceEvent>&)>& edit) {
    std::vector<RankTrace> t = o.trace;
    edit(t[1].events);
    return OnlyDivergence(o, t, 1);
  };
  // Each all-reduce here is the whole batch over TP: 23 x 64.
  EXPECT_EQ(edited([](auto& e) { e[2].dtype = "float16"; }).defect, "another dtype on the wire");
  EXPECT_EQ(edited([](auto& e) { e[2].group = {1, 0, 3, 5}; }).defect, "the wrong group");
  EXPECT_EQ(edited([](auto& e) { e[2].group = {0, 1, 2, 3, 4, 5, 6, 7}; }).defect,
            "a sum over ranks that hold other rows (the wrong group)");
  EXPECT_EQ(edited([](auto& e) { e[2].elements = 10 * 64; }).defect, "fewer rows than the plan");
  EXPECT_EQ(edited([](auto& e) { e[2].elements = 30 * 64; }).defect,
            "more rows than the plan (a slice missing, or rows gathered twice)");
  EXPECT_EQ(edited([](auto& e) { e.insert(e.begin() + 2, e[2]); }).defect, "a sum completed twice");
  EXPECT_EQ(edited([](auto& e) { e.erase(e.begin() + 2); }).defect, "a sum left owed (its reduction missing)");
  const TraceDivergence ends = edited([](auto& e) { e.resize(3); });
  EXPECT_EQ(ends.observed, "the engine's trace ends");
  EXPECT_EQ(ends.trace_line, 0);
  const TraceDivergence extra = edited([](auto& e) { e.push_back(e.front()); });
  EXPECT_EQ(extra.defect, "a collective the plan does not have");
  EXPECT_EQ(extra.where, "after the plan's last collective");
  const TraceDivergence send = edited([](auto& e) {
    e[2] = {.op = TraceOp::kSend,
            .group = {1, 2},
            .shape = {1472},
            .elements = 1472,
            .dtype = "bfloat16",
            .peer = 2,
            .line = 3};
  });
  EXPECT_EQ(send.defect, "another collective");
  EXPECT_EQ(send.trace_line, 3);
  EXPECT_EQ(send.where, "layer 1 entry (dense-ffn -> attention)");
  EXPECT_EQ(send.expected,
            "the plan completes the sum with an all-reduce over tp (4 ranks: 0,1,2,3; 23 x 64 bfloat16, 2.88 KiB)");
  EXPECT_EQ(send.observed, "the engine ran a send to rank 2 (1472 elements of bfloat16, 2.88 KiB) at trace line 3");
}

// Under context parallelism the batch is read per shard, and an engine that
// skips an attention's key/value gather is named there.
TEST(TraceCheck, AnAttentionThatDoesNotGatherItsCpPeersKeysIsNamed) {
  const OwnTrace o = Own("llama", {.tp = 4, .cp = 2});
  EXPECT_EQ(o.rows.size(), 2u);  // one count per CP rank of the DP group
  std::vector<RankTrace> t = o.trace;
  ASSERT_EQ(t[1].events.front().op, TraceOp::kAllGather);
  t[1].events.erase(t[1].events.begin());
  // Its first call gone, the batch cannot be read from rank 1: it is given.
  const Expected<TraceCheck> c = CheckTraces(o.model, o.plans, t, {.group_rows = o.rows});
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->ranks[1].divergence.has_value());
  EXPECT_FALSE(c->ranks[3].divergence.has_value());
  const TraceDivergence& d = *c->ranks[1].divergence;
  EXPECT_EQ(d.where, "layer 0 attention");
  EXPECT_EQ(
      d.expected.rfind("the plan gathers its CP peers' keys and values with an all-gather over cp (2 ranks: 1,3; ", 0),
      0u)
      << d.expected;
}

// An engine that reduce-scatters rescaled outputs where the plan exchanges
// the partials all-to-all (vLLM's default ag_rs): its first all-to-all is
// missing and the step is named.
TEST(TraceCheck, AnAttentionThatDoesNotExchangeItsDcpPartialsIsNamed) {
  const OwnTrace o = Own("llama", {.tp = 4, .dcp = 2});
  std::vector<RankTrace> t = o.trace;
  const auto a2a = std::find_if(t[0].events.begin(), t[0].events.end(),
                                [](const TraceEvent& e) { return e.op == TraceOp::kAllToAll; });
  ASSERT_NE(a2a, t[0].events.end());
  t[0].events.erase(a2a);
  const Expected<TraceCheck> c = CheckTraces(o.model, o.plans, t, {.group_rows = o.rows});
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->ranks[0].divergence.has_value());
  EXPECT_FALSE(c->ranks[2].divergence.has_value());
  const TraceDivergence& d = *c->ranks[0].divergence;
  EXPECT_EQ(d.where, "layer 0 attention");
  EXPECT_EQ(
      d.expected.rfind(
          "the plan sends each DCP peer its heads' partial outputs with an all-to-all over dcp (2 ranks: 0,1; ", 0),
      0u)
      << d.expected;
}

TEST(TraceCheck, AnEnginesBookkeepingIsPassedOverAndCounted) {
  const OwnTrace o = Own("llama", {.tp = 2});
  std::vector<RankTrace> t = o.trace;
  for (RankTrace& r : t) {
    // SGLang's DP token counts, pynccl's one-element warm-up.
    r.events.insert(r.events.begin(),
                    {.op = TraceOp::kAllGather, .group = {0, 1}, .shape = {1}, .elements = 1, .dtype = "int32"});
    r.events.insert(
        r.events.begin() + 3,
        {.op = TraceOp::kAllReduce, .group = {0, 1}, .shape = {1}, .elements = 1, .dtype = "float32", .reduce = "sum"});
  }
  const Expected<TraceCheck> c = CheckTraces(o.model, o.plans, t, {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->ok()) << Report(*c);
  for (const RankCheck& r : c->ranks) {
    EXPECT_EQ(r.skipped, 2);
    EXPECT_EQ(r.matched, r.planned);
    EXPECT_NE(std::find(r.allowances.begin(), r.allowances.end(), "engine bookkeeping"), r.allowances.end());
  }
}

TEST(TraceCheck, AReduceScatterRunAsAnAllReduceAndAnAllToAllOutsideNcclAreAllowedAndSaid) {
  const OwnTrace o = Own("deepseek-v2-lite", {.tp = 4, .attn_dp = 2, .moe = MoeMode::kA2a});
  std::vector<RankTrace> t = o.trace;
  for (RankTrace& r : t) {
    std::vector<TraceEvent> kept;
    for (TraceEvent e : r.events) {
      if (e.op == TraceOp::kAllToAll) continue;  // DeepEP's: not in NCCL's log
      if (e.op == TraceOp::kReduceScatter) {
        e.op = TraceOp::kAllReduce;
        e.splits.clear();
      }
      kept.push_back(e);
    }
    r.events = kept;
  }
  const Expected<TraceCheck> c = CheckTraces(o.model, o.plans, t, {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->ok()) << Report(*c);
  for (const RankCheck& r : c->ranks) {
    for (const char* name : {"reduce-scatter as all-reduce and slice", "all-to-all outside NCCL"}) {
      EXPECT_NE(std::find(r.allowances.begin(), r.allowances.end(), name), r.allowances.end()) << name;
    }
    EXPECT_LT(r.matched, r.planned);  // the exchanges were not checked
  }
  // One all-to-all left in a rank's trace: the others are missing, not allowed.
  std::vector<RankTrace> one = t;
  one[0].events.push_back(o.trace[0].events.back());
  for (const TraceEvent& e : o.trace[0].events) {
    if (e.op == TraceOp::kAllToAll) {
      one[0].events.insert(one[0].events.begin() + 3, e);
      break;
    }
  }
  const Expected<TraceCheck> c1 = CheckTraces(o.model, o.plans, one, {.group_rows = c->group_rows});
  ASSERT_TRUE(c1.ok());
  EXPECT_TRUE(c1->ranks[0].divergence.has_value());
}

TEST(TraceCheck, ReplicasSideBySideAreEachCheckedOnTheirOwnRanks) {
  const OwnTrace o = Own("llama", {.tp = 2});
  std::vector<RankTrace> t = o.trace;
  for (const RankTrace& r : o.trace) {
    RankTrace copy = r;
    copy.rank += 2;
    for (TraceEvent& e : copy.events) {
      for (int& g : e.group) g += 2;
      if (e.peer >= 0) e.peer += 2;
    }
    t.push_back(copy);
  }
  const Expected<TraceCheck> c = CheckTraces(o.model, o.plans, t, {.replicas = 2});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->ok()) << Report(*c);
  EXPECT_EQ(c->ranks.size(), 4U);
  // The second replica's first rank calling over the first replica's ranks.
  t[2] = o.trace[0];
  t[2].rank = 2;
  const Expected<TraceCheck> wrong = CheckTraces(o.model, o.plans, t, {.group_rows = {23}, .replicas = 2});
  ASSERT_TRUE(wrong.ok()) << wrong.error().message;
  ASSERT_TRUE(wrong->ranks[2].divergence.has_value());
  EXPECT_EQ(wrong->ranks[2].divergence->defect, "the wrong group");
  EXPECT_FALSE(wrong->ranks[0].divergence.has_value());
}

// An engine's log holds many forward passes (a profile run, a CUDA graph's
// capture at each size, prefills), each at its own batch: read one after
// another, and a defect in a later pass named with its pass.
TEST(TraceCheck, ATraceOfSeveralPassesIsReadPassByPassEachAtItsOwnBatch) {
  const ParallelConfig cfg{.tp = 4, .attn_dp = 2};
  const OwnTrace first = Own("qwen3", cfg, 23);
  const OwnTrace second = Own("qwen3", cfg, 9);
  std::vector<RankTrace> both = first.trace;
  for (size_t r = 0; r < both.size(); ++r) {
    for (const TraceEvent& e : second.trace[r].events) both[r].events.push_back(e);
    for (size_t i = 0; i < both[r].events.size(); ++i) both[r].events[i].line = static_cast<int>(i + 1);
  }
  for (const Format& f : Formats()) {
    const Expected<std::vector<RankTrace>> read = f.round_trip(both);
    ASSERT_TRUE(read.ok()) << f.name << ": " << read.error().message;
    const Expected<TraceCheck> c = CheckTraces(first.model, first.plans, *read, {});
    ASSERT_TRUE(c.ok()) << f.name << ": " << c.error().message;
    EXPECT_TRUE(c->ok()) << f.name << ":\n" << Report(*c);
    ASSERT_EQ(c->pass_rows.size(), 2U) << f.name;
    EXPECT_EQ(c->pass_rows[0], first.rows) << f.name;
    EXPECT_EQ(c->pass_rows[1], second.rows) << f.name;
    EXPECT_NE(first.rows, second.rows);
    EXPECT_EQ(c->group_rows, c->pass_rows[0]);
  }
  // The second pass completes its first sum twice on rank 2.
  std::vector<RankTrace> twice = both;
  std::vector<TraceEvent>& e = twice[2].events;
  size_t at = first.trace[2].events.size();
  while (e[at].op != TraceOp::kAllReduce) ++at;
  e.insert(e.begin() + static_cast<std::ptrdiff_t>(at), e[at]);
  const Expected<TraceCheck> c = CheckTraces(first.model, first.plans, twice, {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->ranks[2].divergence.has_value()) << Report(*c);
  EXPECT_EQ(c->ranks[2].divergence->pass, 2);
  EXPECT_EQ(c->ranks[2].divergence->plan_index, static_cast<int>(at - first.trace[2].events.size()) + 1);
  EXPECT_EQ(c->ranks[2].divergence->defect, "a sum completed twice");
  // Calls past the last pass that start no pass of their own.
  std::vector<RankTrace> tail = both;
  tail[1].events.push_back(tail[1].events.front());
  const Expected<TraceCheck> t = CheckTraces(first.model, first.plans, tail, {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_TRUE(t->ranks[1].divergence.has_value());
  EXPECT_EQ(t->ranks[1].divergence->pass, 3);
  EXPECT_EQ(t->ranks[1].divergence->defect, "a collective the plan does not have");
  EXPECT_FALSE(t->ranks[0].divergence.has_value());
}

// The docs' table of allowances is the code's: each row's name and source.
TEST(TraceCheck, EveryAllowanceIsInTheDocsTableWithItsSource) {
  std::ifstream in(fmt::format("{}/traces.md", SEAM_DOCS));
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(doc.empty());
  ASSERT_GE(Allowances().size(), 9U);
  for (const Allowance& a : Allowances()) {
    const size_t row = doc.find(fmt::format("\n| {} | ", a.name));
    ASSERT_NE(row, std::string::npos) << a.name;
    const std::string line = doc.substr(row + 1, doc.find('\n', row + 1) - row - 1);
    // The source as the code gives it (markdown escapes a bar).
    std::string source;
    for (char ch : a.source) source += ch == '|' ? std::string("\\|") : std::string(1, ch);
    EXPECT_TRUE(line.ends_with(fmt::format(" | {} |", source))) << a.name << ": " << line;
  }
}

}  // namespace
}  // namespace seam
