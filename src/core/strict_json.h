// JSON read strictly (internal to the readers of input files): nlohmann
// keeps the last of two equal keys silently and nests without a bound; here a
// repeated key in one object or nesting deeper than any seam file needs is an
// error, so what a file says is never half-read.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam {

inline constexpr int kMaxJsonDepth = 64;

// Why a JSON text was refused.
enum class JsonProblem { kSyntax, kDuplicateKey, kTooDeep };
struct JsonError {
  JsonProblem problem;
  std::string message;  // "key \"x\" appears twice in one object", or the parser's own words
};

template <class Json>
struct StrictJson {
  Json value;
  std::optional<JsonError> error;
};

template <class Json>
StrictJson<Json> ParseStrictJson(std::string_view text) {
  struct Stop {};
  std::vector<std::set<std::string>> keys;
  std::optional<JsonError> error;
  auto callback = [&](int depth, typename Json::parse_event_t event, Json& parsed) {
    using E = typename Json::parse_event_t;
    if (depth > kMaxJsonDepth) {
      error = JsonError{JsonProblem::kTooDeep, fmt::format("nested deeper than {} levels", kMaxJsonDepth)};
      throw Stop{};
    }
    if (event == E::object_start) keys.emplace_back();
    if (event == E::object_end && !keys.empty()) keys.pop_back();
    if (event == E::key && !keys.empty() && !keys.back().insert(parsed.template get<std::string>()).second) {
      error = JsonError{JsonProblem::kDuplicateKey,
                        fmt::format("key \"{}\" appears twice in one object", parsed.template get<std::string>())};
      throw Stop{};
    }
    return true;
  };
  try {
    return {Json::parse(text, callback), std::nullopt};
  } catch (const Stop&) {
    return {Json(), error};
  } catch (const typename Json::exception& e) {
    std::string why = e.what();
    if (const size_t end = why.find("] "); why.starts_with("[json.exception.") && end != std::string::npos) {
      why = why.substr(end + 2);
    }
    return {Json(), JsonError{JsonProblem::kSyntax, why}};
  }
}

}  // namespace seam
