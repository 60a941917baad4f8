#include "seam/sweep.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "sweep/cuts.h"

namespace seam {
namespace {

using sweep::SegmentTable;
using sweep::Subject;
using sweep::Unit;

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
  return {.name = letters, .num_layers = static_cast<int>(stages.size()), .hidden = 64, .layer = [stages](int i) {
            return std::vector{stages[static_cast<size_t>(i)]};
          }};
}

std::vector<uint8_t> Digits(const std::string& letters) {
  std::vector<uint8_t> out;
  for (char c : letters) out.push_back(static_cast<uint8_t>(kLetters.find(c)));
  return out;
}

Subject StackSubject(int64_t index) {
  const std::string letters = StackAt(index);
  return {"stack " + letters, StackModel(letters), Digits(letters)};
}

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
          {"tp4 input-scattered a2a", {.tp = 4, .moe = a2a, .input_scattered = true}},
          // Context parallelism: its attention rows are sequence shards, gathered to
          // every row for a TP FFN, sliced for an a2a MoE; it rejects every mixer.
          {"tp4 cp2", {.tp = 4, .cp = 2}},
          {"tp4 cp2 dense-tp2", {.tp = 4, .cp = 2, .dense_tp = 2}},
          {"tp8 attn-dp2 cp2 a2a dense-tp1", {.tp = 8, .attn_dp = 2, .cp = 2, .dense_tp = 1, .moe = a2a}},
          // Decode context parallelism changes only the attention's compute.
          {"tp8 dcp4", {.tp = 8, .dcp = 4}},
          {"tp8 attn-dp2 dcp2 a2a dense-tp1", {.tp = 8, .attn_dp = 2, .dcp = 2, .dense_tp = 1, .moe = a2a}}};
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
  // A work unit is every stack under one configuration (they share its
  // segment table), or one catalogue model under one configuration.
  const int64_t units = static_cast<int64_t>(configs.size() * (1 + models.size()));
  // Results per stack configuration, then per catalogue model.
  std::vector<Unit> per_unit(configs.size() + models.size());
  std::mutex mu;
  std::condition_variable finished;  // the progress bar's wait ends when the last worker does
  int workers_left = options.jobs;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  auto check = [&](size_t c, const Subject& subject, SegmentTable& table, sweep::Resolved& resolved, Unit& unit) {
    try {
      sweep::CheckCuts(configs[c], subject, options.max_pp, options.recheck, options.max_reported, table, resolved,
                       unit);
    } catch (const InternalError& e) {  // a binder bug: report it with its subject, keep sweeping
      resolved = {};                    // what it resolved may be partial
      ++unit.counts.violations;
      unit.violations.push_back(fmt::format("{} under {}: {}", subject.label, configs[c].name, e.what()));
    }
    ++unit.counts.stacks;
    ++done;
  };
  auto work = [&] {
    std::vector<Unit> mine(per_unit.size());
    for (int64_t i = next++; i < units; i = next++) {
      if (i < static_cast<int64_t>(configs.size())) {  // the large units first: the small ones even out the end
        const size_t c = static_cast<size_t>(i);
        SegmentTable table;
        sweep::Resolved resolved;
        for (int64_t j = 0; j < stacks; ++j) check(c, StackSubject(j), table, resolved, mine[c]);
        continue;
      }
      const size_t m = static_cast<size_t>(i) - configs.size();
      const size_t c = m % configs.size();
      const size_t model = m / configs.size();
      SegmentTable table;
      sweep::Resolved resolved;
      check(c, {"model " + models[model].name, models[model].make(), {}}, table, resolved,
            mine[configs.size() + model]);
    }
    const std::lock_guard<std::mutex> lock(mu);
    for (size_t u = 0; u < mine.size(); ++u) {
      per_unit[u].counts += mine[u].counts;
      for (std::string& v : mine[u].violations) per_unit[u].violations.push_back(std::move(v));
    }
    if (--workers_left == 0) finished.notify_all();
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < options.jobs; ++j) threads.emplace_back(work);
  if (options.progress) {
    std::unique_lock<std::mutex> lock(mu);
    while (!finished.wait_for(lock, std::chrono::milliseconds(100), [&] { return workers_left == 0; })) {
      lock.unlock();
      options.progress(done, total);
      lock.lock();
    }
  }
  for (std::thread& t : threads) t.join();
  if (options.progress) options.progress(total, total);

  SweepReport report{
      .stacks = stacks, .configs = static_cast<int64_t>(configs.size()), .models = static_cast<int64_t>(models.size())};
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
