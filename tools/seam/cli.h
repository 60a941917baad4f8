// The seam command line: flags shared by the commands, and the commands.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "seam/model.h"
#include "seam/topology.h"

namespace seam::cli {

// Exit codes: 0 ok, 1 a failed check, 2 bad input (flags, sizes, files,
// combinations the binder rejects).
constexpr int kOk = 0;
constexpr int kFailedCheck = 1;
constexpr int kBadInput = 2;

// The parallel flags of DESIGN §8, as typed on the command line.
struct ParallelFlags {
  int tp = 1;
  int attn_dp = 1;
  int dense_tp = 0;
  std::string moe = "tp";
  bool input_scattered = false;
  std::string reduction = "ar";
  int pp = 1;
  bool pp_given = false;  // without --pp, --pp-split names the ranks
  std::string pp_split;
};
void AddParallelFlags(CLI::App& cmd, ParallelFlags& f);
Expected<ParallelConfig> ToConfig(const ParallelFlags& f);

struct PlanArgs {
  std::string model;
  std::string hf_config;  // a Hugging Face config.json instead of a catalogue name
  ParallelFlags flags;
  int layers = 0;  // 0: the catalogue's depth
  std::string format = "table";
};
struct FileArgs {
  std::string first;
  std::string second;
  std::string format = "table";
};

struct RunArgs {
  std::string model;
  std::string hf_config;
  ParallelFlags flags;
  int layers = 0;
  int tokens = 32;
  int requests = 4;
  std::string dtype = "fp32";
  std::string backend = "threads";
  uint64_t seed = 1;
  std::string dump;
  std::string weights;
  bool matrix = false;
  bool full = false;     // --matrix: every split under every reduction
  bool unfused = false;  // bind add+norm as separate steps
};

struct SweepArgs {
  int max_stages = 5;
  int max_pp = 4;
  int jobs = 0;  // 0: one per hardware thread
};

int RunModels();
int RunSweep(const SweepArgs& a);
int RunRun(const RunArgs& a);
int RunPlan(const PlanArgs& a);
int RunShow(const FileArgs& a);
int RunDiff(const FileArgs& a);

// The model a command names: a catalogue entry or a config.json (exactly
// one of the two), cut to `layers` layers when that is above 0.
Expected<Model> ChooseModel(const std::string& name, const std::string& hf_config, int layers);

// Prints the error to stderr and returns its exit code.
int Fail(const Error& e);

}  // namespace seam::cli
