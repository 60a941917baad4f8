// The plan corpus (tests/golden/): every scenario binds to exactly the plans
// stored for it, leaf by leaf, and the corpus holds exactly the scenarios.
// A failure prints the scenario and its first differing leaves; after a
// deliberate change to a binding rule, rewrite the corpus with scripts/golden
// and review its diff.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "corpus.h"
#include "seam/files.h"

namespace seam::golden {
namespace {

constexpr size_t kLeavesShown = 5;     // differing leaves printed per scenario
constexpr size_t kScenariosShown = 8;  // differing scenarios printed per subject

// What differs between a subject's file and what the binder binds now, as
// the lines a failure prints; empty when they agree.
std::vector<std::string> Differences(const Subject& s, const std::vector<Recorded>& stored) {
  const Model m = s.make();
  const std::vector<Scenario> expected = ScenariosOf(s.name, m.num_layers);
  std::map<std::string, const Recorded*> by_name;
  for (const Recorded& r : stored) by_name.emplace(r.name, &r);
  std::vector<std::string> out;
  std::set<std::string> names;
  size_t differing = 0;
  for (const Scenario& sc : expected) {
    names.insert(sc.name);
    auto it = by_name.find(sc.name);
    if (it == by_name.end()) {
      out.push_back(fmt::format("{}: missing from the corpus", sc.name));
      continue;
    }
    const std::vector<std::string> leaves = LeafDifferences(it->second->outcome, BindScenario(m, sc), kLeavesShown);
    if (!leaves.empty() && differing++ < kScenariosShown) {
      for (const std::string& l : leaves) out.push_back(fmt::format("{} / {}", sc.name, l));
    }
  }
  for (const Recorded& r : stored) {
    if (!names.contains(r.name)) out.push_back(fmt::format("{}: in the corpus but no longer a scenario", r.name));
  }
  if (differing > kScenariosShown) out.push_back(fmt::format("... {} scenarios differ in all", differing));
  return out;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += "  " + l + "\n";
  return out;
}

TEST(Golden, EveryScenarioBindsToItsStoredPlansLeafByLeaf) {
  size_t scenarios = 0;
  for (const Subject& s : Subjects()) {
    const std::string path = fmt::format("{}/{}", SEAM_GOLDEN_DIR, FileName(s));
    Expected<std::string> text = ReadFileAtMost(path, kMaxPlanBytes);
    ASSERT_TRUE(text.ok()) << text.error().message << "\n(write the corpus with scripts/golden)";
    Expected<std::vector<Recorded>> stored = ReadSubjectFile(*text, path);
    ASSERT_TRUE(stored.ok()) << stored.error().message;
    scenarios += stored->size();
    const std::vector<std::string> d = Differences(s, *stored);
    EXPECT_TRUE(d.empty()) << s.name << ": the binder no longer binds what the corpus holds:\n"
                           << Joined(d) << "If the change is meant, rewrite with scripts/golden and review the diff.";
  }
  // The seed PR compares 3,928 scenarios; the corpus covers at least as many.
  EXPECT_GE(scenarios, 3928u);
}

TEST(Golden, TheCorpusHoldsOneFileForEachSubjectAndNoOther) {
  std::set<std::string> expected;
  for (const Subject& s : Subjects()) expected.insert(FileName(s));
  std::set<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator(SEAM_GOLDEN_DIR)) {
    if (e.path().filename() != "README.md") found.insert(e.path().filename().string());
  }
  EXPECT_EQ(found, expected);
}

// The scenario grid is what the corpus claims: every configuration name
// reads back to its configuration, and no two scenarios share a name.
TEST(Golden, ScenarioNamesAreUniqueAndReadBackToTheirConfiguration) {
  for (const Subject& s : Subjects()) {
    std::set<std::string> names;
    for (const Scenario& sc : ScenariosOf(s.name, s.make().num_layers)) {
      EXPECT_TRUE(names.insert(sc.name).second) << sc.name;
      Expected<ParallelConfig> cfg = ParseConfigName(std::string_view(sc.name).substr(s.name.size() + 1));
      ASSERT_TRUE(cfg.ok()) << sc.name << ": " << cfg.error().message;
      EXPECT_EQ(*cfg, sc.cfg) << sc.name;
    }
  }
}

TEST(Golden, TheGridCoversTheSeedConfigurations) {
  const std::vector<ParallelConfig> base = BaseConfigs();
  EXPECT_GE(base.size(), 23u);
  auto has = [&](auto pred) { return std::any_of(base.begin(), base.end(), pred); };
  for (int tp : {1, 2, 4, 8}) EXPECT_TRUE(has([&](const ParallelConfig& c) { return c.tp == tp; })) << tp;
  for (int tp : {4, 8}) {  // attention TP 1
    EXPECT_TRUE(has([&](const ParallelConfig& c) { return c.tp == tp && c.attn_dp == tp; })) << tp;
  }
  for (int tp : {2, 4, 8}) {
    EXPECT_TRUE(has([&](const ParallelConfig& c) { return c.tp == tp && c.input_scattered; })) << tp;
  }
  EXPECT_TRUE(
      has([](const ParallelConfig& c) { return c.moe == MoeMode::kA2a && c.attn_dp > 1 && c.dense_tp == c.tp; }));
  EXPECT_TRUE(
      has([](const ParallelConfig& c) { return c.attn_dp > 1 && c.dense_tp == c.attn_tp() && c.attn_tp() > 1; }));
  EXPECT_TRUE(has([](const ParallelConfig& c) { return c.attn_dp > 1 && c.dense_tp == 1; }));
  // Four layers: uncut and the three two-rank splits, under four reductions.
  EXPECT_EQ(ScenariosOf("x", 4).size(), base.size() * 4 * 4);
  // Six layers: an even and an uneven split.
  const std::vector<Scenario> six = ScenariosOf("x", 6);
  EXPECT_EQ(six.size(), base.size() * 4 * 3);
  EXPECT_EQ(six[1].name, "x tp1 ar pp2 3+3");
  EXPECT_EQ(six[2].name, "x tp1 ar pp2 2+4");
}

}  // namespace
}  // namespace seam::golden
