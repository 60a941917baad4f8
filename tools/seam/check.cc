// `seam check --trace FILE...`: what an engine's ranks ran, read from its
// traces and checked against the plan seam binds for the same model and
// configuration; the first divergence of each rank, said plainly.
#include <fmt/format.h>

#include <iostream>
#include <set>

#include "cli.h"
#include "seam/checked.h"
#include "seam/files.h"
#include "seam/printable.h"
#include "seam/runtime/trace_check.h"

namespace seam::cli {
namespace {

constexpr size_t kMostTraceFiles = 4096;
constexpr size_t kMostTraceFileBytes = size_t{1} << 30;

std::string_view Trim(std::string_view s) {
  const size_t at = s.find_first_not_of(" \t\r\n");
  return at == std::string_view::npos ? std::string_view{} : s.substr(at);
}

// The format a file is in, from its first bytes: a profiler trace is one
// JSON document (an object with "traceEvents", or a list), seam.trace's a
// JSON object a line, NCCL's log text with "NCCL INFO" in it.
Expected<TraceFormat> FormatOf(const std::string& path, std::string_view text) {
  const std::string_view body = Trim(text);
  if (body.starts_with("[") || (body.starts_with("{") && body.find("\"traceEvents\"") != std::string_view::npos)) {
    return TraceFormat::kTorch;
  }
  if (body.starts_with("{")) return TraceFormat::kJsonl;
  if (text.find(" NCCL INFO ") != std::string_view::npos) return TraceFormat::kNccl;
  return InvalidArgument(fmt::format(
      "{}: cannot tell which trace this is (not seam.trace's JSON lines, a PyTorch profiler trace or an NCCL log "
      "with NCCL INFO lines): give --trace-format",
      Printable(path)));
}

Expected<std::vector<RankTrace>> ReadJsonlFiles(const std::vector<std::string>& paths,
                                                const std::vector<std::string>& texts) {
  std::vector<RankTrace> all;
  std::set<int> ranks;
  for (size_t f = 0; f < texts.size(); ++f) {
    Expected<std::vector<RankTrace>> read = ReadJsonlTrace(texts[f]);
    if (!read) return Error{read.error().code, fmt::format("{}: {}", Printable(paths[f]), read.error().message)};
    std::vector<RankTrace> t = *std::move(read);
    for (RankTrace& r : t) {
      if (!ranks.insert(r.rank).second) {
        return InvalidArgument(fmt::format("{}: rank {} is in another trace file too", Printable(paths[f]), r.rank));
      }
      all.push_back(std::move(r));
    }
  }
  std::sort(all.begin(), all.end(), [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  return all;
}

Expected<std::vector<RankTrace>> ReadTraces(const CheckArgs& a) {
  if (a.traces.size() > kMostTraceFiles) {
    return InvalidArgument(fmt::format("{} trace files; seam reads at most {}", a.traces.size(), kMostTraceFiles));
  }
  std::vector<std::string> texts;
  std::optional<TraceFormat> format = a.format;
  for (const std::string& path : a.traces) {
    SEAM_ASSIGN_OR_RETURN(std::string text, ReadFileAtMost(path, kMostTraceFileBytes));
    SEAM_ASSIGN_OR_RETURN(const TraceFormat f, a.format ? Expected<TraceFormat>(*a.format) : FormatOf(path, text));
    if (format && *format != f) {
      return InvalidArgument(fmt::format("{} is {}, but {} is {}: one run's traces are in one format", Printable(path),
                                         Name(f), Printable(a.traces.front()), Name(*format)));
    }
    format = f;
    texts.push_back(std::move(text));
  }
  switch (*format) {
    case TraceFormat::kJsonl: return ReadJsonlFiles(a.traces, texts);
    case TraceFormat::kNccl: return ReadNcclLogs(texts);
    case TraceFormat::kTorch: return ReadTorchTraces(texts);
  }
  return InvalidArgument("an unknown trace format");
}

struct Subject {
  Model model;
  Pipeline plans;
  int replicas = 1;
};

Expected<Subject> SubjectOf(const CheckArgs& a) {
  SEAM_ASSIGN_OR_RETURN(WireDtypes wire, ToWire(a.wire));
  if (a.engine.engine) {
    SEAM_ASSIGN_OR_RETURN(EngineChoice e, FromEngine(a.engine, a.layers));
    WireDtypes w = e.wire;
    w.dispatch = a.wire.dispatch.value_or(w.dispatch);
    SEAM_ASSIGN_OR_RETURN(Pipeline plans, BindPipelineChecked(e.model, e.config, {.wire = w}));
    return Subject{std::move(e.model), std::move(plans), e.replicas};
  }
  SEAM_ASSIGN_OR_RETURN(ParallelConfig cfg, ToConfig(a.flags));
  SEAM_ASSIGN_OR_RETURN(Model m, ChooseModel(a.model, a.hf_config, a.layers));
  SEAM_ASSIGN_OR_RETURN(Pipeline plans, BindPipelineChecked(m, cfg, {.wire = wire}));
  return Subject{std::move(m), std::move(plans), 1};
}

std::string Ranges(const std::vector<int>& ranks) {
  std::vector<std::string> out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out.push_back(j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

const Allowance& AllowanceNamed(std::string_view name) {
  for (const Allowance& a : Allowances()) {
    if (a.name == name) return a;
  }
  SEAM_CHECK(false, "an allowance no table row names");
}

void PrintText(const Subject& s, const TraceCheck& c) {
  const ParallelConfig& cfg = s.plans.front().config();
  fmt::print("seam check: {}, {}{}\n", ModelLabel(s.model.name, s.model.hidden), Describe(cfg),
             c.replicas > 1 ? fmt::format(", {} replicas", c.replicas) : "");
  fmt::print("batch: {} rows per DP group{}\n", fmt::join(c.group_rows, ", "),
             c.inferred ? " (read from the trace's sizes; --tokens sets them)" : "");
  if (c.pass_rows.size() > 1) {
    std::vector<std::string> batches;
    for (const std::vector<int>& rows : c.pass_rows) batches.push_back(fmt::format("{}", fmt::join(rows, "+")));
    fmt::print("passes: {}, at {} rows\n", c.pass_rows.size(), fmt::join(batches, ", "));
  }
  std::set<std::string> used;
  for (const RankCheck& r : c.ranks) {
    for (const std::string& name : r.allowances) used.insert(name);
    if (!r.divergence) {
      fmt::print("rank {}: matches its plan ({} collectives{})\n", r.rank, r.planned,
                 r.skipped > 0 ? fmt::format(", {} of the engine's own passed over", r.skipped) : "");
      continue;
    }
    const TraceDivergence& d = *r.divergence;
    if (c.pass_rows.size() > 1) {
      fmt::print("rank {}: diverges in pass {}, at its collective {}\n", r.rank, d.pass, d.plan_index + 1);
    } else {
      fmt::print("rank {}: diverges at collective {} of {}\n", r.rank, d.plan_index + 1, r.planned);
    }
    fmt::print("  where:       {}\n  plan:        {}\n  engine:      {}\n  looks like:  {}\n", d.where, d.expected,
               d.observed, d.defect);
  }
  if (!c.missing.empty()) fmt::print("not in the trace: ranks {}\n", Ranges(c.missing));
  for (const std::string& name : used) {
    const Allowance& a = AllowanceNamed(name);
    fmt::print("allowed: {}: {} ({})\n", a.name, a.what, a.source);
  }
}

void PrintJsonReport(const Subject& s, const TraceCheck& c) {
  Json ranks = Json::array();
  std::set<std::string> used;
  for (const RankCheck& r : c.ranks) {
    Json d = nullptr;
    if (r.divergence) {
      d = {{"pass", r.divergence->pass},
           {"plan_index", r.divergence->plan_index},
           {"trace_line", r.divergence->trace_line},
           {"where", r.divergence->where},
           {"expected", r.divergence->expected},
           {"observed", r.divergence->observed},
           {"defect", r.divergence->defect}};
    }
    for (const std::string& name : r.allowances) used.insert(name);
    ranks.push_back({{"rank", r.rank},
                     {"planned", r.planned},
                     {"matched", r.matched},
                     {"skipped", r.skipped},
                     {"allowances", r.allowances},
                     {"divergence", d}});
  }
  Json allowed = Json::array();
  for (const std::string& name : used) {
    const Allowance& a = AllowanceNamed(name);
    allowed.push_back({{"name", a.name}, {"what", a.what}, {"source", a.source}});
  }
  PrintJson({{"seam_check", 1},
             {"model", s.model.name},
             {"config", Describe(s.plans.front().config())},
             {"replicas", c.replicas},
             {"group_rows", c.group_rows},
             {"pass_rows", c.pass_rows},
             {"rows_inferred", c.inferred},
             {"ok", c.ok()},
             {"ranks", ranks},
             {"missing", c.missing},
             {"allowances", allowed}});
}

}  // namespace

std::string_view Name(TraceFormat f) {
  switch (f) {
    case TraceFormat::kJsonl: return "seam";
    case TraceFormat::kNccl: return "nccl";
    case TraceFormat::kTorch: return "torch";
  }
  return "";
}

Expected<TraceFormat> ParseTraceFormat(std::string_view text) {
  for (TraceFormat f : {TraceFormat::kJsonl, TraceFormat::kNccl, TraceFormat::kTorch}) {
    if (text == Name(f)) return f;
  }
  return InvalidArgument(fmt::format("--trace-format '{}' is not one of seam, nccl, torch", Printable(text)));
}

Expected<std::vector<int>> ParseTokens(std::string_view text) {
  std::vector<int> out;
  while (true) {
    const size_t comma = text.find(',');
    SEAM_ASSIGN_OR_RETURN(const int n, ParseCount(text.substr(0, comma), 0, kMaxTokens));
    out.push_back(n);
    if (out.size() > static_cast<size_t>(kMaxRanks)) return InvalidArgument("--tokens names too many DP groups");
    if (comma == std::string_view::npos) return out;
    text = text.substr(comma + 1);
  }
}

int RunTraceCheck(const CheckArgs& a) {
  if (Status s = CheckEngineArgs(a.engine); !s.ok()) return Fail(s.error());
  if (a.traces.empty()) return Fail(InvalidArgument("seam check reads a run's traces: give --trace FILE..."));
  Expected<Subject> s = SubjectOf(a);
  if (!s) return Fail(s.error());
  Expected<std::vector<RankTrace>> traces = ReadTraces(a);
  if (!traces) return Fail(traces.error());
  TraceCheckOptions options{.replicas = s->replicas};
  if (!a.tokens.empty()) {
    const int groups = s->plans.front().config().attn_dp;
    // One count for the batch: spread over the DP groups as seam spreads requests.
    options.group_rows = a.tokens.size() == 1 && groups > 1
                             ? std::vector<int>(static_cast<size_t>(groups), a.tokens.front() / groups)
                             : a.tokens;
    if (a.tokens.size() == 1 && groups > 1) {
      for (int g = 0; g < a.tokens.front() % groups; ++g) ++options.group_rows[static_cast<size_t>(g)];
    }
  }
  Expected<TraceCheck> c = CheckTraces(s->model, s->plans, *traces, options);
  if (!c) return Fail(c.error());
  if (a.json) {
    PrintJsonReport(*s, *c);
  } else {
    PrintText(*s, *c);
  }
  return c->ok() ? kOk : kFailedCheck;
}

}  // namespace seam::cli
