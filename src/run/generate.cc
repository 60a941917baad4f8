// Generation (seam/runtime/generate.h): the scheduled steps run one after
// another on every rank, each rank keeping its caches between them; the
// tokens each step generates feed the steps after it.
#include "seam/runtime/generate.h"

#include <fmt/format.h>

#include <chrono>

#include "run/rank_step.h"

namespace seam {
namespace {

// The first index of the row's largest logit (torch.argmax's choice).
int Greedy(const float* logits, int vocab) {
  int best = 0;
  for (int c = 1; c < vocab; ++c) {
    if (logits[c] > logits[best]) best = c;
  }
  return best;
}

// The rows fed for each request, as TeacherForced lays them out.
std::vector<int> RowOffsets(const std::vector<Request>& requests) {
  std::vector<int> offset;
  int at = 0;
  for (const Request& r : requests) {
    offset.push_back(at);
    at += r.fed();
  }
  offset.push_back(at);
  return offset;
}

}  // namespace

Status CheckGenerate(const Model& m, const Pipeline& plans, const Weights& w, const std::vector<Request>& requests,
                     const RunOptions& options) {
  SEAM_RETURN_IF_ERROR(CheckRun(m, plans, w, options));
  if (options.backend == Backend::kRecord) {
    return InvalidArgument(
        "generation picks each token from the logits a step computes; the record backend computes none");
  }
  if (options.log_calls) return InvalidArgument("a generation's calls are not kept: trace a single forward pass");
  for (size_t q = 0; q < requests.size(); ++q) {
    for (int id : requests[q].prompt) {
      if (id < 0 || id >= m.dims->vocab) {
        return InvalidArgument(
            fmt::format("request {}'s prompt holds token {}, outside the vocabulary of {}", q, id, m.dims->vocab));
      }
    }
  }
  return Status::Ok();
}

namespace {

void AddStats(CommStats& into, const CommStats& step) {
  for (const auto& [op, s] : step.ops) {
    into.ops[op].calls += s.calls;
    into.ops[op].elements_sent += s.elements_sent;
  }
}

// The step's batch: each part's tokens, placed at its request's position and group.
Batch StepBatch(const std::vector<Request>& requests, const Schedule& s, const std::vector<StepPart>& parts,
                const std::vector<std::vector<int>>& generated) {
  Batch b;
  for (const StepPart& p : parts) {
    const Request& r = requests[static_cast<size_t>(p.request)];
    const int prompt = static_cast<int>(r.prompt.size());
    std::vector<int> ids;
    for (int t = p.position; t < p.position + p.count; ++t) {
      ids.push_back(t < prompt ? r.prompt[static_cast<size_t>(t)]
                               : generated[static_cast<size_t>(p.request)][static_cast<size_t>(t - prompt)]);
    }
    b.requests.push_back(std::move(ids));
    b.places.push_back({p.request, p.position, s.group[static_cast<size_t>(p.request)]});
  }
  return b;
}

// Every rank a thread of this process, each keeping its own caches.
class ThreadSteps : public StepRunner {
 public:
  ThreadSteps(const Model& m, const Pipeline& plans, const Weights& w, const RunOptions& options)
      : m_(m),
        plans_(plans),
        w_(w),
        options_(options),
        caches_(static_cast<size_t>(WorldSize(plans.front().config()))) {}

  Expected<RunOutput> Step(const Batch& b) override {
    std::vector<RankOutput> ranks(caches_.size());
    Status status = RunOnRanks(
        options_.backend, static_cast<int>(caches_.size()),
        [&](int rank, Comm& comm) {
          const size_t r = static_cast<size_t>(rank);
          ranks[r] = exec::RunRankStep(m_, plans_, w_, b, options_, rank, comm, caches_[r]);
        },
        options_.timeout_seconds);
    if (!status.ok()) return status.error();
    return AssembleRun(m_, plans_.front().config(), b, std::move(ranks));
  }
  void Finish(int request) override {
    for (exec::RankCache& c : caches_) c.Drop(request);
  }
  int64_t CacheBytes() const override {
    int64_t held = 0;
    for (const exec::RankCache& c : caches_) held += c.bytes();
    return held;
  }

 private:
  const Model& m_;
  const Pipeline& plans_;
  const Weights& w_;
  RunOptions options_;
  std::vector<exec::RankCache> caches_;
};

}  // namespace

Expected<Generation> Serve(const Model& m, const ParallelConfig& cfg, const std::vector<Request>& requests,
                           const ServeOptions& serve, StepRunner& runner) {
  Expected<Schedule> schedule = ScheduleRequests(requests, cfg.attn_dp, serve);
  if (!schedule) return schedule.error();
  const auto start = std::chrono::steady_clock::now();
  Generation g;
  g.schedule = *std::move(schedule);
  g.tokens.resize(requests.size());
  const std::vector<int> offset = RowOffsets(requests);
  const int vocab = m.dims->vocab;
  g.hidden = Tensor(offset.back(), m.hidden);
  g.logits = Tensor(offset.back(), vocab);
  g.ranks.resize(static_cast<size_t>(WorldSize(cfg)));
  for (const std::vector<StepPart>& parts : g.schedule.steps) {
    const Batch b = StepBatch(requests, g.schedule, parts, g.tokens);
    const auto step_start = std::chrono::steady_clock::now();
    Expected<RunOutput> out = runner.Step(b);
    if (!out) return out.error();
    g.step_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count());
    SEAM_CHECK(out->logits.rows() == b.tokens(), "a step gave no logits to pick tokens from");
    for (size_t r = 0; r < out->ranks.size(); ++r) AddStats(g.ranks[r], out->ranks[r]);
    g.peak_cache_bytes = std::max(g.peak_cache_bytes, runner.CacheBytes());
    // Each part's rows into its request's, and a token where the part
    // reaches the end of what its request has been fed.
    int row = 0;
    for (const StepPart& p : parts) {
      const size_t q = static_cast<size_t>(p.request);
      const int prompt = static_cast<int>(requests[q].prompt.size());
      for (int j = 0; j < p.count; ++j, ++row) {
        const int to = offset[q] + p.position + j;
        std::copy(out->hidden.row(row), out->hidden.row(row) + m.hidden, g.hidden.row(to));
        std::copy(out->logits.row(row), out->logits.row(row) + vocab, g.logits.row(to));
      }
      if (p.position + p.count < prompt) continue;  // a chunk short of the prompt's end
      g.tokens[q].push_back(Greedy(out->logits.row(row - 1), vocab));
      if (static_cast<int>(g.tokens[q].size()) == requests[q].output) runner.Finish(p.request);
    }
  }
  g.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return g;
}

Expected<Generation> Generate(const Model& m, const Pipeline& plans, const Weights& w,
                              const std::vector<Request>& requests, const ServeOptions& serve,
                              const RunOptions& options) {
  SEAM_RETURN_IF_ERROR(CheckGenerate(m, plans, w, requests, options));
  ThreadSteps runner(m, plans, w, options);
  return Serve(m, plans.front().config(), requests, serve, runner);
}

GenerationSize SizeOf(const std::vector<Request>& requests) {
  GenerationSize g{.fed = 0, .requests = static_cast<int64_t>(requests.size())};
  for (const Request& r : requests) g.fed += r.fed();
  return g;
}

Batch FedShape(const std::vector<Request>& requests) {
  Batch b;
  for (const Request& r : requests) b.requests.push_back(std::vector<int>(static_cast<size_t>(r.fed()), 0));
  return b;
}

Batch TeacherForced(const std::vector<Request>& requests, const Generation& g) {
  Batch b;
  for (size_t q = 0; q < requests.size(); ++q) {
    std::vector<int> ids = requests[q].prompt;
    const std::vector<int>& made = g.tokens[q];
    ids.insert(ids.end(), made.begin(), made.end() - (made.empty() ? 0 : 1));
    b.requests.push_back(std::move(ids));
  }
  return b;
}

}  // namespace seam
