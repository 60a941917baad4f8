#include "engine/flags.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <set>

namespace seam::engine {
namespace {

constexpr int kMaxSize = 65536;  // the same bound as seam's own parallel flags

const FlagSpec* Find(const std::vector<FlagSpec>& flags, std::string_view name) {
  for (const FlagSpec& f : flags) {
    for (std::string_view n : f.names) {
      if (n == name) return &f;
    }
  }
  return nullptr;
}

Error Unknown(Engine engine, std::string_view name) {
  return InvalidArgument(fmt::format(
      "unknown {} flag '{}': seam reads the flags that shape the parallel layout and the common serving flags it "
      "can read past (see the README's engine table); remove it or check its spelling",
      DisplayName(engine), name));
}

}  // namespace

std::function<Status(EngineLaunch&, std::string_view)> SetSize(int EngineLaunch::*field, std::string_view flag) {
  return [field, flag](EngineLaunch& l, std::string_view v) -> Status {
    int n = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || n < 1 || n > kMaxSize) {
      return InvalidArgument(fmt::format("{}: '{}' is not an integer from 1 to {}", flag, v, kMaxSize));
    }
    l.*field = n;
    return Status::Ok();
  };
}

std::function<Status(EngineLaunch&, std::string_view)> SetText(std::string EngineLaunch::*field) {
  return [field](EngineLaunch& l, std::string_view v) -> Status {
    l.*field = std::string(v);
    return Status::Ok();
  };
}

std::function<Status(EngineLaunch&, std::string_view)> SetSwitch(bool EngineLaunch::*field) {
  return [field](EngineLaunch& l, std::string_view) -> Status {
    l.*field = true;
    return Status::Ok();
  };
}

Expected<EngineLaunch> ReadFlags(Engine engine, const std::vector<FlagSpec>& flags,
                                 const std::vector<std::string>& args,
                                 const std::function<Status(EngineLaunch&, std::string_view)>& positional) {
  EngineLaunch l{.engine = engine};
  std::set<const FlagSpec*> seen;
  std::optional<std::string_view> bare;  // the positional word, applied last: it wins over its flag
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (!arg.starts_with("-")) {
      if (positional && i == 0) {
        bare = arg;
        continue;
      }
      return InvalidArgument(
          fmt::format("{} flags: '{}' is not a flag (every value follows its flag)", DisplayName(engine), arg));
    }
    const size_t eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq);
    const FlagSpec* f = Find(flags, name);
    if (f == nullptr) return Unknown(engine, name);
    if (!seen.insert(f).second) {
      return InvalidArgument(
          fmt::format("{} is given twice; give each {} flag once", f->names.front(), DisplayName(engine)));
    }
    std::string_view value;
    if (f->arity == Arity::kSwitch) {
      if (eq != std::string_view::npos) {
        return InvalidArgument(fmt::format("{} is a switch and takes no value (got '{}')", name, arg));
      }
    } else if (eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size() && !std::string_view(args[i + 1]).starts_with("--")) {
      value = args[++i];
    } else {
      return InvalidArgument(fmt::format("{} needs a value", name));
    }
    if (f->set) {
      SEAM_RETURN_IF_ERROR(f->set(l, value));
    } else {
      l.ignored.push_back(fmt::format("{}: {}", f->names.front(), f->why));
    }
  }
  if (bare) {
    // `vllm serve A --model B` serves A: the positional model replaces --model.
    const std::string flagged = l.model_path;
    SEAM_RETURN_IF_ERROR(positional(l, *bare));
    if (!flagged.empty() && flagged != l.model_path) {
      l.ignored.push_back(
          fmt::format("--model {}: {} serves the model named first, {}", flagged, DisplayName(engine), l.model_path));
    }
  }
  if (l.model_path.empty()) {
    return InvalidArgument(fmt::format("the {} command line names no model ({})", DisplayName(engine),
                                       engine == Engine::kSglang ? "--model-path" : "serve MODEL or --model"));
  }
  return l;
}

std::vector<FlagSpec> CommonIgnoredFlags() {
  using enum Arity;
  return {
      {{"--host"}, kValue, {}, kServing},
      {{"--port"}, kValue, {}, kServing},
      {{"--served-model-name"}, kValue, {}, kServing},
      {{"--api-key"}, kValue, {}, kServing},
      {{"--trust-remote-code"}, kSwitch, {}, kServing},
      {{"--tokenizer-path", "--tokenizer"}, kValue, {}, kServing},
      {{"--log-level"}, kValue, {}, kServing},
      {{"--random-seed", "--seed"}, kValue, {}, kServing},
      {{"--load-format"}, kValue, {}, kServing},
      {{"--context-length", "--max-model-len"}, kValue, {}, kLimits},
      {{"--mem-fraction-static", "--gpu-memory-utilization"}, kValue, {}, kLimits},
      {{"--max-running-requests", "--max-num-seqs"}, kValue, {}, kLimits},
      {{"--max-total-tokens"}, kValue, {}, kLimits},
      {{"--max-prefill-tokens", "--max-num-batched-tokens"}, kValue, {}, kLimits},
      {{"--chunked-prefill-size"}, kValue, {}, kLimits},
      {{"--cuda-graph-max-bs"}, kValue, {}, kKernels},
      {{"--disable-cuda-graph", "--enforce-eager"}, kSwitch, {}, kKernels},
      {{"--enable-torch-compile"}, kSwitch, {}, kKernels},
      {{"--attention-backend"}, kValue, {}, kKernels},
      {{"--quantization"}, kValue, {}, kQuantised},
      {{"--kv-cache-dtype"}, kValue, {}, kQuantised},
      {{"--enable-eplb"}, kSwitch, {}, kExperts},
  };
}

}  // namespace seam::engine
