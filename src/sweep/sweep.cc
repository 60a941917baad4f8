#include "seam/sweep.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "seam/bind.h"
#include "seam/pipeline.h"
#include "seam/verify.h"

namespace seam {
namespace {

constexpr std::string_view kLetters = "AMFE";

StageDecl DeclOf(char c) {
  switch (c) {
    case 'A': return AttentionStage();
    case 'M': return MixerStage();
    case 'F': return DenseFfnStage();
    default: return SparseFfnStage({.top_k = 2});
  }
}

// The stack with this index among all stacks of 1..max stages: first every
// stack of one stage, then of two, ...; letters are base-4 digits.
std::string StackAt(int64_t index) {
  int64_t count = 4;
  int length = 1;
  while (index >= count) {
    index -= count;
    count *= 4;
    ++length;
  }
  std::string s(static_cast<size_t>(length), 'A');
  for (int i = length - 1; i >= 0; --i) {
    s[static_cast<size_t>(i)] = kLetters[static_cast<size_t>(index % 4)];
    index /= 4;
  }
  return s;
}

int64_t StackCount(int max_stages) {
  int64_t total = 0;
  for (int64_t n = 1, c = 4; n <= max_stages; ++n, c *= 4) total += c;
  return total;
}

Model StackModel(const std::string& letters) {
  std::vector<StageDecl> stages;
  for (char c : letters) stages.push_back(DeclOf(c));
  return {.name = letters, .num_layers = static_cast<int>(stages.size()), .hidden = 64,
          .layer = [stages](int i) { return std::vector{stages[static_cast<size_t>(i)]}; }};
}

struct Unit {
  SweepCounts counts;
  std::vector<std::string> violations;
};

// What a work unit checks: a stack by its letters, or a catalogue model.
struct Subject {
  std::string label;  // "stack AFE", "model llama"
  Model model;
};

class Checker {
 public:
  Checker(const SweepConfig& c, const Subject& subject, size_t keep, Unit& out)
      : config_(c), subject_(subject), keep_(keep), out_(out) {}

  void Run(int max_pp) {
    const Model& model = subject_.model;
    const Expected<Plan> uncut = Bind(model, config_.cfg, 0);
    if (uncut) Verified("uncut", *uncut);
    if (!uncut) ++out_.counts.rejected_uncut;
    for (const std::vector<int>& split : LayerSplits(model.num_layers, max_pp)) {
      if (split.size() == 1) continue;  // the uncut stack
      ParallelConfig cfg = config_.cfg;
      cfg.pp = static_cast<int>(split.size());
      cfg.pp_split = split;
      const std::string where = fmt::format("cut {}", fmt::join(split, "+"));
      const Expected<Pipeline> cut = BindPipeline(model, cfg);
      ++out_.counts.cut_outcomes;
      if (uncut.ok() != cut.ok()) {
        Violate(where, fmt::format("invariant 5 (a cut rejects only what the uncut stack rejects): {}",
                                   uncut.ok() ? "the cut rejects: " + cut.error().message
                                              : "the cut binds what the uncut stack rejects: " + uncut.error().message));
        continue;
      }
      if (!cut) {
        SameRejection(where, uncut.error(), cut.error());
        continue;
      }
      ++out_.counts.cuts_bound;
      for (const Plan& p : *cut) CountSteps(p);
      Report(where, VerifyPipeline(*cut));
      Report(where, CompareWithUncut(*uncut, *cut, &out_.counts.away_from_cut));
    }
  }

 private:
  void Verified(const std::string& where, const Plan& plan) {
    CountSteps(plan);
    Report(where, Verify(plan));
  }

  void CountSteps(const Plan& plan) {
    ++out_.counts.plans_verified;
    for (const LinePlan& line : plan.lines()) {
      int64_t steps = static_cast<int64_t>(line.start.size() + line.end.steps.size() + line.end.head.size());
      for (const StagePlan& s : line.stages) steps += static_cast<int64_t>(s.entry.size() + s.compute.size() + s.exit.size());
      out_.counts.steps_replayed += steps;
    }
  }

  // Invariant 5, exactly: both reject, naming the same stage and rule.
  void SameRejection(const std::string& where, const Error& uncut, const Error& cut) {
    ++out_.counts.rejections_compared;
    if (uncut.code == cut.code && uncut.stage == cut.stage && uncut.rule == cut.rule) return;
    Violate(where, fmt::format("invariant 5 (a cut rejects only what the uncut stack rejects): the cut rejects stage {} "
                               "(rule: {}) but the uncut stack stage {} (rule: {})",
                               cut.stage, cut.rule, uncut.stage, uncut.rule));
  }

  void Report(const std::string& where, const std::vector<Violation>& violations) {
    for (const Violation& v : violations) Violate(where, Describe(v));
  }

  void Violate(const std::string& where, const std::string& what) {
    ++out_.counts.violations;
    if (out_.violations.size() < keep_) {
      out_.violations.push_back(fmt::format("{} under {} {}: {}", subject_.label, config_.name, where, what));
    }
  }

  const SweepConfig& config_;
  const Subject& subject_;
  size_t keep_;
  Unit& out_;
};

std::vector<SweepConfig> WithReductions(const std::vector<SweepConfig>& grid) {
  std::vector<SweepConfig> out;
  for (const SweepConfig& c : grid) {
    for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
      SweepConfig x = c;
      x.cfg.reduction = r;
      x.name = fmt::format("{} {}", c.name, Name(r));
      out.push_back(x);
    }
  }
  return out;
}

}  // namespace

SweepCounts& SweepCounts::operator+=(const SweepCounts& o) {
  stacks += o.stacks;
  cuts_bound += o.cuts_bound;
  rejected_uncut += o.rejected_uncut;
  violations += o.violations;
  plans_verified += o.plans_verified;
  steps_replayed += o.steps_replayed;
  away_from_cut += o.away_from_cut;
  cut_outcomes += o.cut_outcomes;
  rejections_compared += o.rejections_compared;
  return *this;
}

std::vector<SweepConfig> DefaultSweepConfigs() {
  const MoeMode a2a = MoeMode::kA2a;
  return {{"tp2", {.tp = 2}},
          {"tp4 attn-dp2", {.tp = 4, .attn_dp = 2}},
          {"tp4 a2a", {.tp = 4, .moe = a2a}},
          {"tp4 attn-dp2 dense-tp1", {.tp = 4, .attn_dp = 2, .dense_tp = 1}},
          {"tp2 input-scattered", {.tp = 2, .input_scattered = true}},
          {"tp8 attn-dp2 a2a dense-tp1", {.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = a2a}},
          // Attention TP of 1 under attention DP: rsv applies, rs+rsv differs from rs.
          {"tp4 attn-dp4", {.tp = 4, .attn_dp = 4}},
          {"tp8 attn-dp8 a2a", {.tp = 8, .attn_dp = 8, .moe = a2a}},
          // The dense FFN over the attention-TP group.
          {"tp4 attn-dp2 dense-tp2", {.tp = 4, .attn_dp = 2, .dense_tp = 2}},
          // a2a MoE with attention DP and the dense FFN over the whole TP group.
          {"tp8 attn-dp2 a2a", {.tp = 8, .attn_dp = 2, .moe = a2a}},
          {"tp4 input-scattered", {.tp = 4, .input_scattered = true}},
          {"tp8 input-scattered", {.tp = 8, .input_scattered = true}},
          // What input-scattered batches reject: an a2a MoE.
          {"tp4 input-scattered a2a", {.tp = 4, .moe = a2a, .input_scattered = true}}};
}

Expected<SweepReport> Sweep(const SweepOptions& options) {
  if (options.max_stages < 1 || options.max_stages > 8) {
    return InvalidArgument(fmt::format("--max-stages {} must be between 1 and 8", options.max_stages));
  }
  if (options.max_pp < 1) return InvalidArgument(fmt::format("--max-pp {} must be at least 1", options.max_pp));
  if (options.jobs < 1) return InvalidArgument(fmt::format("--jobs {} must be at least 1", options.jobs));
  for (const SweepConfig& c : options.configs) {
    if (Status s = Validate(c.cfg); !s.ok()) return InvalidArgument(c.name + ": " + s.error().message);
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<SweepConfig> configs = WithReductions(options.configs);
  const int64_t stacks = StackCount(options.max_stages);
  const std::vector<CatalogueEntry> models = options.catalogue ? Catalogue() : std::vector<CatalogueEntry>{};
  const int64_t subjects = stacks + static_cast<int64_t>(models.size());
  const int64_t total = subjects * static_cast<int64_t>(configs.size());
  // Results per stack configuration, then per catalogue model.
  std::vector<Unit> per_unit(configs.size() + models.size());
  std::mutex mu;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  auto work = [&] {
    std::vector<Unit> mine(per_unit.size());
    for (int64_t i = next++; i < total; i = next++) {
      const size_t c = static_cast<size_t>(i / subjects);
      const int64_t j = i % subjects;
      const size_t model = static_cast<size_t>(j - stacks);
      Unit& unit = j < stacks ? mine[c] : mine[configs.size() + model];
      const Subject subject = j < stacks ? Subject{"stack " + StackAt(j), StackModel(StackAt(j))}
                                         : Subject{"model " + models[model].name, models[model].make()};
      try {
        Checker(configs[c], subject, options.max_reported, unit).Run(options.max_pp);
      } catch (const InternalError& e) {  // a binder bug: report it with its subject, keep sweeping
        ++unit.counts.violations;
        unit.violations.push_back(fmt::format("{} under {}: {}", subject.label, configs[c].name, e.what()));
      }
      ++unit.counts.stacks;
      ++done;
    }
    const std::lock_guard<std::mutex> lock(mu);
    for (size_t u = 0; u < mine.size(); ++u) {
      per_unit[u].counts += mine[u].counts;
      for (std::string& v : mine[u].violations) per_unit[u].violations.push_back(std::move(v));
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < options.jobs; ++j) threads.emplace_back(work);
  while (options.progress && done < total) {
    options.progress(done, total);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (std::thread& t : threads) t.join();
  if (options.progress) options.progress(total, total);

  SweepReport report{.stacks = stacks, .configs = static_cast<int64_t>(configs.size()),
                     .models = static_cast<int64_t>(models.size())};
  for (size_t u = 0; u < per_unit.size(); ++u) {
    const bool stack = u < configs.size();
    (stack ? report.totals : report.model_totals) += per_unit[u].counts;
    (stack ? report.per_config : report.per_model)
        .emplace_back(stack ? configs[u].name : models[u - configs.size()].name, per_unit[u].counts);
    for (const std::string& v : per_unit[u].violations) {
      if (report.violations.size() < options.max_reported) report.violations.push_back(v);
    }
  }
  report.totals.stacks = stacks;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace seam
