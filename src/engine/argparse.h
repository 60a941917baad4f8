// A launch line read against an engine's flag table the way Python's
// argparse reads it (the parser both engines use): --flag VALUE and
// --flag=VALUE, a short flag's value attached (-O3), flags with several
// values, a repeated flag's last value, unique prefixes where the engine's
// parser takes them, vLLM's underscores, --no-FLAG for a boolean flag, the
// unknown words gathered into one "unrecognized arguments" error. A pasted
// command (environment assignments, then `python3 -m sglang.launch_server`
// or `vllm serve`) is read from its first word.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/table.h"

namespace seam::engine {

// One flag as the parser read it, in the order given.
struct ReadFlag {
  const FlagRow* row = nullptr;
  std::string spelled;              // as written (before = and any value)
  std::vector<std::string> values;  // none for a switch
  bool negated = false;             // --no-FLAG of a boolean flag
};

struct ReadLine {
  std::vector<std::pair<std::string, std::string>> env;  // NAME=value before the command
  std::vector<ReadFlag> flags;
  std::string positional;          // the one bare word an engine takes (vLLM's model), if given
  std::vector<std::string> notes;  // how argparse read what it read: prefixes, a command's words
};

// Splits a line as a POSIX shell would: blanks separate words, quotes and
// backslashes escape, a backslash-newline continues the line.
Expected<std::vector<std::string>> ShellWords(std::string_view line);

// Reads `words` against `table`. Errors are the engine's own (argparse's
// "unrecognized arguments", "expected one argument", "ambiguous option"),
// with what seam knows of the unknown flag.
Expected<ReadLine> ParseLine(const EngineTable& table, const std::vector<std::string>& words);

}  // namespace seam::engine
