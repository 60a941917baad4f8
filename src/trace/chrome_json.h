// A Chrome trace read for a few of its events (internal to the profiler
// trace reader). A profiler trace runs to hundreds of megabytes, nearly all
// of it events a reader of collectives has no use for; this reads the text
// once, as strictly as core/strict_json.h does (a key twice in one object or
// nesting past kMaxJsonDepth is an error), and keeps only the events `keep`
// accepts and the "distributedInfo" trailer, so memory follows what is kept,
// not the file.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seam {

struct ChromeTrace {
  // The trace's "distributedInfo" (null where it has none).
  nlohmann::json distributed_info;
  // Each kept event with its place among all the trace's events, from 1.
  std::vector<std::pair<int64_t, nlohmann::json>> events;
  std::string error;  // why the text was refused; empty where it was read
};

// The trace as torch.profiler and Kineto write it, an object whose
// "traceEvents" is the list of events, or a bare list of events; anything
// else is refused.
ChromeTrace ReadChromeTrace(std::string_view text, const std::function<bool(const nlohmann::json&)>& keep);

}  // namespace seam
