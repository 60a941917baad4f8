// golden: rewrites (or checks) the plan corpus in tests/golden/.
//
//   golden              bind every scenario and rewrite the corpus files
//   golden --check      compare the corpus with what the binder binds now
//   golden --dir DIR    the corpus folder (default: the source tree's)
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "corpus.h"
#include "seam/files.h"

namespace {

using namespace seam;
using namespace seam::golden;
namespace fs = std::filesystem;

constexpr size_t kShown = 5;         // differing leaves printed per scenario
constexpr int kScenariosShown = 20;  // differing scenarios printed per subject

std::vector<Recorded> BindSubject(const Subject& s) {
  const Model m = s.make();
  std::vector<Recorded> out;
  for (const Scenario& sc : ScenariosOf(s.name, m.num_layers)) out.push_back({sc.name, BindScenario(m, sc)});
  return out;
}

// The first differing scenarios and their first leaves; the count of all.
int Report(const std::vector<Recorded>& stored, const std::vector<Recorded>& bound) {
  int differing = 0;
  for (size_t i = 0; i < std::max(stored.size(), bound.size()); ++i) {
    std::vector<std::string> lines;
    if (i >= stored.size() || i >= bound.size() || stored[i].name != bound[i].name) {
      lines.push_back(fmt::format("scenario {}: stored {}, bound {}", i, i < stored.size() ? stored[i].name : "(none)",
                                  i < bound.size() ? bound[i].name : "(none)"));
    } else {
      for (const std::string& leaf : LeafDifferences(stored[i].outcome, bound[i].outcome, kShown)) {
        lines.push_back(fmt::format("{} / {}", bound[i].name, leaf));
      }
    }
    if (lines.empty()) continue;
    if (differing++ < kScenariosShown) {
      for (const std::string& l : lines) std::cout << l << "\n";
    }
  }
  if (differing > kScenariosShown) std::cout << fmt::format("... {} scenarios differ in all\n", differing);
  return differing;
}

Status WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.good()) return InvalidArgument(fmt::format("cannot write {}", path.string()));
  return Status::Ok();
}

// Rewrites one subject's file, then reads it back: the corpus must read back
// to exactly the plans it was written from.
Status Rewrite(const Subject& s, const fs::path& dir, size_t& bytes, size_t& scenarios) {
  const std::vector<Recorded> bound = BindSubject(s);
  const std::string text = WriteSubjectFile(s, bound);
  const fs::path path = dir / FileName(s);
  Expected<std::vector<Recorded>> back = ReadSubjectFile(text, path.string());
  if (!back) return back.error();
  if (Report(*back, bound) != 0) return FailedCheck(fmt::format("{} does not read back to its plans", path.string()));
  bytes += text.size();
  scenarios += bound.size();
  return WriteFile(path, text);
}

Status Check(const Subject& s, const fs::path& dir, int& differing) {
  const fs::path path = dir / FileName(s);
  Expected<std::string> text = ReadFileAtMost(path.string(), kMaxPlanBytes);
  if (!text) return text.error();
  Expected<std::vector<Recorded>> stored = ReadSubjectFile(*text, path.string());
  if (!stored) return stored.error();
  differing += Report(*stored, BindSubject(s));
  return Status::Ok();
}

// Files of subjects that no longer exist.
std::vector<fs::path> Stale(const fs::path& dir) {
  std::set<std::string> names;
  for (const Subject& s : Subjects()) names.insert(FileName(s));
  std::vector<fs::path> out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".plans" && !names.contains(e.path().filename().string())) out.push_back(e.path());
  }
  return out;
}

int Fail(const Error& e) {
  std::cerr << "golden: " << e.message << "\n";
  return e.code == ErrorCode::kFailedCheck ? 1 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "golden: the plan corpus (tests/golden/): every bound plan of every scenario, one file per subject.\n"
      "Without options it binds every scenario and rewrites the files (review the diff and commit it);\n"
      "with --check it compares them with what the binder binds now and prints the differing leaves.\n"
      "scripts/golden [--check] builds this program and runs it."};
  std::string dir = SEAM_GOLDEN_DIR;
  bool check = false;
  app.add_option("--dir", dir, "the corpus folder")->capture_default_str();
  app.add_flag("--check", check, "compare instead of rewriting; exit 1 on a difference");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "golden: " << e.what() << "\nRun with --help for more information.\n";
    return 2;
  }
  if (!fs::is_directory(dir)) return Fail(InvalidArgument(fmt::format("--dir {} is not a folder", dir)));

  if (check) {
    int differing = 0;
    for (const Subject& s : Subjects()) {
      if (Status st = Check(s, dir, differing); !st.ok()) return Fail(st.error());
    }
    for (const fs::path& p : Stale(dir)) {
      std::cout << fmt::format("{}: no such subject\n", p.string());
      ++differing;
    }
    if (differing == 0) std::cout << "the corpus matches the binder\n";
    return differing == 0 ? 0 : 1;
  }
  size_t bytes = 0;
  size_t scenarios = 0;
  for (const Subject& s : Subjects()) {
    if (Status st = Rewrite(s, dir, bytes, scenarios); !st.ok()) return Fail(st.error());
  }
  for (const fs::path& p : Stale(dir)) fs::remove(p);
  std::cout << fmt::format("wrote {} scenarios of {} subjects to {} ({:.1f} MB)\n", scenarios, Subjects().size(), dir,
                           static_cast<double>(bytes) / 1e6);
  return 0;
}
