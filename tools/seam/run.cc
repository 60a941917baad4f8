// `seam run`: a plan on simulated ranks against the unsharded reference.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "cli.h"
#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/files.h"
#include "seam/runtime/dump.h"
#include "seam/runtime/exec.h"
#include "seam/runtime/hf_checkpoint.h"
#include "seam/runtime/matrix.h"
#include "seam/runtime/trace_check.h"

namespace seam::cli {
namespace {

std::string Bytes(int64_t elements) {
  const double b = 4.0 * static_cast<double>(elements);  // elements travel as fp32
  if (b >= 1 << 20) return fmt::format("{:.1f} MiB", b / (1 << 20));
  if (b >= 1 << 10) return fmt::format("{:.1f} KiB", b / (1 << 10));
  return fmt::format("{:.0f} B", b);
}

// The tokens a generation feeds and its requests (none without --generate).
GenerationSize GenerationSizeOf(const RunArgs& a) {
  if (a.generate == 0) return {};
  GenerationSize g{.fed = 0, .requests = a.requests};
  if (a.lengths.empty()) {
    g.fed = a.tokens + static_cast<int64_t>(a.requests) * (a.generate - 1);
    return g;
  }
  for (const RequestLengths& l : a.lengths) g.fed += l.prompt + (l.output > 0 ? l.output : a.generate) - 1;
  return g;
}

// The batch: --tokens split into --requests at random, or each request's
// prompt length; ids uniform below the vocabulary, from the seed.
Expected<Batch> BatchOf(const RunArgs& a, int vocab) {
  if (a.lengths.empty()) return RandomBatch(a.tokens, a.requests, vocab, a.seed);
  std::vector<int> prompts;
  for (const RequestLengths& l : a.lengths) prompts.push_back(l.prompt);
  return RandomPrompts(prompts, vocab, a.seed);
}

// A Hugging Face checkpoint: its config and headers are read first, so the
// sharding and the memory are checked before a value is decoded.
Expected<LoadedModel> LoadCheckpoint(const RunArgs& a, const ParallelConfig* cfg) {
  if (!a.hf_config.empty()) return InvalidArgument("give --weights DIR or --hf-config PATH, not both");
  if (!a.model.empty()) {
    return InvalidArgument(fmt::format("--weights DIR runs the model its config.json describes; drop '{}'", a.model));
  }
  if (a.layers > 0) {
    return InvalidArgument(
        fmt::format("--layers {} cuts a catalogue or --hf-config model; --weights runs every layer "
                    "its config.json declares",
                    a.layers));
  }
  Expected<HfCheckpoint> c = OpenHfCheckpoint(a.weights);
  if (!c) return c.error();
  if (cfg != nullptr) {
    SEAM_RETURN_IF_ERROR(CheckRunnable(c->model, *cfg));
    SEAM_RETURN_IF_ERROR(
        CheckRunMemory(c->model, *cfg, a.tokens, c->dtype, RunMemoryLimit(a.max_memory), GenerationSizeOf(a)));
  }
  if (a.backend == RunBackend::kRecord) return LoadedModel{c->model, Weights(), c->dtype};
  Expected<Weights> w = ReadHfWeights(*c);
  if (!w) return w.error();
  return LoadedModel{c->model, *std::move(w), c->dtype};
}

// The model to run: a catalogue entry, a config.json, or a checkpoint.
// Given a configuration, its sharding is checked before any weights are
// generated (a real-sized config's weights take minutes and gigabytes).
Expected<LoadedModel> ModelFor(const RunArgs& a, const ParallelConfig* cfg) {
  if (!a.weights.empty()) return LoadCheckpoint(a, cfg);
  if (a.model.empty() && a.hf_config.empty()) {
    return InvalidArgument("name a model (see `seam models`), or give --hf-config PATH or --weights DIR");
  }
  Expected<Model> m = ChooseModel(a.model, a.hf_config, a.layers);
  if (!m) return m.error();
  const Model& model = *m;
  if (cfg != nullptr) {
    SEAM_RETURN_IF_ERROR(CheckRunnable(model, *cfg));
  }
  // The record backend runs no kernels: a real-size model's plan is counted
  // without a byte of weights.
  if (a.backend == RunBackend::kRecord) return LoadedModel{model, Weights(), a.dtype};
  if (cfg != nullptr)
    SEAM_RETURN_IF_ERROR(
        CheckRunMemory(model, *cfg, a.tokens, a.dtype, RunMemoryLimit(a.max_memory), GenerationSizeOf(a)));
  Expected<Weights> w = GenerateWeights(model, a.seed, a.dtype);
  if (!w) return w.error();
  return LoadedModel{model, *std::move(w), a.dtype};
}

}  // namespace

Json RanksJson(const std::vector<CommStats>& stats) {
  Json ranks = Json::array();
  for (size_t r = 0; r < stats.size(); ++r) {
    const CommStats& s = stats[r];
    Json ops = Json::array();
    for (const auto& [kind, op] : s.ops) {
      ops.push_back({{"op", Name(kind)}, {"calls", op.calls}, {"bytes_sent", BytesSent(op.elements_sent)}});
    }
    ranks.push_back(
        {{"rank", r}, {"collectives", s.calls()}, {"bytes_sent", BytesSent(s.elements_sent())}, {"ops", ops}});
  }
  return ranks;
}

namespace {

std::string_view BackendName(RunBackend b) {
  switch (b) {
    case RunBackend::kThreads: return "threads";
    case RunBackend::kRecord: return "record";
    case RunBackend::kMpi: return "mpi";
  }
  return "threads";
}

// The reference's verdict on a run's output.
struct Verdict {
  double max_abs_diff = 0;
  bool same = false;
  bool within = false;  // within check.tolerance, where there is one
};

// A run's document (docs/schemas/run.schema.json); no verdict for the record
// backend, which moves no data.
Json RunJson(const RunArgs& a, const ParallelConfig& cfg, const PreparedRun& p, const RunOutput& out,
             const RunCheck& check, const std::optional<Verdict>& v) {
  const Model& m = p.loaded.model;
  const bool tolerant = v && check.tolerance > 0;
  return {{"seam_run", 1},
          {"kind", "single"},
          {"model", m.name},
          {"layers", m.num_layers},
          {"config", ConfigJson(cfg)},
          {"configuration", Describe(cfg)},
          {"tokens", p.batch.tokens()},
          {"requests", p.batch.requests.size()},
          {"dtype", Name(p.dtype)},
          {"seed", a.seed},
          {"fused", !a.unfused},
          {"backend", BackendName(a.backend)},
          {"mpi_mode",
           a.backend == RunBackend::kMpi ? Json(Name(a.mpi_mode.value_or(MpiMode::kCanonical))) : Json(nullptr)},
          {"ranks", RanksJson(out.ranks)},
          {"max_abs_diff", v ? Json(v->max_abs_diff) : Json(nullptr)},
          {"bit_identical", v ? Json(v->same) : Json(nullptr)},
          {"tolerance", tolerant ? Json(check.tolerance) : Json(nullptr)},
          {"within_tolerance", tolerant ? Json(v->within) : Json(nullptr)},
          {"tolerance_reason", tolerant ? Json(check.why_tolerance) : Json(nullptr)},
          {"seconds", out.seconds},
          {"dump", a.dump.empty() ? Json(nullptr) : Json(a.dump)}};
}

// --dump: the run's checkpoint, inputs and outputs.
Status Dump(const RunArgs& a, const PreparedRun& p, const RunOutput& out, const Tensor& ref) {
  return DumpRun(a.dump, p.loaded.model, p.loaded.weights, p.dtype, p.batch, out.hidden, ref,
                 {.force = a.force, .logits = out.logits.empty() ? nullptr : &out.logits});
}

}  // namespace

void PrintRanks(const std::vector<CommStats>& ranks) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    const CommStats& s = ranks[r];
    std::vector<std::string> ops;
    for (const auto& [kind, op] : s.ops) ops.push_back(fmt::format("{} {}", op.calls, Name(kind)));
    std::cout << fmt::format("  rank {}: {} collectives, {} sent ({})\n", r, s.calls(), Bytes(s.elements_sent()),
                             ops.empty() ? "none" : fmt::format("{}", fmt::join(ops, ", ")));
  }
}

namespace {}  // namespace

// The dtype is the checkpoint's with --weights, else --dtype.
Expected<PreparedRun> PrepareRun(const RunArgs& a, const ParallelConfig& cfg) {
  Expected<LoadedModel> loaded = ModelFor(a, &cfg);
  if (!loaded) return loaded.error();
  const Model& m = loaded->model;
  const Dtype dtype = loaded->dtype;
  Expected<Pipeline> plans = BindPipelineChecked(m, cfg, {.fuse = !a.unfused});
  if (!plans) return plans.error();
  Expected<Batch> batch = BatchOf(a, m.dims->vocab);
  if (!batch) return batch.error();
  // A generation's attention runs over every token each request feeds.
  if (a.backend != RunBackend::kRecord && a.generate > 0) {
    SEAM_RETURN_IF_ERROR(CheckRunSeconds(m, FedShape(RequestsOf(a, *batch)), a.max_seconds));
  } else if (a.backend != RunBackend::kRecord) {
    SEAM_RETURN_IF_ERROR(CheckRunSeconds(m, *batch, a.max_seconds));
  }
  return PreparedRun{*std::move(loaded), dtype, *std::move(plans), *std::move(batch)};
}

int ReportRun(const RunArgs& a, const ParallelConfig& cfg, const PreparedRun& p, const RunOutput& out,
              const RunCheck& check) {
  const Model& m = p.loaded.model;
  if (!a.json) {
    std::cout << fmt::format("{}  {}  {} tokens in {} requests  dtype={}  backend={}\n", ModelLabel(m.name, m.hidden),
                             Describe(cfg), p.batch.tokens(), p.batch.requests.size(), Name(p.dtype), check.backend);
  }
  if (!check.data) {
    if (a.json) {
      PrintJson(RunJson(a, cfg, p, out, check, std::nullopt));
    } else {
      std::cout << "bit-identical: n/a (the record backend moves no data)\n";
      PrintRanks(out.ranks);
    }
    return kOk;
  }
  Expected<Tensor> ref = RunReference(m, p.loaded.weights, p.batch, NumericsOf(cfg, p.dtype));
  if (!ref) return Fail(ref.error());
  const Tensor logits = ReferenceLogits(*ref, p.loaded.weights, p.dtype);
  if (Status s = CheckFinite(out, *ref, logits); !s.ok()) return Fail(s.error());
  // The final hidden states and the logits both, bit for bit.
  const bool same = out.hidden == *ref && out.logits == logits;
  const double diff = std::max(MaxAbsDiff(out.hidden, *ref), MaxAbsDiff(out.logits, logits));
  const bool within = check.tolerance > 0 && diff <= check.tolerance;
  if (a.json) {
    // The dump comes first: a document on stdout is a run that finished.
    if (!a.dump.empty()) {
      if (Status s = Dump(a, p, out, *ref); !s.ok()) return Fail(s.error());
    }
    PrintJson(RunJson(a, cfg, p, out, check, Verdict{.max_abs_diff = diff, .same = same, .within = within}));
    return same || within ? kOk : kFailedCheck;
  }
  std::cout << fmt::format("max |diff|: {:.3g}\nbit-identical: {}\n", diff, same ? "yes" : "no");
  if (check.tolerance > 0) {
    std::cout << fmt::format("within tolerance {:.3g}: {} ({})\n", check.tolerance, within ? "yes" : "no",
                             check.why_tolerance);
  }
  PrintRanks(out.ranks);
  std::cout << fmt::format("time: {:.1f} ms on {} ranks\n", out.seconds * 1e3, out.ranks.size());
  if (!a.dump.empty()) {
    if (Status s = Dump(a, p, out, *ref); !s.ok()) return Fail(s.error());
    std::cout << "dumped to " << a.dump << "\n";
  }
  return same || within ? kOk : kFailedCheck;
}

namespace {

// Every rank's calls written into `dir` as the engine's tools would write
// them: a new directory, filled beside it and moved into place whole.
Status WriteTraceFiles(const std::string& dir, TraceFormat format, const std::vector<RankTrace>& traces) {
  std::vector<std::pair<std::string, std::string>> files;  // name, text
  switch (format) {
    case TraceFormat::kJsonl:
      for (const RankTrace& r : traces) {
        files.emplace_back(fmt::format("seam-trace.{}.jsonl", r.rank), WriteJsonlTrace(std::span(&r, 1)));
      }
      break;
    case TraceFormat::kNccl: {
      std::vector<std::string> logs = WriteNcclLogs(traces, NcclVersion::k2_25);
      for (size_t r = 0; r < logs.size(); ++r) files.emplace_back(fmt::format("nccl.{}.log", r), std::move(logs[r]));
      break;
    }
    case TraceFormat::kTorch:
      for (const RankTrace& r : traces) {
        files.emplace_back(fmt::format("trace.{}.json", r.rank), WriteTorchTrace(r, static_cast<int>(traces.size())));
      }
      break;
  }
  return WriteNewDirectory(dir, files);
}

int RunOnce(const RunArgs& a, const ParallelConfig& cfg, Backend backend) {
  if (!a.write_trace.empty()) {
    if (Status s = CheckNewDirectory(a.write_trace, "--write-trace"); !s.ok()) return Fail(s.error());
  }
  Expected<PreparedRun> p = PrepareRun(a, cfg);
  if (!p) return Fail(p.error());
  Expected<RunOutput> out = RunPlans(
      p->loaded.model, p->plans, p->loaded.weights, p->batch,
      {.dtype = p->dtype, .backend = backend, .timeout_seconds = a.timeout, .log_calls = !a.write_trace.empty()});
  if (!out) return Fail(out.error());
  if (!a.write_trace.empty()) {
    if (Status s = WriteTraceFiles(a.write_trace, a.trace_format, TraceOfRun(*out, p->plans)); !s.ok()) {
      return Fail(s.error());
    }
    std::cerr << fmt::format("seam: every rank's calls written to {} ({})\n", a.write_trace, Name(a.trace_format));
  }
  return ReportRun(a, cfg, *p, *out, {.backend = std::string(Name(backend)), .data = backend != Backend::kRecord});
}

std::string_view OutcomeName(MatrixOutcome o) {
  switch (o) {
    case MatrixOutcome::kIdentical: return "identical";
    case MatrixOutcome::kDiffers: return "differs";
    case MatrixOutcome::kSkipped: return "skipped";
  }
  return "skipped";
}

// `run --matrix --format json`: every configuration's row, the pairs that
// differ by design and the totals; the exit code is the table's.
int PrintGridJson(const RunArgs& a, const Model& m, const std::vector<MatrixRow>& rows,
                  const std::vector<MatrixPair>& pairs) {
  int identical = 0, differs = 0, skipped = 0;
  Json configurations = Json::array();
  for (const MatrixRow& r : rows) {
    const bool ran = r.outcome != MatrixOutcome::kSkipped;
    (r.outcome == MatrixOutcome::kIdentical ? identical : r.outcome == MatrixOutcome::kDiffers ? differs : skipped)++;
    configurations.push_back({{"name", r.c.name},
                              {"config", ConfigJson(r.c.cfg)},
                              {"dtype", Name(r.c.dtype)},
                              {"fused", r.c.fuse},
                              {"outcome", OutcomeName(r.outcome)},
                              {"skip_reason", ran ? Json(nullptr) : Json(r.note)},
                              {"bit_identical", ran ? Json(r.outcome == MatrixOutcome::kIdentical) : Json(nullptr)},
                              {"max_abs_diff", ran ? Json(r.max_diff) : Json(nullptr)},
                              {"max_collectives", ran ? Json(r.max_calls) : Json(nullptr)},
                              {"max_bytes_sent", ran ? Json(BytesSent(r.max_elements)) : Json(nullptr)},
                              {"seconds", ran ? Json(r.seconds) : Json(nullptr)}});
  }
  bool pairs_ok = true;
  Json by_design = Json::array();
  for (const MatrixPair& p : pairs) {
    pairs_ok &= p.ok();
    by_design.push_back({{"name", p.name},
                         {"reason", p.reason},
                         {"max_abs_diff", p.max_diff},
                         {"tolerance", p.tolerance},
                         {"ok", p.ok()},
                         {"tokens", p.tokens},
                         {"rerouted", p.rerouted},
                         {"rerouted_max_abs_diff", p.rerouted_max_diff}});
  }
  PrintJson(
      {{"seam_run", 1},
       {"kind", "matrix"},
       {"model", m.name},
       {"layers", m.num_layers},
       {"tokens", a.tokens},
       {"requests", a.requests},
       {"seed", a.seed},
       {"full", a.full},
       {"generation",
        a.generate == 0
            ? Json(nullptr)
            : Json{{"tokens", a.generate}, {"chunk", a.chunk > 0 ? Json(a.chunk) : Json(nullptr)}, {"mixed", a.mixed}}},
       {"configurations", configurations},
       {"pairs", by_design},
       {"totals",
        {{"configurations", rows.size()}, {"identical", identical}, {"differs", differs}, {"skipped", skipped}}}});
  return differs == 0 && pairs_ok ? kOk : kFailedCheck;
}

int RunGrid(const RunArgs& a) {
  RunArgs fp32 = a;
  fp32.dtype = Dtype::kF32;                                // the grid runs both dtypes from fp32 weights
  Expected<LoadedModel> loaded = ModelFor(fp32, nullptr);  // each case is checked on its own
  if (!loaded) return Fail(loaded.error());
  const Model& m = loaded->model;
  MatrixOptions options{.tokens = a.tokens,
                        .requests = a.requests,
                        .seed = a.seed,
                        .generate = a.generate,
                        .serve = {.chunk = a.chunk, .mixed = a.mixed}};
  if (isatty(STDERR_FILENO)) {
    options.progress = [start = std::chrono::steady_clock::now()](size_t done, size_t total) {
      std::cerr << fmt::format("\r{}/{} configurations{}   ", done, total,
                               TimeLeft(start, static_cast<int64_t>(done), static_cast<int64_t>(total)))
                << (done == total ? "\n" : "") << std::flush;
    };
  }
  Expected<std::vector<MatrixRow>> rows = RunMatrix(m, MatrixCases(m, a.full), options);
  if (!rows) return Fail(rows.error());
  if (a.json) {
    Expected<std::vector<MatrixPair>> pairs = RunMatrixPairs(m, options);
    if (!pairs) return Fail(pairs.error());
    return PrintGridJson(a, m, *rows, *pairs);
  }
  int identical = 0, differs = 0, skipped = 0;
  std::cout << fmt::format("{:<50} {:>13} {:>10} {:>11} {:>11} {:>9}\n", "configuration", "bit-identical", "max|diff|",
                           "collectives", "sent", "time");
  for (const MatrixRow& r : *rows) {
    if (r.outcome == MatrixOutcome::kSkipped) {
      ++skipped;
      std::cout << fmt::format("{:<50} skipped: {}\n", r.c.name, r.note);
      continue;
    }
    const bool same = r.outcome == MatrixOutcome::kIdentical;
    (same ? identical : differs)++;
    std::cout << fmt::format("{:<50} {:>13} {:>10.3g} {:>11} {:>11} {:>7.1f}ms\n", r.c.name, same ? "yes" : "NO",
                             r.max_diff, r.max_calls, Bytes(r.max_elements), r.seconds * 1e3);
  }
  Expected<std::vector<MatrixPair>> pairs = RunMatrixPairs(m, options);
  if (!pairs) return Fail(pairs.error());
  bool pairs_ok = true;
  for (const MatrixPair& p : *pairs) {
    pairs_ok &= p.ok();
    std::cout << fmt::format("{:<50} not bit-identical by design: max|diff| {:.3g} {} tolerance {:.3g} ({})\n", p.name,
                             p.max_diff, p.ok() ? "within" : "OUTSIDE", p.tolerance, p.reason);
    if (p.rerouted > 0) {
      std::cout << fmt::format(
          "{:<50} {} of {} tokens took other experts after a near tie in a router "
          "(max|diff| {:.3g} there)\n",
          "", p.rerouted, p.tokens, p.rerouted_max_diff);
    }
  }
  std::cout << fmt::format("\n{} configurations: {} bit-identical to the reference, {} differ, {} skipped\n",
                           rows->size(), identical, differs, skipped);
  return differs == 0 && pairs_ok ? kOk : kFailedCheck;
}

}  // namespace

// What the request and generation flags may not say together.
Status CheckRequestFlags(const RunArgs& a) {
  if (!a.lengths.empty() && a.tokens_given) {
    return InvalidArgument("--requests P[:O][@A],... gives each prompt's length: drop --tokens");
  }
  if (!a.lengths.empty() && a.matrix) {
    return InvalidArgument("--matrix splits --tokens into --requests N: give a count, not each request's lengths");
  }
  if (a.generate == 0) {
    for (const RequestLengths& l : a.lengths) {
      if (l.output > 0 || l.arrival > 0) {
        return InvalidArgument("--requests gives output lengths or arrivals only with --generate N");
      }
    }
  }
  if (a.generate > 0 && a.backend == RunBackend::kRecord) {
    return InvalidArgument(
        "--generate picks each token from the logits a step computes; --backend record computes none");
  }
  return Status::Ok();
}

int RunRun(const RunArgs& given) {
  if (Status s = CheckEngineArgs(given.engine); !s.ok()) return Fail(s.error());
  if (Status s = CheckRequestFlags(given); !s.ok()) return Fail(s.error());
  if (given.matrix) return RunGrid(given);
  RunArgs a = given;
  if (!a.lengths.empty()) {
    a.tokens = 0;
    for (const RequestLengths& l : a.lengths) a.tokens += l.prompt;
  }
  Expected<ParallelConfig> cfg = ToConfig(a.flags);
  if (a.engine.engine) {  // the model and configuration the engine's flags imply
    Expected<EngineChoice> e = FromEngine(a.engine, a.layers);
    if (!e) return Fail(e.error());
    a.hf_config = e->hf_config;
    cfg = e->config;
  }
  if (!cfg) return Fail(cfg.error());
  if (!a.dump.empty() && a.backend != RunBackend::kMpi) {  // before the run whose results it will hold
    if (Status s = CheckDumpTarget(a.dump, a.force); !s.ok()) return Fail(s.error());
  }
  if (a.generate > 0 && a.backend != RunBackend::kMpi) return RunGeneration(a, *cfg);
  if (a.backend == RunBackend::kMpi && !a.write_trace.empty()) {
    return Fail(InvalidArgument("--write-trace writes the threads' or the record backend's calls, not MPI's"));
  }
  if (a.backend == RunBackend::kMpi) return RunOnMpi(a, *cfg);
  if (a.fault || a.mpi_mode) return Fail(InvalidArgument("--fault and --mpi-mode go with --backend mpi"));
  if (a.backend == RunBackend::kRecord && !a.dump.empty()) {
    return Fail(InvalidArgument("--dump writes a run's values; the record backend computes none"));
  }
  return RunOnce(a, *cfg, a.backend == RunBackend::kRecord ? Backend::kRecord : Backend::kThreads);
}

}  // namespace seam::cli
