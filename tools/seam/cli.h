// The seam command line: flags shared by the commands, and the commands.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seam/compare.h"
#include "seam/engine.h"
#include "seam/limits.h"
#include "seam/model.h"
#include "seam/model_source.h"
#include "seam/plan_io.h"
#include "seam/runtime/dump.h"
#include "seam/runtime/exec.h"
#include "seam/runtime/generate.h"
#include "seam/runtime/mpi_options.h"
#include "seam/topology.h"
#include "seam/wire.h"

namespace seam::cli {

// Exit codes (ExitStatusOf in seam/error.h): 0 ok, 1 a failed check, 2 bad
// input (flags, sizes, files, combinations the binder rejects), 3 a deadline
// exceeded, 4 an internal error.
constexpr int kOk = 0;
constexpr int kFailedCheck = 1;
constexpr int kBadInput = 2;
constexpr int kInternalError = 4;

// Every flag is parsed into its type as the command line is read: a bad
// value is exit 2 naming the flag, before any command runs.

// An option read by `parse` (text -> Expected<T>) as the command line is
// parsed; its error becomes "FLAG: message".
template <class T, class Parse>
CLI::Option* AddParsed(CLI::App& cmd, const std::string& flag, T& out, Parse parse, const std::string& help) {
  return cmd.add_option_function<std::string>(
      flag,
      [&out, parse, flag](const std::string& text) {
        auto v = parse(text);
        if (!v) throw CLI::ValidationError(flag, v.error().message);
        out = *std::move(v);
      },
      help);
}

// The ranges of the command line's numbers (seam/limits.h), checked as it is read.
using ::seam::kMaxGpus;
using ::seam::kMaxLayerCount;
using ::seam::kMaxRanks;
using ::seam::kMaxSeconds;
using ::seam::kMaxTokens;
using ::seam::kMinSeconds;
constexpr int kMaxJobs = 256;  // --jobs

// An integer in [lo, hi]; a seed (any uint64, digits only); seconds in
// [kMinSeconds, kMaxSeconds]; a path that is not empty.
Expected<int> ParseCount(std::string_view text, int lo, int hi);
Expected<uint64_t> ParseSeed(std::string_view text);
Expected<double> ParseSeconds(std::string_view text);
// Milliseconds (a latency target) as seconds: a number above 0, at most a day.
Expected<double> ParseMillis(std::string_view text);
Expected<std::string> ParsePath(std::string_view text);

inline CLI::Option* AddCount(CLI::App& cmd, const std::string& flag, int& out, int lo, int hi,
                             const std::string& help) {
  return AddParsed(
             cmd, flag, out, [lo, hi](std::string_view t) { return ParseCount(t, lo, hi); }, help)
      ->type_name("N");
}
inline CLI::Option* AddPath(CLI::App& cmd, const std::string& flag, std::string& out, const std::string& help) {
  return AddParsed(cmd, flag, out, ParsePath, help);
}

// The parallel flags of docs/design.md §8: one per knob of the table in
// seam/knobs.h, each written into `config` as the command line is read.
struct ParallelFlags {
  ParallelConfig config;
  std::vector<CLI::Option*> options;  // the knobs' flags, in table order
};
void AddParallelFlags(CLI::App& cmd, ParallelFlags& f);
// The configuration the flags describe, completed (a --pp not given is as
// many ranks as --pp-split names) and checked once (Validate).
Expected<ParallelConfig> ToConfig(const ParallelFlags& f);
CLI::Option* AddFormatFlag(CLI::App& cmd, PlanFormat& format);

// --format table|json of the commands that print a report rather than a plan
// (models, diff, run, sweep, compare): `json` is set for json.
CLI::Option* AddReportFormatFlag(CLI::App& cmd, bool& json);

// The JSON documents the commands write with --format json: one object on
// stdout, its first key naming the document and its version ("seam_run": 1);
// docs/schemas/ holds a JSON Schema for each.
using Json = nlohmann::ordered_json;
void PrintJson(const Json& doc);

// The wire dtypes of a plan's byte counts: --act-dtype (default bf16, as
// engines run) and --dispatch-dtype (default: the activation dtype).
struct WireFlags {
  WireDtype act = WireDtype::kBf16;
  std::optional<WireDtype> dispatch;
};
void AddWireFlags(CLI::App& cmd, WireFlags& f);
Expected<WireDtypes> ToWire(const WireFlags& f);

// Where `seam run` runs its ranks.
enum class RunBackend {
  kThreads,  // one thread per rank, data in memory
  kRecord,   // calls and bytes only
  kMpi,      // one process per rank, under mpirun
};
Expected<RunBackend> ParseRunBackend(std::string_view text);
// "24G", "512M", "1.5GiB", "1000000" -> bytes (K, M, G, T are powers of 1024).
Expected<int64_t> ParseByteSize(std::string_view text);

// `--engine NAME -- ARGS`: an engine's own command line instead of seam's
// model and parallel flags.
struct EngineFlags {
  std::optional<Engine> engine;
  std::string version;            // --engine-version ("" the newest)
  std::vector<std::string> args;  // what follows --
  bool separated = false;         // the command line had a --
};
// Takes everything after the first -- off the command line into `e.args`.
Status SplitEngineArgs(int& argc, char** argv, EngineFlags& e);
// --engine and -- go together.
Status CheckEngineArgs(const EngineFlags& e);

// The engine's launch read (seam/engine.h), with what seam read past said
// once on stderr.
Expected<EngineChoice> FromEngine(const EngineFlags& e, int layers);
CLI::Option* AddEngineFlag(CLI::App& cmd, EngineFlags& e);

// --emit sglang|vllm: the engine's launch line instead of seam's output.
CLI::Option* AddEmitFlag(CLI::App& cmd, std::optional<Engine>& emit, const std::string& what);
// The config a launch line names: --hf-config's (a catalogue model is a
// tiny shape no engine loads; --layers cuts what an engine runs whole).
Expected<std::string> EmitModelPath(const std::string& model, const std::string& hf_config, int layers);
// --quantization for weights of `weight_bytes` a parameter ("": the
// checkpoint's own), or why no launch flag gives them.
Expected<std::string> QuantizationFor(double weight_bytes, const CheckpointQuant& checkpoint, WireDtype act);
// The request's lines, the checkpoint's quantization read from its config.
Expected<EngineLines> EmitLines(const EmitRequest& r, const Model& m);
// Prints the lines (a "# node I of N" line before each of several), the notes on stderr.
int PrintLaunch(const EmitRequest& r, const Model& m);

struct PlanArgs {
  std::string model;
  std::string hf_config;  // a Hugging Face config.json instead of a catalogue name
  ParallelFlags flags;
  WireFlags wire;
  EngineFlags engine;
  int layers = 0;  // 0: the catalogue's depth
  PlanFormat format = PlanFormat::kTable;
  bool summary = false;  // one row per kind of seam instead of one per step
  std::optional<Engine> emit;
  int nodes = 1;  // --emit: the nodes the configuration spans
};
struct FileArgs {
  std::string first;
  std::string second;
  std::string hardware = "h100";  // diff: what the time estimate prices the collectives on
  PlanFormat format = PlanFormat::kTable;
  bool json = false;  // diff: --format json
};

// The formats `seam check --trace` reads and `seam run --write-trace` writes (seam/trace.h).
enum class TraceFormat { kJsonl, kNccl, kTorch };
std::string_view Name(TraceFormat f);  // "seam", "nccl", "torch"
Expected<TraceFormat> ParseTraceFormat(std::string_view text);

// One request of `--requests P[:O][@A],...`: its prompt's tokens, the
// tokens it generates (0: --generate's count) and the step it arrives at.
struct RequestLengths {
  int prompt = 0;
  int output = 0;
  int arrival = 0;
};
// `--requests`: a count that --tokens is split into, or each request's lengths.
struct RequestsFlag {
  int count = 4;
  std::vector<RequestLengths> each;  // empty for a count
};
Expected<RequestsFlag> ParseRequests(std::string_view text);

struct RunArgs {
  std::string model;
  std::string hf_config;
  ParallelFlags flags;
  EngineFlags engine;
  int layers = 0;
  int tokens = 32;
  int requests = 4;
  std::vector<RequestLengths> lengths;  // --requests P[:O][@A],...: each request's (requests, tokens follow)
  bool tokens_given = false;            // --tokens was on the command line
  int generate = 0;                     // --generate N: tokens each request generates greedily
  int chunk = 0;                        // --chunk C: prompt tokens a step prefills at most
  bool mixed = false;                   // --mixed: prefill chunks and decode tokens in one step
  Dtype dtype = Dtype::kF32;
  RunBackend backend = RunBackend::kThreads;
  uint64_t seed = 1;
  std::string dump;
  bool force = false;  // --dump into a directory holding an earlier dump
  std::string weights;
  bool matrix = false;
  bool full = false;                      // --matrix: every split under every reduction
  bool unfused = false;                   // bind add+norm as separate steps
  double timeout = 60;                    // seconds any rank waits for another
  std::optional<MpiMode> mpi_mode;        // --backend mpi only
  std::optional<Fault> fault;             // --backend mpi only: for testing fault handling
  int64_t max_memory = 0;                 // bytes a run may need; 0: what the system has available
  double max_seconds = 600;               // the attention a run may compute, in estimated seconds
  bool json = false;                      // --format json
  std::vector<std::string> command_line;  // as typed: --backend mpi hands it to seam-mpi
  std::string write_trace;                // a new directory for every rank's calls, in `trace_format`
  TraceFormat trace_format = TraceFormat::kJsonl;
};

// A run made ready on this process: the model and weights, the plans, the batch.
struct PreparedRun {
  LoadedModel loaded;
  Dtype dtype = Dtype::kF32;
  Pipeline plans;
  Batch batch;
};
Expected<PreparedRun> PrepareRun(const RunArgs& a, const ParallelConfig& cfg);

// How a run's output is judged: bit for bit, or (MPI's native sums) within a tolerance.
struct RunCheck {
  std::string backend;
  bool data = true;      // false: the record backend, nothing to compare
  double tolerance = 0;  // 0: bit for bit only
  std::string why_tolerance;
};
// `run --generate N`: prefill and decode on threads against the teacher-forced reference.
int RunGeneration(const RunArgs& a, const ParallelConfig& cfg);
// The requests a generation serves: the batch's prompts, each with its lengths.
std::vector<Request> RequestsOf(const RunArgs& a, const Batch& b);
// Each rank's collectives and bytes sent (run.schema.json's rank).
Json RanksJson(const std::vector<CommStats>& stats);
// Each rank's collectives and bytes sent, a line each ("  rank N: ...").
void PrintRanks(const std::vector<CommStats>& ranks);
// Prints a generation against the teacher-forced reference; returns the exit code.
int ReportGeneration(const RunArgs& a, const ParallelConfig& cfg, const PreparedRun& p,
                     const std::vector<Request>& requests, const Generation& g, std::string_view backend);
// Prints the run against the reference (and dumps it); returns the exit code.
int ReportRun(const RunArgs& a, const ParallelConfig& cfg, const PreparedRun& p, const RunOutput& out,
              const RunCheck& check);
// `seam run --backend mpi`: this process's rank of the job.
int RunOnMpi(const RunArgs& a, const ParallelConfig& cfg);

struct CompareArgs {
  std::string model;
  std::string hf_config;
  EngineFlags engine;
  int layers = 0;
  int gpus = 0;  // 0: every GPU of --nodes nodes
  int nodes = 1;
  bool nodes_given = false;  // --nodes on the command line (else an engine's placement flags say)
  std::string hardware = "h100";
  Ask ask;  // --batch, --prefill, --context, --isl, --osl, --ttft, --tpot
  Objective objective = Objective::kThroughput;
  bool pareto = false;
  bool disaggregate = false;
  double weight_bytes = 2;
  bool weight_given = false;  // --weight-dtype on the command line (else an engine's checkpoint says)
  WireFlags wire;
  bool act_given = false;  // --act-dtype on the command line (else an engine's --dtype says)
  int top = 10;
  bool json = false;
  double max_seconds = 600;  // the estimated time a comparison may take
  std::optional<Engine> emit;
  int explain = 0;  // the rank of the candidate to take apart (0: none)
};
int RunCompare(const CompareArgs& a);

struct SweepArgs {
  int max_stages = 5;
  int max_pp = 4;
  int jobs = 0;              // 0: one per hardware thread
  double max_seconds = 600;  // the estimated time a sweep may take
  bool json = false;         // --format json
};

// --tokens: the batch's rows, one count, or one for each DP group ("12,11").
Expected<std::vector<int>> ParseTokens(std::string_view text);

struct CheckArgs {
  std::string model;
  std::string hf_config;
  ParallelFlags flags;
  WireFlags wire;
  EngineFlags engine;
  int layers = 0;
  std::vector<std::string> traces;
  std::optional<TraceFormat> format;  // none: told from each file
  std::vector<int> tokens;            // empty: read from the trace
  bool json = false;
};
int RunTraceCheck(const CheckArgs& a);

int RunModels(bool json);
int RunSweep(const SweepArgs& a);
int RunRun(const RunArgs& a);
int RunPlan(const PlanArgs& a);
int RunShow(const FileArgs& a);
int RunDiff(const FileArgs& a);

// ", about N s left" at the rate since `start` (empty before the first or
// after the last item): what a progress line adds.
std::string TimeLeft(std::chrono::steady_clock::time_point start, int64_t done, int64_t total);

// --help's value names (never TEXT) and each command's examples.
void PolishHelp(CLI::App& app);
// A command's examples, one a line ("seam plan ..."): what --help prints.
std::string ExamplesOf(const std::string& command);
// For each flag the parsed command does not have, a line naming it and the
// flag meant ("seam plan has no flag --dp: did you mean --attn-dp?"); empty
// when no unknown word is a flag.
std::string UnknownFlags(const CLI::App& app);

// Prints the error to stderr and returns its exit code.
int Fail(const Error& e);
// Flushes standard output: a command whose output could not be written
// (a full disk, a closed stdout, /dev/full) says so and exits 2, not 0.
int CheckOutput(int code);
int ExitCodeOf(const Error& e);

}  // namespace seam::cli
