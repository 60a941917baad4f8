// seam/runtime/generate.h — runs shaped like serving: each request's prompt
// prefilled, whole or in chunks, then one token a step decoded greedily from
// the LM head's logits, every rank keeping its part of each request's cache.
//
// The steps are scheduled before anything runs, from the requests' lengths
// alone (greedy tokens never change when a request ends): requests go to
// attention-DP groups round robin in order of arrival (SGLang's default
// --load-balance-method round_robin), each group schedules its own requests
// first come first served, and every group runs every step, with no rows
// where it has nothing to do (SGLang's idle batch), so every rank joins every
// collective. A step is
//   - without --mixed (SGLang's default): a prefill of the waiting prompts,
//     at most `chunk` tokens of them (the last cut short and continued at
//     the head of the next prefill), or, when none waits, one decode token
//     of every running request;
//   - with --mixed (SGLang's --enable-mixed-chunk, and as vLLM's scheduler
//     batches): the prefill parts and then one decode token of every running
//     request together, the decodes taking their share of the chunk first.
//
//   Expected<Generation> g = Generate(model, plans, weights, requests, {.chunk = 8, .mixed = true}, {});
//   Batch fed = TeacherForced(requests, *g);  // the reference runs it whole
#pragma once

#include <vector>

#include "seam/runtime/exec.h"

namespace seam {

struct Request {
  std::vector<int> prompt;  // token ids, at least one
  int output = 1;           // tokens to generate, at least one
  int arrival = 0;          // the step at which it arrives
  // The tokens it feeds the model: its prompt, then every token it
  // generates but the last.
  int fed() const { return static_cast<int>(prompt.size()) + output - 1; }
};

// What the estimates of seam/runtime/exec.h read of a generation: its
// requests and the tokens they feed (GenerationSize), and the shape
// attention runs over, each request as long as it feeds (CheckRunSeconds).
GenerationSize SizeOf(const std::vector<Request>& requests);
Batch FedShape(const std::vector<Request>& requests);

struct ServeOptions {
  int chunk = 0;  // most prompt tokens a step prefills (with --mixed, decodes count too); 0: no limit
  bool mixed = false;
};

// A request's tokens [position, position + count) in one step.
struct StepPart {
  int request = 0;
  int position = 0;
  int count = 0;
  bool operator==(const StepPart&) const = default;
};

struct Schedule {
  std::vector<int> group;                    // per request: its attention-DP group
  std::vector<std::vector<StepPart>> steps;  // each step's parts, group by group, prefills before decodes
  std::vector<int> clock;                    // per step: the time it runs at (arrivals count in it)
};

// The steps that serve `requests` on `attn_dp` groups; bad input (an empty
// prompt, no output, a negative arrival or chunk) is refused.
Expected<Schedule> ScheduleRequests(const std::vector<Request>& requests, int attn_dp, const ServeOptions& options);

struct Generation {
  Schedule schedule;
  std::vector<std::vector<int>> tokens;  // per request: the tokens it generated, in order
  // Every token fed to the model, in the rows of TeacherForced: its final
  // hidden state and its logits, from the step that ran it.
  Tensor hidden;
  Tensor logits;
  std::vector<CommStats> ranks;      // per global rank, over every step
  int64_t peak_cache_bytes = 0;      // the most every rank's caches held at once, together
  std::vector<double> step_seconds;  // each step's wall time, its ranks together
  double seconds = 0;
};

// How a generation's steps reach its ranks: threads in this process, or
// this process's rank of an MPI job (seam/runtime/mpi.h). Every process
// that serves sees every step's rows and picks the same tokens.
class StepRunner {
 public:
  virtual ~StepRunner() = default;
  // One step on every rank: its rows' final hidden states and logits in the
  // batch's order (AssembleRun), and each rank's stats.
  virtual Expected<RunOutput> Step(const Batch& b) = 0;
  // The request has generated its last token: its caches may go.
  virtual void Finish(int request) = 0;
  // What every rank's caches hold now, together.
  virtual int64_t CacheBytes() const = 0;
};

// Serves `requests` step by step through `runner`.
Expected<Generation> Serve(const Model& m, const ParallelConfig& cfg, const std::vector<Request>& requests,
                           const ServeOptions& serve, StepRunner& runner);

// Serves `requests` on threads, one per rank.
Expected<Generation> Generate(const Model& m, const Pipeline& plans, const Weights& w,
                              const std::vector<Request>& requests, const ServeOptions& serve,
                              const RunOptions& options);
// What Generate checks before it serves (the MPI path checks it too).
Status CheckGenerate(const Model& m, const Pipeline& plans, const Weights& w, const std::vector<Request>& requests,
                     const RunOptions& options);

// What the reference runs to check a generation: each request's prompt and
// every token it generated but the last (the tokens fed to the model), as
// one whole request each, in request order.
Batch TeacherForced(const std::vector<Request>& requests, const Generation& g);

}  // namespace seam
