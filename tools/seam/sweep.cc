// `seam sweep`: the exhaustive cut sweep with a progress bar and a summary.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli.h"
#include "seam/sweep.h"

namespace seam::cli {
namespace {

// The bar, and the time left at the rate so far.
void ProgressBar(int64_t done, int64_t total) {
  static const auto start = std::chrono::steady_clock::now();
  constexpr int kWidth = 40;
  const int filled = total == 0 ? kWidth : static_cast<int>(kWidth * done / total);
  const std::string left = TimeLeft(start, done, total);
  std::cerr << fmt::format("\r[{}{}] {:3}% {}/{}{}   ", std::string(static_cast<size_t>(filled), '#'),
                           std::string(static_cast<size_t>(kWidth - filled), '.'),
                           total == 0 ? 100 : 100 * done / total, done, total, left)
            << (done == total ? "\n" : "") << std::flush;
}

std::string Row(std::string_view name, const SweepCounts& c) {
  return fmt::format("{:<34} {:>7} {:>11} {:>15} {:>11}\n", name, c.stacks, c.cuts_bound, c.rejected_uncut,
                     c.violations);
}

double Percent(int64_t part, int64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// What each invariant compared and what it exempted, stacks and models together.
void PrintCoverage(const SweepReport& r) {
  SweepCounts c = r.totals;
  c += r.model_totals;
  const CutCoverage& a = c.away_from_cut;
  std::cout << "\nwhat each invariant compared\n";
  std::cout << fmt::format("  1-3, 6-10 (replay, structure, policy, bytes): {} steps of {} plans, none exempt\n",
                           c.steps_replayed, c.plans_verified);
  std::cout << fmt::format(
      "  4 (stages away from a cut bind as uncut): {} stage bindings, {} entries, computes and "
      "exits compared;\n",
      a.stages, a.parts);
  std::cout << fmt::format(
      "      {} parts of {} stage bindings differ at the cut by definition (a receiving rank's first "
      "entry, an exit before the handoff), checked by 1-3 and 6-10;\n",
      a.at_cut_parts, a.at_cut_stages);
  std::cout << fmt::format(
      "      {} parts of {} stage bindings differ because a cut's difference was handed on: "
      "exempt ({:.1f}% of stage bindings, {:.1f}% of parts)\n",
      a.handed_on_parts, a.handed_on_stages, Percent(a.handed_on_stages, a.stages),
      Percent(a.handed_on_parts, a.parts));
  std::cout << fmt::format(
      "  5 (a cut rejects as the uncut stack): {} cut outcomes, {} rejections compared by stage "
      "and rule, none exempt\n",
      c.cut_outcomes, c.rejections_compared);
}

Json CoverageJson(const CutCoverage& a) {
  return {{"stages", a.stages},
          {"parts", a.parts},
          {"at_cut_stages", a.at_cut_stages},
          {"at_cut_parts", a.at_cut_parts},
          {"handed_on_stages", a.handed_on_stages},
          {"handed_on_parts", a.handed_on_parts}};
}

Json CountsJson(const SweepCounts& c) {
  return {{"stacks", c.stacks},
          {"cuts_bound", c.cuts_bound},
          {"rejected_uncut", c.rejected_uncut},
          {"violations", c.violations},
          {"plans_verified", c.plans_verified},
          {"steps_replayed", c.steps_replayed},
          {"away_from_cut", CoverageJson(c.away_from_cut)},
          {"cut_outcomes", c.cut_outcomes},
          {"rejections_compared", c.rejections_compared}};
}

Json NamedCountsJson(const std::vector<std::pair<std::string, SweepCounts>>& rows) {
  Json out = Json::array();
  for (const auto& [name, counts] : rows) {
    Json row = {{"name", name}};
    row.update(CountsJson(counts));
    out.push_back(std::move(row));
  }
  return out;
}

// The document of docs/schemas/sweep.schema.json: the tables' rows and the
// coverage figures PrintCoverage prints.
Json SweepJson(const SweepArgs& a, int jobs, const SweepReport& r) {
  SweepCounts totals = r.totals;
  totals.stacks = r.stacks * r.configs;
  SweepCounts all = r.totals;
  all += r.model_totals;
  const CutCoverage& c = all.away_from_cut;
  return {{"seam_sweep", 1},
          {"max_stages", a.max_stages},
          {"max_pp", a.max_pp},
          {"jobs", jobs},
          {"stacks", r.stacks},
          {"configs", r.configs},
          {"per_config", NamedCountsJson(r.per_config)},
          {"totals", CountsJson(totals)},
          {"models", r.models},
          {"per_model", NamedCountsJson(r.per_model)},
          {"model_totals", CountsJson(r.model_totals)},
          {"coverage",
           {{"plans_verified", all.plans_verified},
            {"steps_replayed", all.steps_replayed},
            {"away_from_cut", CoverageJson(c)},
            {"handed_on_stages_percent", Percent(c.handed_on_stages, c.stages)},
            {"handed_on_parts_percent", Percent(c.handed_on_parts, c.parts)},
            {"cut_outcomes", all.cut_outcomes},
            {"rejections_compared", all.rejections_compared}}},
          {"cuts", r.totals.cuts_bound + r.model_totals.cuts_bound},
          {"violations", r.totals.violations + r.model_totals.violations},
          {"first_violations", r.violations},
          {"seconds", r.seconds}};
}

// Seconds the sweep takes on 2 cores at --max-pp 4, measured: each added
// stage multiplies the cuts by about 7 and the time by about 5.
double EstimatedSeconds(int max_stages, int max_pp, int jobs) {
  constexpr double kMeasured[] = {0.05, 0.05, 0.1, 0.2, 0.5, 2.2, 10, 50};  // 1..8 stages
  const double base = kMeasured[std::clamp(max_stages, 1, 8) - 1];
  return base * std::max(1.0, static_cast<double>(max_pp) / 4) * 2.0 / std::max(1, jobs);
}

}  // namespace

int RunSweep(const SweepArgs& a) {
  const int jobs = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Sizes out of range are the sweep's to refuse, with its own message.
  const bool sized = a.max_stages >= 1 && a.max_stages <= 8 && a.max_pp >= 1;
  if (const double estimate = EstimatedSeconds(a.max_stages, a.max_pp, jobs); sized && estimate > a.max_seconds) {
    return Fail(
        InvalidArgument(fmt::format("a sweep of stacks up to {} stages would take about {:.0f} s on {} jobs, "
                                    "more than --max-seconds {:g}; raise --max-seconds to run it",
                                    a.max_stages, estimate, jobs, a.max_seconds)));
  }
  SweepOptions options{.max_stages = a.max_stages, .max_pp = a.max_pp, .jobs = jobs};
  if (isatty(STDERR_FILENO)) options.progress = ProgressBar;
  Expected<SweepReport> report = Sweep(options);
  if (!report) return Fail(report.error());
  const SweepReport& r = *report;
  if (a.json) {
    PrintJson(SweepJson(a, jobs, r));
    return r.totals.violations + r.model_totals.violations == 0 ? kOk : kFailedCheck;
  }
  std::cout << fmt::format(
      "seam sweep: {} stacks of 1..{} stages over {{attention, mixer, dense FFN, sparse FFN}}, "
      "{} configurations, every cut into at most {} pipeline ranks\n\n",
      r.stacks, a.max_stages, r.configs, a.max_pp);
  std::cout << fmt::format("{:<34} {:>7} {:>11} {:>15} {:>11}\n", "configuration", "stacks", "cuts bound",
                           "rejected uncut", "violations");
  for (const auto& [name, counts] : r.per_config) std::cout << Row(name, counts);
  SweepCounts totals = r.totals;
  totals.stacks = r.stacks * r.configs;
  std::cout << Row("total", totals);
  if (r.models > 0) {
    std::cout << fmt::format(
        "\nthe catalogue's {} models under the same {} configurations, every cut into at most "
        "{} pipeline ranks at layer boundaries\n\n",
        r.models, r.configs, a.max_pp);
    std::cout << fmt::format("{:<34} {:>7} {:>11} {:>15} {:>11}\n", "model", "configs", "cuts bound", "rejected uncut",
                             "violations");
    for (const auto& [name, counts] : r.per_model) std::cout << Row(name, counts);
    std::cout << Row("total", r.model_totals);
  }
  const int64_t cuts = r.totals.cuts_bound + r.model_totals.cuts_bound;
  const int64_t violations = r.totals.violations + r.model_totals.violations;
  PrintCoverage(r);
  std::cout << fmt::format("\nchecked {} cuts in {:.2f} s on {} jobs\n", cuts, r.seconds, jobs);
  if (violations == 0) return kOk;
  std::cout << fmt::format("\n{} violations; the first {}:\n", violations, r.violations.size());
  for (const std::string& v : r.violations) std::cout << "  " << v << "\n";
  return kFailedCheck;
}

}  // namespace seam::cli
