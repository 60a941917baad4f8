// JSON read strictly (internal to the readers of input files): nlohmann
// keeps the last of two equal keys silently and nests without a bound; here a
// repeated key in one object or nesting deeper than any seam file needs is an
// error, so what a file says is never half-read.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seam/error.h"

namespace seam {

// The most containers open at once (a plan needs 8, a config 5).
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

namespace strict_json_internal {

// Builds the document from nlohmann's SAX events, refusing a repeated key or
// a container past kMaxJsonDepth as it meets them. (nlohmann's own callback
// parser rescans an array's earlier elements whenever an object in it ends,
// so a plan of n stages cost n² steps; this costs one step an event.)
template <class Json>
class Builder {
 public:
  using String = typename Json::string_t;

  bool null() { return Scalar(Json(nullptr)); }
  bool boolean(bool v) { return Scalar(Json(v)); }
  bool number_integer(typename Json::number_integer_t v) { return Scalar(Json(v)); }
  bool number_unsigned(typename Json::number_unsigned_t v) { return Scalar(Json(v)); }
  bool number_float(typename Json::number_float_t v, const String& /*text*/) { return Scalar(Json(v)); }
  bool string(String& v) { return Scalar(Json(std::move(v))); }
  bool binary(typename Json::binary_t& v) { return Scalar(Json::binary(std::move(v))); }
  bool start_object(std::size_t /*size*/) { return Open(Json::object(), true); }
  bool start_array(std::size_t /*size*/) { return Open(Json::array(), false); }
  bool end_object() {
    keys_.pop_back();
    open_.pop_back();
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  bool key(String& k) {
    if (!keys_.back().insert(k).second) {
      return Refuse(JsonProblem::kDuplicateKey, fmt::format("key \"{}\" appears twice in one object", k));
    }
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const typename Json::exception& e) {
    std::string why = e.what();
    if (const size_t end = why.find("] "); why.starts_with("[json.exception.") && end != std::string::npos) {
      why = why.substr(end + 2);
    }
    return Refuse(JsonProblem::kSyntax, why);
  }

  StrictJson<Json> Take() && {
    if (error_) return {Json(), std::move(error_)};
    return {std::move(root_), std::nullopt};
  }

 private:
  // Places v in the open container (or as the document) and returns where it
  // now lives: an array's last element or an object's member stays put while
  // it is open, as nothing else is added to its parent meanwhile.
  Json* Put(Json v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    return &(parent[key_] = std::move(v));
  }

  // A value that opens nothing: placed, and the parse goes on.
  bool Scalar(Json v) {
    Put(std::move(v));
    return true;
  }

  bool Open(Json container, bool object) {
    if (open_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      return Refuse(JsonProblem::kTooDeep, fmt::format("nested deeper than {} levels", kMaxJsonDepth));
    }
    open_.push_back(Put(std::move(container)));
    if (object) keys_.emplace_back();
    return true;
  }

  bool Refuse(JsonProblem problem, std::string message) {
    error_ = JsonError{problem, std::move(message)};
    return false;
  }

  Json root_;
  std::vector<Json*> open_;
  std::vector<std::set<String>> keys_;  // the keys of each open object
  String key_;
  std::optional<JsonError> error_;
};

}  // namespace strict_json_internal

template <class Json>
StrictJson<Json> ParseStrictJson(std::string_view text) {
  strict_json_internal::Builder<Json> builder;
  // strict: nothing but white space may follow the document.
  Json::sax_parse(text, &builder, Json::input_format_t::json, /*strict=*/true);
  return std::move(builder).Take();
}

}  // namespace seam
