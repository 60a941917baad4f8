// seam: plans, checks and runs the communication at the seams of a transformer.
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli.h"
#include "seam/cost.h"
#include "seam/version.h"

int main(int argc, char** argv) {
  using namespace seam::cli;
  // Past a file-size limit (ulimit -f) a write fails with EFBIG instead of
  // killing the process, so a dump cleans up and says why.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"seam: plans, checks and runs the communication at the seams of a transformer"};
  // An engine's own flags follow -- (--engine); CLI11 never sees them.
  EngineFlags engine_args;
  const std::vector<std::string> command_line(argv, argv + argc);
  (void)SplitEngineArgs(argc, argv, engine_args);
  app.require_subcommand(1);
  app.set_version_flag("--version", "seam " SEAM_VERSION_STRING, "print seam's version and exit");

  bool models_json = false;
  CLI::App* models_cmd = app.add_subcommand("models", "list the model catalogue");
  AddReportFormatFlag(*models_cmd, models_json);

  PlanArgs plan;
  CLI::App* plan_cmd = app.add_subcommand("plan", "bind a model to a parallel configuration and print the plan");
  plan_cmd->add_option("model", plan.model, "a catalogue name (see `seam models`)");
  CLI::Option* plan_config = AddPath(*plan_cmd, "--hf-config", plan.hf_config,
                                     "plan the model a Hugging Face config.json describes, at its real size");
  AddParallelFlags(*plan_cmd, plan.flags);
  AddWireFlags(*plan_cmd, plan.wire);
  CLI::Option* plan_engine = AddEngineFlag(*plan_cmd, plan.engine);
  for (const char* flag : {"model", "--hf-config", "--act-dtype"}) plan_engine->excludes(plan_cmd->get_option(flag));
  for (CLI::Option* knob : plan.flags.options) plan_engine->excludes(knob);
  AddCount(*plan_cmd, "--layers", plan.layers, 1, kMaxLayerCount, "keep only the first N of the model's layers");
  (void)plan_config;
  CLI::Option* plan_format = AddFormatFlag(*plan_cmd, plan.format);
  CLI::Option* plan_summary =
      plan_cmd
          ->add_flag("--summary", plan.summary, "one row per kind of seam: its count, collectives and bytes per token")
          ->excludes(plan_format);
  CLI::Option* plan_emit = AddEmitFlag(*plan_cmd, plan.emit,
                                       "print the engine's launch line for the configuration (one per node) instead "
                                       "of the plan");
  plan_emit->excludes(plan_format)->excludes(plan_summary)->excludes(plan_cmd->get_option("--layers"));
  AddCount(*plan_cmd, "--nodes", plan.nodes, 1, kMaxGpus, "with --emit: the nodes the configuration spans")
      ->default_str("1")
      ->needs(plan_emit)
      ->excludes(plan_engine);

  FileArgs show;
  CLI::App* show_cmd = app.add_subcommand("show", "read a plan (JSON or text), verify it and print it");
  AddPath(*show_cmd, "file", show.first, "a plan written by `seam plan --format json` or `--format text`");
  AddFormatFlag(*show_cmd, show.format);

  RunArgs run;
  CLI::App* run_cmd =
      app.add_subcommand("run", "run the plan on simulated ranks and compare with the unsharded reference");
  run_cmd->add_option("model", run.model, "a catalogue name (see `seam models`)");
  CLI::Option* run_config = AddPath(*run_cmd, "--hf-config", run.hf_config,
                                    "run the model a Hugging Face config.json describes, at its real size");
  AddParallelFlags(*run_cmd, run.flags);
  CLI::Option* run_engine = AddEngineFlag(*run_cmd, run.engine);
  for (const char* flag : {"model", "--hf-config"}) run_engine->excludes(run_cmd->get_option(flag));
  for (CLI::Option* knob : run.flags.options) run_engine->excludes(knob);
  CLI::Option* layers =
      AddCount(*run_cmd, "--layers", run.layers, 1, kMaxLayerCount, "keep only the first N of the model's layers");
  AddCount(*run_cmd, "--tokens", run.tokens, 1, kMaxTokens, "tokens in the batch")->default_str("32");
  RequestsFlag run_requests;
  AddParsed(*run_cmd, "--requests", run_requests, ParseRequests,
            "N requests the tokens are split into, or each request's lengths P[:O][@A],... (prompt tokens, "
            "with --generate the tokens it generates, and the step it arrives at)")
      ->type_name("N|P[:O][@A],...")
      ->default_str("4");
  CLI::Option* generate = AddCount(*run_cmd, "--generate", run.generate, 1, kMaxTokens,
                                   "prefill each request, then decode N tokens greedily, every token checked against "
                                   "the reference's pass over the final sequence");
  AddCount(*run_cmd, "--chunk", run.chunk, 1, kMaxTokens, "prefill at most N prompt tokens a step")->needs(generate);
  run_cmd->add_flag("--mixed", run.mixed, "prefill chunks and decode tokens in the same step")->needs(generate);

  CLI::Option* dtype =
      AddParsed(*run_cmd, "--dtype", run.dtype, seam::ParseDtype, "storage dtype: fp32 or bf16")->default_str("fp32");
  CLI::Option* backend = AddParsed(*run_cmd, "--backend", run.backend, ParseRunBackend,
                                   "threads (data), record (calls and bytes only) or mpi (one process per rank, under "
                                   "mpirun)")
                             ->default_str("threads");
  CLI::Option* mpi_mode =
      AddParsed(*run_cmd, "--mpi-mode", run.mpi_mode, seam::ParseMpiMode,
                "with --backend mpi: canonical (bit-identical sums, the default) or native (MPI's own collectives)");
  CLI::Option* timeout = AddParsed(*run_cmd, "--timeout", run.timeout, ParseSeconds,
                                   "seconds a rank waits for another before the run fails (up to a day)")
                             ->default_str("60");
  CLI::Option* fault =
      AddParsed(*run_cmd, "--fault", run.fault, seam::ParseFault,
                "with --backend mpi, to test failure handling: RANK:KIND[@CALL], KIND throw, kill, hang or input");
  CLI::Option* max_memory =
      AddParsed(*run_cmd, "--max-memory", run.max_memory, ParseByteSize,
                "refuse a run estimated to need more, e.g. 16G (default: the memory available now)");
  AddParsed(*run_cmd, "--max-seconds", run.max_seconds, ParseSeconds,
            "refuse a run whose attention is estimated to take longer (default 600)")
      ->default_str("600");
  AddParsed(*run_cmd, "--seed", run.seed, ParseSeed, "seed of the weights and the batch (0 to 2^64-1)")
      ->default_str("1");
  CLI::Option* dump =
      AddPath(*run_cmd, "--dump", run.dump, "write a Hugging Face checkpoint, inputs and outputs into DIR");
  run_cmd->add_flag("--force", run.force, "with --dump: replace an earlier dump's files in DIR")->needs(dump);
  CLI::Option* weights =
      AddPath(*run_cmd, "--weights", run.weights, "run the Hugging Face checkpoint in DIR instead of a model name");
  CLI::Option* write_trace =
      AddPath(*run_cmd, "--write-trace", run.write_trace,
              "write every rank's collectives into the new directory DIR, as an engine's run would leave them");
  CLI::Option* run_trace_format =
      AddParsed(*run_cmd, "--trace-format", run.trace_format, ParseTraceFormat,
                "with --write-trace: seam (seam.trace's JSON lines, the default), nccl (NCCL 2.25's INFO log) or "
                "torch (a PyTorch profiler trace a rank)")
          ->needs(write_trace);
  CLI::Option* matrix =
      run_cmd->add_flag("--matrix", run.matrix, "run the model across a grid of configurations, one line each");
  CLI::Option* full =
      run_cmd->add_flag("--full", run.full, "with --matrix: every pipeline split under every reduction");
  CLI::Option* unfused = run_cmd->add_flag("--unfused", run.unfused, "bind add+norm as separate steps");
  // A flag the command would ignore is refused, naming both.
  full->needs(matrix);
  for (CLI::Option* knob : run.flags.options) matrix->excludes(knob);
  for (CLI::Option* o : {dump, backend, mpi_mode, fault, timeout, unfused, max_memory, write_trace, run_trace_format}) {
    matrix->excludes(o);
  }
  for (CLI::Option* o : {layers, dtype, run_config}) weights->excludes(o);
  // A generation is checked against its own teacher-forced reference on threads.
  for (CLI::Option* o : {write_trace, mpi_mode}) generate->excludes(o);
  AddReportFormatFlag(*run_cmd, run.json);

  SweepArgs sweep;
  CLI::App* sweep_cmd = app.add_subcommand("sweep", "bind and verify every small stack at every pipeline cut");
  sweep_cmd->add_option("--max-stages", sweep.max_stages, "stacks of 1..N stages")->capture_default_str();
  sweep_cmd->add_option("--max-pp", sweep.max_pp, "cuts into at most N pipeline ranks")->capture_default_str();
  AddCount(*sweep_cmd, "--jobs", sweep.jobs, 1, kMaxJobs, "worker threads (default: one per hardware thread)");
  AddParsed(*sweep_cmd, "--max-seconds", sweep.max_seconds, ParseSeconds,
            "refuse a sweep estimated to take longer (default 600)")
      ->default_str("600");
  AddReportFormatFlag(*sweep_cmd, sweep.json);

  CompareArgs compare;
  CLI::App* compare_cmd =
      app.add_subcommand("compare", "rank every configuration of a model on a number of GPUs by communication time");
  compare_cmd->add_option("model", compare.model, "a catalogue name (see `seam models`)");
  AddPath(*compare_cmd, "--hf-config", compare.hf_config, "the model a Hugging Face config.json describes");
  CLI::Option* compare_engine = AddEngineFlag(*compare_cmd, compare.engine);
  compare_engine->excludes(compare_cmd->get_option("model"))->excludes(compare_cmd->get_option("--hf-config"));
  AddCount(*compare_cmd, "--layers", compare.layers, 1, kMaxLayerCount, "keep only the first N of the model's layers");
  AddCount(*compare_cmd, "--gpus", compare.gpus, 1, kMaxGpus, "GPUs in all (default: every GPU of --nodes nodes)");
  AddCount(*compare_cmd, "--nodes", compare.nodes, 1, kMaxGpus, "nodes the GPUs are spread over")->default_str("1");
  AddPath(*compare_cmd, "--hardware", compare.hardware, "h100, h200, b200, gb200, pcie or a JSON file")
      ->default_str("h100");
  CLI::Option* batch =
      AddCount(*compare_cmd, "--batch", compare.ask.batch, 1, kMaxTokens,
               "sequences in a decode step (default 64; with --isl, --osl, --ttft or --tpot: the best that fits)");
  CLI::Option* prefill = AddCount(*compare_cmd, "--prefill", compare.ask.prefill, 1, kMaxTokens, "tokens of a prefill")
                             ->default_str("4096");
  CLI::Option* isl = AddCount(*compare_cmd, "--isl", compare.ask.isl, 1, kMaxTokens,
                              "a request's input tokens: its prefill, cached with half its output while it decodes");
  CLI::Option* osl = AddCount(*compare_cmd, "--osl", compare.ask.osl, 1, kMaxTokens,
                              "a request's output tokens: its prefill is charged once per that many");
  CLI::Option* ttft =
      AddParsed(*compare_cmd, "--ttft", compare.ask.ttft, ParseMillis, "target time to first token, ms");
  CLI::Option* tpot =
      AddParsed(*compare_cmd, "--tpot", compare.ask.tpot, ParseMillis, "target time per output token, ms");
  CLI::Option* context =
      AddCount(*compare_cmd, "--context", compare.ask.context, 1, kMaxTokens, "tokens each sequence caches")
          ->default_str("4096");
  // A request's lengths say the prefill and the cache; a fixed batch has no best to find.
  isl->excludes(prefill);
  for (CLI::Option* o : {isl, osl}) o->excludes(context);
  for (CLI::Option* o : {ttft, tpot}) o->excludes(batch);
  AddParsed(*compare_cmd, "--objective", compare.objective, seam::ParseObjective,
            "rank by throughput (output tokens a second per GPU; default), latency (per user) or ttft, each "
            "configuration at the batch that serves it best")
      ->default_str("throughput");
  compare_cmd->add_flag("--disaggregate", compare.disaggregate,
                        "also prefill and decode on separate pools of GPUs, each with its own layout, the KV cache "
                        "sent between them (needs --isl and --osl)");
  compare_cmd->add_flag("--pareto", compare.pareto,
                        "also the frontier of output per GPU against per user: every configuration at every batch "
                        "it holds, those no other beats on both");
  AddParsed(*compare_cmd, "--weight-dtype", compare.weight_bytes, seam::ParseWeightBytes,
            "the weights' dtype: bf16 (default), fp16, fp8 or fp32")
      ->default_str("bf16");
  AddWireFlags(*compare_cmd, compare.wire);
  AddParsed(*compare_cmd, "--max-seconds", compare.max_seconds, ParseSeconds,
            "refuse a comparison estimated to take longer (default 600)")
      ->default_str("600");
  AddCount(*compare_cmd, "--top", compare.top, 1, 100000, "configurations to print")->default_str("10");
  AddReportFormatFlag(*compare_cmd, compare.json);
  AddCount(*compare_cmd, "--explain", compare.explain, 1, 100000,
           "take the configuration ranked K apart: each pipeline rank's work by stage kind and its collectives");
  AddEmitFlag(*compare_cmd, compare.emit,
              "also the engine's launch lines of each configuration printed, or why it has none")
      ->excludes(compare_cmd->get_option("--layers"));

  CheckArgs check;
  CLI::App* check_cmd = app.add_subcommand(
      "check",
      "check what an engine's ranks ran (their NCCL log, profiler trace or seam.trace lines) against the plan");
  check_cmd->add_option("model", check.model, "a catalogue name (see `seam models`)");
  AddPath(*check_cmd, "--hf-config", check.hf_config, "the model a Hugging Face config.json describes");
  AddParallelFlags(*check_cmd, check.flags);
  AddWireFlags(*check_cmd, check.wire);
  CLI::Option* check_engine = AddEngineFlag(*check_cmd, check.engine);
  for (const char* flag : {"model", "--hf-config", "--act-dtype"}) check_engine->excludes(check_cmd->get_option(flag));
  for (CLI::Option* knob : check.flags.options) check_engine->excludes(knob);
  AddCount(*check_cmd, "--layers", check.layers, 1, kMaxLayerCount, "keep only the first N of the model's layers");
  check_cmd
      ->add_option_function<std::vector<std::string>>(
          "--trace",
          [&check](const std::vector<std::string>& paths) {
            for (const std::string& p : paths) {
              seam::Expected<std::string> path = ParsePath(p);
              if (!path) throw CLI::ValidationError("--trace", path.error().message);
              check.traces.push_back(*path);
            }
          },
          "the run's traces: every process's NCCL log, every rank's profiler trace, or seam.trace's files")
      ->type_name("FILE...")
      ->expected(1, static_cast<int>(kMaxRanks));
  AddParsed(*check_cmd, "--trace-format", check.format, ParseTraceFormat,
            "seam (seam.trace's JSON lines), nccl or torch (default: told from each file)");
  AddParsed(*check_cmd, "--tokens", check.tokens, ParseTokens,
            "the batch's rows, or each DP group's (12,11) (default: read from the trace's sizes)");
  AddReportFormatFlag(*check_cmd, check.json);

  FileArgs diff;
  CLI::App* diff_cmd = app.add_subcommand("diff", "compare two plans (JSON or text); exit 1 when they differ");
  AddPath(*diff_cmd, "first", diff.first, "a plan (JSON or text)");
  AddPath(*diff_cmd, "second", diff.second, "the plan to compare it with");
  AddReportFormatFlag(*diff_cmd, diff.json);
  AddPath(*diff_cmd, "--hardware", diff.hardware,
          "h100, h200, b200, gb200, pcie or a JSON file: the estimated decode step and prefill token are priced on it")
      ->default_str("h100");

  PolishHelp(app);
  // A first word that names no command is refused by name (CLI11 would
  // report a missing subcommand).
  const std::string first = argc > 1 ? argv[1] : "";
  const std::vector<std::string> commands = {"models", "plan", "show", "run", "sweep", "diff", "compare", "check"};
  if (!first.empty() && first[0] != '-' && std::find(commands.begin(), commands.end(), first) == commands.end()) {
    std::cerr << "seam: unknown command '" << argv[1]
              << "'; the commands are models, plan, show, run, sweep, diff, compare, check\n";
    return kBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ValidationError& e) {
    std::cerr << "seam: " << e.what() << "\n";  // a flag's value: the message names the flag
    return kBadInput;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return CheckOutput(app.exit(e));  // --help, --version
    // A flag seam does not have: the one meant, or the engine it belongs to.
    const std::string unknown = dynamic_cast<const CLI::ExtrasError*>(&e) ? UnknownFlags(app) : "";
    if (!unknown.empty()) {
      std::cerr << "seam: " << unknown.substr(0, unknown.size() - 1) << "\nRun with --help for more information.\n";
      return kBadInput;
    }
    std::cerr << "seam: " << e.what() << "\nRun with --help for more information.\n";
    return kBadInput;
  }
  run.command_line = command_line;
  plan.engine.args = run.engine.args = compare.engine.args = check.engine.args = engine_args.args;
  plan.engine.separated = run.engine.separated = compare.engine.separated = check.engine.separated =
      engine_args.separated;
  if (engine_args.separated && !plan_cmd->parsed() && !run_cmd->parsed() && !compare_cmd->parsed() &&
      !check_cmd->parsed()) {
    std::cerr << "seam: only plan, run, compare and check read an engine's flags after --\n";
    return kBadInput;
  }
  const auto command = [&] {
    if (models_cmd->parsed()) return RunModels(models_json);
    if (plan_cmd->parsed()) return RunPlan(plan);
    if (show_cmd->parsed()) return RunShow(show);
    if (sweep_cmd->parsed()) return RunSweep(sweep);
    if (run_cmd->parsed()) {
      run.requests = run_requests.count;
      run.lengths = run_requests.each;
      run.tokens_given = run_cmd->count("--tokens") > 0;
      return RunRun(run);
    }
    if (check_cmd->parsed()) return RunTraceCheck(check);
    if (compare_cmd->parsed()) {
      compare.nodes_given = compare_cmd->get_option("--nodes")->count() > 0;
      compare.weight_given = compare_cmd->get_option("--weight-dtype")->count() > 0;
      compare.act_given = compare_cmd->get_option("--act-dtype")->count() > 0;
      compare.ask.batch_given = compare_cmd->get_option("--batch")->count() > 0;
      return RunCompare(compare);
    }
    return RunDiff(diff);
  };
  try {
    return CheckOutput(command());
  } catch (const seam::InternalError& e) {
    std::cerr << "seam: " << e.what() << "\n";
    return kInternalError;
  } catch (const std::bad_alloc&) {
    return Fail(seam::OutOfMemory());  // a size the estimates let through but this machine could not hold
  }
}
