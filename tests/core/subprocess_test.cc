// A helper program run as a filter: found on PATH, fed its input and read
// back without a shell, its failures reported as errors rather than signals.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>

#include "seam/subprocess.h"
#include "testing.h"

namespace seam {
namespace {

// Sets PATH for one test and puts the old value back.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& path) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    setenv("PATH", path.c_str(), 1);
  }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;
  ~ScopedPath() {
    if (old_) {
      setenv("PATH", old_->c_str(), 1);
    } else {
      unsetenv("PATH");
    }
  }

 private:
  std::optional<std::string> old_;
};

// The programs these tests run, by absolute path: they must not depend on
// the PATH the tests run under.
const std::string kSh = "/bin/sh";
const std::string kCat = "/bin/cat";

TEST(Subprocess, FindsAProgramOnPathAndNothingInAnEmptyDirectory) {
  const std::string empty = testing::FreshTestDir("empty");
  std::filesystem::create_directories(empty);
  {
    const ScopedPath path(empty + ":/bin");
    EXPECT_EQ(FindOnPath("sh"), kSh);
  }
  const ScopedPath path(empty);
  EXPECT_EQ(FindOnPath("sh"), std::nullopt);
}

TEST(Subprocess, AnEmptyPathEntryIsNotTheWorkingDirectory) {
  const ScopedPath path(":");
  EXPECT_EQ(FindOnPath("sh"), std::nullopt);
}

// More than a pipe holds both ways: writing and reading at once is what
// keeps seam and the program from each waiting on the other.
TEST(Subprocess, AFilterReadsAndWritesMoreThanAPipeHolds) {
  std::string input;
  for (int i = 0; input.size() < (size_t{4} << 20); ++i) input += std::to_string(i) + "\n";
  const Expected<std::string> out = RunFilter(kCat, {}, input);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, input);
}

TEST(Subprocess, AFailingProgramIsAnErrorQuotingItsStderr) {
  const Expected<std::string> out = RunFilter(kSh, {"-c", "echo 'no layout' >&2; exit 3"}, "");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(out.error().message, kSh + " failed (exit status 3): no layout");
}

// A program that exits without reading its input must not take seam down
// with SIGPIPE.
TEST(Subprocess, AProgramThatIgnoresItsInputIsNoSignal) {
  const Expected<std::string> out = RunFilter(kSh, {"-c", "echo done"}, std::string(size_t{8} << 20, 'x'));
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, "done\n");
}

TEST(Subprocess, AProgramThatCannotStartIsAnError) {
  const Expected<std::string> out = RunFilter("/nonexistent/dot", {"-Tsvg"}, "digraph {}");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(out.error().message.find("/nonexistent/dot"), std::string::npos) << out.error().message;
}

}  // namespace
}  // namespace seam
