// The steps that serve a set of requests (seam/runtime/generate.h): each
// attention-DP group its own first-come-first-served queue, all groups
// stepping together.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "seam/runtime/generate.h"

namespace seam {
namespace {

struct Progress {
  int prefilled = 0;  // prompt tokens run
  int generated = 0;  // tokens generated
};

Status CheckRequests(const std::vector<Request>& requests, int attn_dp, const ServeOptions& options) {
  if (requests.empty()) return InvalidArgument("no requests to serve");
  if (attn_dp < 1) return InvalidArgument(fmt::format("{} attention-DP groups", attn_dp));
  if (options.chunk < 0) return InvalidArgument(fmt::format("--chunk {} must be at least 1", options.chunk));
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i];
    if (r.prompt.empty()) return InvalidArgument(fmt::format("request {} has an empty prompt", i));
    if (r.output < 1) return InvalidArgument(fmt::format("request {} generates {} tokens: at least 1", i, r.output));
    if (r.arrival < 0) return InvalidArgument(fmt::format("request {} arrives at step {}", i, r.arrival));
  }
  return Status::Ok();
}

// One group's parts of the step at `clock`: prefill parts of its waiting
// prompts within the budget, and (mixed, or when nothing waits) one decode
// token of each running request.
std::vector<StepPart> GroupStep(const std::vector<Request>& requests, const std::vector<int>& queue,
                                const std::vector<Progress>& progress, int clock, const ServeOptions& options) {
  std::vector<int> waiting, running;
  for (int q : queue) {
    const Request& r = requests[static_cast<size_t>(q)];
    const Progress& p = progress[static_cast<size_t>(q)];
    if (r.arrival > clock) continue;
    if (p.prefilled < static_cast<int>(r.prompt.size())) {
      waiting.push_back(q);
    } else if (p.generated < r.output) {
      running.push_back(q);
    }
  }
  std::vector<StepPart> decodes;
  for (int q : running) {
    const int prompt = static_cast<int>(requests[static_cast<size_t>(q)].prompt.size());
    decodes.push_back({q, prompt + progress[static_cast<size_t>(q)].generated - 1, 1});
  }
  if (!options.mixed && waiting.empty()) return decodes;
  constexpr int kNoLimit = std::numeric_limits<int>::max();
  int budget = options.chunk == 0 ? kNoLimit : options.chunk;
  if (options.mixed && budget != kNoLimit) budget -= static_cast<int>(decodes.size());
  std::vector<StepPart> parts;
  for (int q : waiting) {
    if (budget <= 0) break;
    const Progress& p = progress[static_cast<size_t>(q)];
    const int left = static_cast<int>(requests[static_cast<size_t>(q)].prompt.size()) - p.prefilled;
    const int count = std::min(left, budget);
    parts.push_back({q, p.prefilled, count});
    if (budget != kNoLimit) budget -= count;
  }
  if (options.mixed) parts.insert(parts.end(), decodes.begin(), decodes.end());
  return parts;
}

void Advance(const std::vector<Request>& requests, const std::vector<StepPart>& step, std::vector<Progress>& progress) {
  for (const StepPart& s : step) {
    Progress& p = progress[static_cast<size_t>(s.request)];
    const int prompt = static_cast<int>(requests[static_cast<size_t>(s.request)].prompt.size());
    if (p.prefilled < prompt) {
      p.prefilled += s.count;
      if (p.prefilled == prompt) p.generated = 1;  // the prompt's last logits give the first token
    } else {
      ++p.generated;
    }
  }
}

}  // namespace

Expected<Schedule> ScheduleRequests(const std::vector<Request>& requests, int attn_dp, const ServeOptions& options) {
  SEAM_RETURN_IF_ERROR(CheckRequests(requests, attn_dp, options));
  Schedule s;
  // Round robin in order of arrival, ties in request order.
  std::vector<int> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return requests[static_cast<size_t>(a)].arrival < requests[static_cast<size_t>(b)].arrival;
  });
  s.group.assign(requests.size(), 0);
  std::vector<std::vector<int>> queues(static_cast<size_t>(attn_dp));
  for (size_t k = 0; k < order.size(); ++k) {
    const int g = static_cast<int>(k % static_cast<size_t>(attn_dp));
    s.group[static_cast<size_t>(order[k])] = g;
    queues[static_cast<size_t>(g)].push_back(order[k]);
  }
  std::vector<Progress> progress(requests.size());
  const auto done = [&](size_t q) { return progress[q].generated >= requests[q].output; };
  int clock = 0;
  for (;;) {
    std::vector<StepPart> step;
    for (const std::vector<int>& queue : queues) {
      const std::vector<StepPart> parts = GroupStep(requests, queue, progress, clock, options);
      step.insert(step.end(), parts.begin(), parts.end());
    }
    if (step.empty()) {
      // Nothing runs until the next request arrives, or all are served.
      int next = std::numeric_limits<int>::max();
      for (size_t q = 0; q < requests.size(); ++q) {
        if (!done(q) && requests[q].arrival > clock) next = std::min(next, requests[q].arrival);
      }
      if (next == std::numeric_limits<int>::max()) break;
      clock = next;
      continue;
    }
    Advance(requests, step, progress);
    s.steps.push_back(std::move(step));
    s.clock.push_back(clock++);
  }
  return s;
}

}  // namespace seam
