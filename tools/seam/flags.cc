#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>
#include <variant>

#include "cli.h"
#include "seam/knobs.h"

namespace seam::cli {
namespace {

// "1+3" or "1,3" -> {1, 3}.
Expected<std::vector<int>> ParseSplit(std::string_view text) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = text.find_first_of("+,", pos);
    const std::string_view part = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    int v = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v < 1 || v > kMaxLayerCount) {
      return InvalidArgument(
          fmt::format("'{}' is not a list of layer counts like 1+3 or 2,2 (each from 1 to {})", text, kMaxLayerCount));
    }
    out.push_back(v);
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return out;
}

}  // namespace

Expected<int> ParseCount(std::string_view text, int lo, int hi) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < lo || v > hi) {
    return InvalidArgument(fmt::format("'{}' is not an integer from {} to {}", text, lo, hi));
  }
  return v;
}

Expected<uint64_t> ParseSeed(std::string_view text) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || text[0] == '-' || text[0] == '+' || ec != std::errc() || ptr != text.data() + text.size()) {
    return InvalidArgument(
        fmt::format("'{}' is not a seed: an integer from 0 to {}", text, std::numeric_limits<uint64_t>::max()));
  }
  return v;
}

Expected<double> ParseSeconds(std::string_view text) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !(v >= kMinSeconds) ||
      !(v <= kMaxSeconds)) {
    return InvalidArgument(
        fmt::format("'{}' is not a number of seconds from {:g} to {:g} (a day)", text, kMinSeconds, kMaxSeconds));
  }
  return v;
}

Expected<double> ParseMillis(std::string_view text) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !(v > 0) || !(v <= kMaxSeconds * 1e3)) {
    return InvalidArgument(fmt::format("'{}' is not a number of milliseconds above 0 and at most a day", text));
  }
  return v / 1e3;
}

Expected<std::string> ParsePath(std::string_view text) {
  if (text.empty()) return InvalidArgument("the path is empty");
  if (text.find('\0') != std::string_view::npos) return InvalidArgument("the path holds a NUL byte");
  return std::string(text);
}

std::string TimeLeft(std::chrono::steady_clock::time_point start, int64_t done, int64_t total) {
  if (done <= 0 || done >= total) return "";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fmt::format(", about {:.0f} s left", elapsed * static_cast<double>(total - done) / static_cast<double>(done));
}

Expected<RunBackend> ParseRunBackend(std::string_view text) {
  if (text == "threads") return RunBackend::kThreads;
  if (text == "record") return RunBackend::kRecord;
  if (text == "mpi") return RunBackend::kMpi;
  return InvalidArgument(fmt::format("unknown backend '{}'; expected one of: threads, record, mpi", text));
}

Expected<int64_t> ParseByteSize(std::string_view text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit = text.substr(static_cast<size_t>(ptr - text.data()));
  if (unit.ends_with("iB")) unit.remove_suffix(2);
  if (unit.ends_with("B") && unit.size() > 1) unit.remove_suffix(1);
  const std::string_view units = "KMGT";
  double scale = 1;
  if (unit.size() == 1 && units.find(unit[0]) != std::string_view::npos) {
    scale = static_cast<double>(int64_t{1} << (10 * (units.find(unit[0]) + 1)));
  } else if (!unit.empty() && unit != "B") {
    ec = std::errc::invalid_argument;
  }
  const double bytes = value * scale;
  if (text.empty() || ec != std::errc() || !(bytes >= 1) || bytes > 1e18) {
    return InvalidArgument(fmt::format("'{}' is not a memory size like 24G, 512M or 1000000 (bytes)", text));
  }
  return static_cast<int64_t>(bytes);
}

namespace {

// A knob's default as --help shows it, where it has one of its own.
std::optional<std::string> ShownDefault(const Knob& k) {
  if (FollowsOthers(k)) return std::nullopt;
  const KnobValue v = ValueOf(k, ParallelConfig{});
  if (const auto* n = std::get_if<int>(&v)) return std::to_string(*n);
  if (const auto* name = std::get_if<std::string>(&v)) return *name;
  return std::nullopt;  // a switch is off, a split even
}

// One knob's flag, written into `cfg` as the command line is read.
CLI::Option* AddKnobFlag(CLI::App& cmd, const Knob& k, ParallelConfig& cfg) {
  const std::string flag(k.flag);
  const std::string help(k.help);
  CLI::Option* o = std::visit(
      [&](auto member) -> CLI::Option* {
        auto& field = cfg.*member;
        using T = std::remove_cvref_t<decltype(field)>;
        if constexpr (std::is_same_v<T, int>) {
          return AddCount(cmd, flag, field, 1, kMaxRanks, help);
        } else if constexpr (std::is_same_v<T, bool>) {
          return cmd.add_flag(flag, field, help);
        } else if constexpr (std::is_same_v<T, std::vector<int>>) {
          return AddParsed(cmd, flag, field, ParseSplit, help);
        } else {
          return cmd.add_option_function<std::string>(
              flag,
              [&k, &cfg, flag](const std::string& text) {
                if (Status s = SetValue(k, cfg, text); !s.ok()) throw CLI::ValidationError(flag, s.error().message);
              },
              help);
        }
      },
      k.field);
  if (!k.value_name.empty()) o->type_name(std::string(k.value_name));
  if (std::optional<std::string> shown = ShownDefault(k)) o->default_str(*shown);
  return o;
}

}  // namespace

void AddParallelFlags(CLI::App& cmd, ParallelFlags& f) {
  for (const Knob& k : Knobs()) f.options.push_back(AddKnobFlag(cmd, k, f.config));
}

CLI::Option* AddFormatFlag(CLI::App& cmd, PlanFormat& format) {
  return AddParsed(cmd, "--format", format, ParsePlanFormat, "table, json, text, dot or svg (dot drawn by Graphviz)")
      ->type_name("table|json|text|dot|svg")
      ->default_str("table");
}

CLI::Option* AddReportFormatFlag(CLI::App& cmd, bool& json) {
  return AddParsed(
             cmd, "--format", json,
             [](std::string_view t) -> Expected<bool> {
               if (t == "table") return false;
               if (t == "json") return true;
               return InvalidArgument(fmt::format("unknown format '{}'; expected one of: table, json", t));
             },
             "table or json")
      ->type_name("table|json")
      ->default_str("table");
}

// A byte that is not UTF-8 (a path can hold one) prints as U+FFFD rather than failing.
void PrintJson(const Json& doc) { std::cout << doc.dump(2, ' ', false, Json::error_handler_t::replace) << "\n"; }

CLI::Option* AddEngineFlag(CLI::App& cmd, EngineFlags& e) {
  CLI::Option* engine =
      AddParsed(cmd, "--engine", e.engine, ParseEngine,
                "sglang or vllm: read the model and parallel sizes from the engine's own flags after --");
  cmd.add_option("--engine-version", e.version,
                 "the engine version whose flags to read them as (main; the default is the newest seam has)")
      ->needs(engine);
  return engine;
}

CLI::Option* AddEmitFlag(CLI::App& cmd, std::optional<Engine>& emit, const std::string& what) {
  return AddParsed(cmd, "--emit", emit, ParseEngine, "sglang or vllm: " + what);
}

void AddWireFlags(CLI::App& cmd, WireFlags& f) {
  AddParsed(cmd, "--act-dtype", f.act, ParseWireDtype,
            "dtype of activations on the wire: bf16 (as engines run), fp16 or fp32")
      ->default_str("bf16");
  AddParsed(cmd, "--dispatch-dtype", f.dispatch, ParseWireDtype,
            "dtype of the MoE all-to-all dispatch: fp8 (with an fp32 scale per 128 elements, as DeepEP sends it), "
            "bf16, fp16 or fp32 (default: the activation dtype)");
}

Expected<WireDtypes> ToWire(const WireFlags& f) {
  const WireDtypes w{.act = f.act, .dispatch = f.dispatch.value_or(f.act)};
  if (Status s = Validate(w); !s.ok()) return InvalidArgument("--act-dtype: " + s.error().message);
  return w;
}

Expected<ParallelConfig> ToConfig(const ParallelFlags& f) {
  std::vector<bool> given;
  for (const CLI::Option* o : f.options) given.push_back(o->count() > 0);
  return CompleteConfig(f.config, given);
}

}  // namespace seam::cli
