// `seam run --generate N`: requests prefilled and decoded as engines serve
// them, every token fed checked against the reference's single pass over the
// final sequences (seam/runtime/generate.h).
#include <fmt/format.h>

#include <iostream>
#include <random>

#include "cli.h"
#include "seam/runtime/dump.h"
#include "seam/runtime/generate.h"

namespace seam::cli {

Expected<RequestsFlag> ParseRequests(std::string_view text) {
  RequestsFlag f;
  if (text.find_first_of(":@,") == std::string_view::npos) {
    Expected<int> n = ParseCount(text, 1, kMaxTokens);
    if (!n) return n.error();
    f.count = *n;
    return f;
  }
  const auto bad = [&](std::string_view why) {
    return InvalidArgument(
        fmt::format("'{}': each request is PROMPT[:OUTPUT][@ARRIVAL], e.g. 12:4@2 ({})", text.substr(0, 64), why));
  };
  int64_t total = 0;
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find(',', at), text.size());
    std::string_view item = text.substr(at, end - at);
    RequestLengths r;
    const size_t arrival = item.find('@');
    if (arrival != std::string_view::npos) {
      Expected<int> a = ParseCount(item.substr(arrival + 1), 0, kMaxTokens);
      if (!a) return bad(a.error().message);
      r.arrival = *a;
      item = item.substr(0, arrival);
    }
    const size_t colon = item.find(':');
    Expected<int> p = ParseCount(item.substr(0, colon), 1, kMaxTokens);
    if (!p) return bad(p.error().message);
    r.prompt = *p;
    if (colon != std::string_view::npos) {
      Expected<int> o = ParseCount(item.substr(colon + 1), 1, kMaxTokens);
      if (!o) return bad(o.error().message);
      r.output = *o;
    }
    total += r.prompt + r.output;
    if (total > kMaxTokens || static_cast<int64_t>(f.each.size()) >= kMaxTokens) {
      return bad(fmt::format("more than {} tokens in all", kMaxTokens));
    }
    f.each.push_back(r);
    at = end + 1;
  }
  f.count = static_cast<int>(f.each.size());
  return f;
}

std::vector<Request> RequestsOf(const RunArgs& a, const Batch& b) {
  std::vector<Request> out;
  for (size_t i = 0; i < b.requests.size(); ++i) {
    const RequestLengths l = a.lengths.empty() ? RequestLengths{} : a.lengths[i];
    out.push_back({b.requests[i], l.output > 0 ? l.output : a.generate, l.arrival});
  }
  return out;
}

namespace {

// How many steps prefilled only, decoded only, or both, and how many times
// a DP group had nothing to run.
struct StepCounts {
  int prefill = 0, decode = 0, mixed = 0, idle = 0;
};

StepCounts CountSteps(const Schedule& s, const std::vector<Request>& requests, int attn_dp) {
  StepCounts c;
  for (const std::vector<StepPart>& step : s.steps) {
    bool p = false, d = false;
    std::vector<bool> busy(static_cast<size_t>(attn_dp), false);
    for (const StepPart& part : step) {
      const bool prompt = part.position < static_cast<int>(requests[static_cast<size_t>(part.request)].prompt.size());
      (prompt ? p : d) = true;
      busy[static_cast<size_t>(s.group[static_cast<size_t>(part.request)])] = true;
    }
    (p && d ? c.mixed : p ? c.prefill : c.decode) += 1;
    for (bool b : busy) c.idle += b ? 0 : 1;
  }
  return c;
}

// Per token fed, in TeacherForced's rows: the token its logits chose, or
// -1 inside a prompt.
std::vector<int64_t> NextIds(const std::vector<Request>& requests, const Generation& g) {
  std::vector<int64_t> out;
  for (size_t q = 0; q < requests.size(); ++q) {
    const size_t prompt = requests[q].prompt.size();
    for (size_t i = 0; i + 1 < prompt; ++i) out.push_back(-1);
    for (int id : g.tokens[q]) out.push_back(id);
  }
  return out;
}

std::string TokensText(const std::vector<int>& tokens) {
  constexpr size_t kShown = 8;
  std::string out = fmt::format("{}", fmt::join(tokens.begin(), tokens.begin() + std::min(tokens.size(), kShown), " "));
  if (tokens.size() > kShown) out += fmt::format(" ... ({} in all)", tokens.size());
  return out;
}

struct Verdict {
  double max_abs_diff = 0;
  bool same = false;
};

// --dump: the teacher-forced sequences, the generation's rows and logits,
// and each row's greedy choice.
Status Dump(const RunArgs& a, const PreparedRun& p, const std::vector<Request>& requests, const Generation& g,
            const Tensor& reference) {
  return DumpRun(a.dump, p.loaded.model, p.loaded.weights, p.dtype, TeacherForced(requests, g), g.hidden, reference,
                 {.force = a.force, .logits = &g.logits, .next_ids = NextIds(requests, g)});
}

// A generation's document (docs/schemas/run.schema.json, kind generation).
Json GenerationJson(const RunArgs& a, const ParallelConfig& cfg, const PreparedRun& p,
                    const std::vector<Request>& requests, const Generation& g, const StepCounts& steps,
                    const Verdict& v) {
  const Model& m = p.loaded.model;
  Json each = Json::array();
  for (size_t q = 0; q < requests.size(); ++q) {
    each.push_back({{"prompt", requests[q].prompt.size()},
                    {"output", requests[q].output},
                    {"arrival", requests[q].arrival},
                    {"dp_group", g.schedule.group[q]},
                    {"tokens", g.tokens[q]}});
  }
  return {{"seam_run", 1},
          {"kind", "generation"},
          {"model", m.name},
          {"layers", m.num_layers},
          {"config", ConfigJson(cfg)},
          {"configuration", Describe(cfg)},
          {"dtype", Name(p.dtype)},
          {"seed", a.seed},
          {"fused", !a.unfused},
          {"backend", a.backend == RunBackend::kMpi ? "mpi" : "threads"},
          {"serving", {{"chunk", a.chunk > 0 ? Json(a.chunk) : Json(nullptr)}, {"mixed", a.mixed}}},
          {"requests", each},
          {"steps",
           {{"count", g.schedule.steps.size()},
            {"prefill", steps.prefill},
            {"decode", steps.decode},
            {"mixed", steps.mixed},
            {"idle_group_steps", steps.idle}}},
          {"fed_tokens", g.hidden.rows()},
          {"max_abs_diff", v.max_abs_diff},
          {"bit_identical", v.same},
          {"peak_cache_bytes", g.peak_cache_bytes},
          {"ranks", RanksJson(g.ranks)},
          {"seconds", g.seconds},
          {"dump", a.dump.empty() ? Json(nullptr) : Json(a.dump)}};
}

}  // namespace

int RunGeneration(const RunArgs& a, const ParallelConfig& cfg) {
  Expected<PreparedRun> p = PrepareRun(a, cfg);
  if (!p) return Fail(p.error());
  const std::vector<Request> requests = RequestsOf(a, p->batch);
  Expected<Generation> g =
      Generate(p->loaded.model, p->plans, p->loaded.weights, requests, {.chunk = a.chunk, .mixed = a.mixed},
               {.dtype = p->dtype, .timeout_seconds = a.timeout});
  if (!g) return Fail(g.error());
  return ReportGeneration(a, cfg, *p, requests, *g, "threads");
}

int ReportGeneration(const RunArgs& a, const ParallelConfig& cfg, const PreparedRun& p,
                     const std::vector<Request>& requests, const Generation& g, std::string_view backend) {
  const Model& m = p.loaded.model;
  Expected<Tensor> ref = RunReference(m, p.loaded.weights, TeacherForced(requests, g), NumericsOf(cfg, p.dtype));
  if (!ref) return Fail(ref.error());
  const Tensor logits = ReferenceLogits(*ref, p.loaded.weights, p.dtype);
  const RunOutput out{.hidden = g.hidden, .logits = g.logits, .ranks = g.ranks};
  if (Status s = CheckFinite(out, *ref, logits); !s.ok()) return Fail(s.error());
  const bool same = g.hidden == *ref && g.logits == logits;
  const double diff = std::max(MaxAbsDiff(g.hidden, *ref), MaxAbsDiff(g.logits, logits));
  const StepCounts steps = CountSteps(g.schedule, requests, cfg.attn_dp);
  if (a.json) {
    if (!a.dump.empty()) {  // a document on stdout is a run that finished
      if (Status s = Dump(a, p, requests, g, *ref); !s.ok()) return Fail(s.error());
    }
    PrintJson(GenerationJson(a, cfg, p, requests, g, steps, Verdict{diff, same}));
    return same ? kOk : kFailedCheck;
  }
  std::cout << fmt::format("{}  {}  {} requests, {} prompt tokens  dtype={}  backend={}\n",
                           ModelLabel(m.name, m.hidden), Describe(cfg), requests.size(), p.batch.tokens(),
                           Name(p.dtype), backend);
  std::cout << fmt::format("serving: {}{}\n",
                           a.chunk > 0 ? fmt::format("chunks of {} tokens", a.chunk) : "whole prompts",
                           a.mixed ? ", prefill and decode mixed" : ", prefill before decode");
  std::cout << fmt::format("{} steps: {} prefill, {} decode, {} mixed; a DP group idle in {} of them\n",
                           g.schedule.steps.size(), steps.prefill, steps.decode, steps.mixed, steps.idle);
  for (size_t q = 0; q < requests.size(); ++q) {
    std::cout << fmt::format("  request {}: prompt {}, arrives at step {}, DP group {}: {}\n", q,
                             requests[q].prompt.size(), requests[q].arrival, g.schedule.group[q],
                             TokensText(g.tokens[q]));
  }
  std::cout << fmt::format("every token fed ({}) against the reference's pass over the final sequences\n",
                           g.hidden.rows());
  std::cout << fmt::format("max |diff|: {:.3g}\nbit-identical: {}\n", diff, same ? "yes" : "no");
  std::cout << fmt::format("caches: {:.1f} KiB at most, every rank together\n",
                           static_cast<double>(g.peak_cache_bytes) / 1024);
  PrintRanks(g.ranks);
  std::cout << fmt::format("time: {:.1f} ms on {} ranks\n", g.seconds * 1e3, g.ranks.size());
  if (!a.dump.empty()) {
    if (Status s = Dump(a, p, requests, g, *ref); !s.ok()) return Fail(s.error());
    std::cout << "dumped to " << a.dump << "\n";
  }
  return same ? kOk : kFailedCheck;
}

}  // namespace seam::cli
