// seam/subprocess.h — a helper program run as a filter (Graphviz's `dot`):
// found on PATH, started without a shell, fed its standard input and read
// from its standard output.
//
//   std::optional<std::string> dot = FindOnPath("dot");
//   if (dot) Expected<std::string> svg = RunFilter(*dot, {"-Tsvg"}, graph_text);
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam {

// The first executable regular file named `program` in a directory of
// $PATH (empty entries skipped, so the working directory is never searched
// by accident; "/usr/bin:/bin" when PATH is unset); nothing when none is.
std::optional<std::string> FindOnPath(std::string_view program);

// Runs `path` with `args`, writes `input` to its standard input and returns
// what it wrote to its standard output. An error (InvalidArgument: the
// program is the user's environment, not their plan) when it cannot start or
// exits other than 0; the message names the program and quotes its stderr.
Expected<std::string> RunFilter(const std::string& path, const std::vector<std::string>& args, std::string_view input);

}  // namespace seam
