// Running programs from tests: a shell command with its output captured,
// each test in its own directory.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace seam::testing {

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// A fixture with a fresh directory per test, so tests may run in parallel.
class InTempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "seam_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << tmpl;
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string PathOf(const std::string& name) const { return dir_ + "/" + name; }

  // `program args...` through /bin/sh, stdin empty, stdout and stderr captured.
  Result Shell(const std::string& program, const std::vector<std::string>& args) const {
    std::string cmd = program;
    for (const std::string& a : args) cmd += " " + Quote(a);
    const std::string out = PathOf("stdout.txt");
    const std::string err = PathOf("stderr.txt");
    cmd += " </dev/null >" + Quote(out) + " 2>" + Quote(err);
    const int status = std::system(cmd.c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = ReadText(out);
    r.err = ReadText(err);
    return r;
  }

  std::string dir_;
};

}  // namespace seam::testing
