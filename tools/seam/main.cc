// seam: plans, checks and runs the communication at the seams of a transformer.
#include <iostream>

#include "cli.h"

int main(int argc, char** argv) {
  using namespace seam::cli;
  CLI::App app{"seam: plans, checks and runs the communication at the seams of a transformer"};
  app.require_subcommand(1);

  app.add_subcommand("models", "list the model catalogue");

  PlanArgs plan;
  CLI::App* plan_cmd = app.add_subcommand("plan", "bind a model to a parallel configuration and print the plan");
  plan_cmd->add_option("model", plan.model, "a catalogue name (see `seam models`)");
  plan_cmd->add_option("--hf-config", plan.hf_config,
                       "plan the model a Hugging Face config.json describes, at its real size");
  AddParallelFlags(*plan_cmd, plan.flags);
  plan_cmd->add_option("--layers", plan.layers, "keep only the first N of the model's layers");
  AddFormatFlag(*plan_cmd, plan.format);

  FileArgs show;
  CLI::App* show_cmd = app.add_subcommand("show", "read a plan (JSON or text), verify it and print it");
  show_cmd->add_option("file", show.first, "a plan written by `seam plan --format json` or `--format text`")
      ->required();
  AddFormatFlag(*show_cmd, show.format);

  RunArgs run;
  CLI::App* run_cmd = app.add_subcommand("run", "run the plan on simulated ranks and compare with the unsharded reference");
  run_cmd->add_option("model", run.model, "a catalogue name (see `seam models`)");
  run_cmd->add_option("--hf-config", run.hf_config,
                      "run the model a Hugging Face config.json describes, at its real size");
  AddParallelFlags(*run_cmd, run.flags);
  run_cmd->add_option("--layers", run.layers, "keep only the first N of the model's layers");
  run_cmd->add_option("--tokens", run.tokens, "tokens in the batch")->capture_default_str();
  run_cmd->add_option("--requests", run.requests, "requests the tokens are split into")->capture_default_str();
  AddParsed(*run_cmd, "--dtype", run.dtype, seam::ParseDtype, "storage dtype: fp32 or bf16")->default_str("fp32");
  AddParsed(*run_cmd, "--backend", run.backend, ParseRunBackend,
            "threads (data), record (calls and bytes only) or mpi (one process per rank, under mpirun)")
      ->default_str("threads");
  AddParsed(*run_cmd, "--mpi-mode", run.mpi_mode, seam::ParseMpiMode,
            "with --backend mpi: canonical (bit-identical sums, the default) or native (MPI's own collectives)");
  run_cmd->add_option("--timeout", run.timeout, "seconds a rank waits for another before the run fails")
      ->capture_default_str();
  AddParsed(*run_cmd, "--fault", run.fault, seam::ParseFault,
            "with --backend mpi, to test failure handling: RANK:KIND[@CALL], KIND throw, kill, hang or input");
  AddParsed(*run_cmd, "--max-memory", run.max_memory, ParseByteSize,
            "refuse a run estimated to need more, e.g. 16G (default: the memory available now)");
  run_cmd->add_option("--seed", run.seed, "seed of the weights and the batch")->capture_default_str();
  run_cmd->add_option("--dump", run.dump, "write weights, inputs and outputs as safetensors into DIR");
  run_cmd->add_option("--weights", run.weights, "load a Hugging Face checkpoint DIR instead of generating");
  run_cmd->add_flag("--matrix", run.matrix, "run the model across a grid of configurations, one line each");
  run_cmd->add_flag("--full", run.full, "with --matrix: every pipeline split under every reduction");
  run_cmd->add_flag("--unfused", run.unfused, "bind add+norm as separate steps");

  SweepArgs sweep;
  CLI::App* sweep_cmd = app.add_subcommand("sweep", "bind and verify every small stack at every pipeline cut");
  sweep_cmd->add_option("--max-stages", sweep.max_stages, "stacks of 1..N stages")->capture_default_str();
  sweep_cmd->add_option("--max-pp", sweep.max_pp, "cuts into at most N pipeline ranks")->capture_default_str();
  sweep_cmd->add_option("--jobs", sweep.jobs, "worker threads (default: one per hardware thread)");

  FileArgs diff;
  CLI::App* diff_cmd = app.add_subcommand("diff", "compare two plans (JSON or text); exit 1 when they differ");
  diff_cmd->add_option("first", diff.first)->required();
  diff_cmd->add_option("second", diff.second)->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ValidationError& e) {
    std::cerr << "seam: " << e.what() << "\n";  // a flag's value: the message names the flag
    return kBadInput;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "seam: " << e.what() << "\nRun with --help for more information.\n";
    return kBadInput;
  }
  try {
    if (app.got_subcommand("models")) return RunModels();
    if (plan_cmd->parsed()) return RunPlan(plan);
    if (show_cmd->parsed()) return RunShow(show);
    if (sweep_cmd->parsed()) return RunSweep(sweep);
    if (run_cmd->parsed()) return RunRun(run);
    return RunDiff(diff);
  } catch (const seam::InternalError& e) {
    std::cerr << "seam: " << e.what() << "\n";
    return kInternalError;
  }
}
