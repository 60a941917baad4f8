#include "plan/json_writer.h"

#include <fmt/format.h>

#include <cmath>

#include "seam/error.h"

namespace seam {

void JsonWriter::Indent() { out_.append(2 * levels_.size(), ' '); }

// A member of the innermost object or array starts its own line.
void JsonWriter::NextMember() {
  Level& l = levels_.back();
  out_ += l.members++ == 0 ? "\n" : ",\n";
  Indent();
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  SEAM_CHECK(!levels_.back().object, "a value in an object without its key");
  NextMember();
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  levels_.push_back({.object = true});
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  levels_.push_back({.object = false});
}

void JsonWriter::Close(char bracket) {
  SEAM_CHECK(!levels_.empty() && !after_key_, "a close without an open value");
  const bool empty = levels_.back().members == 0;
  levels_.pop_back();
  if (!empty) {
    out_ += '\n';
    Indent();
  }
  out_ += bracket;
}

void JsonWriter::EndObject() {
  SEAM_CHECK(!levels_.empty() && levels_.back().object, "an object's end outside an object");
  Close('}');
}

void JsonWriter::EndArray() {
  SEAM_CHECK(!levels_.empty() && !levels_.back().object, "an array's end outside an array");
  Close(']');
}

void JsonWriter::Key(std::string_view key) {
  SEAM_CHECK(!levels_.empty() && levels_.back().object && !after_key_, "a key outside an object");
  Level& l = levels_.back();
  SEAM_CHECK(l.members == 0 || key > l.last_key,
             fmt::format("key \"{}\" after \"{}\": keys go in sorted order", key, l.last_key));
  l.last_key = key;
  NextMember();
  Quoted(key);
  out_ += ": ";
  after_key_ = true;
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  Quoted(s);
}

// Plain ASCII is written as it stands; anything else is escaped (and UTF-8
// checked) by nlohmann itself.
void JsonWriter::Quoted(std::string_view s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      out_ += nlohmann::json(std::string(s)).dump();
      return;
    }
  }
  out_ += '"';
  out_ += s;
  out_ += '"';
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  fmt::format_to(std::back_inserter(out_), "{}", v);
}

void JsonWriter::Bool(bool b) {
  BeforeValue();
  out_ += b ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

// nlohmann writes a whole number of at most 15 digits as its digits and
// ".0"; any other number is nlohmann's to write, as its shortest form is its
// own.
void JsonWriter::Double(double d) {
  BeforeValue();
  if (std::isfinite(d) && d == std::trunc(d) && std::abs(d) < 1.0e15 && !(d == 0 && std::signbit(d))) {
    fmt::format_to(std::back_inserter(out_), "{}.0", static_cast<int64_t>(d));
    return;
  }
  out_ += nlohmann::json(d).dump();
}

void JsonWriter::Field(std::string_view key, std::string_view s) {
  Key(key);
  String(s);
}
void JsonWriter::Field(std::string_view key, int64_t v) {
  Key(key);
  Int(v);
}
void JsonWriter::Field(std::string_view key, int v) {
  Key(key);
  Int(v);
}
void JsonWriter::Field(std::string_view key, bool b) {
  Key(key);
  Bool(b);
}
void JsonWriter::Field(std::string_view key, double d) {
  Key(key);
  Double(d);
}

void JsonWriter::Value(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      BeginObject();
      for (const auto& [key, member] : v.items()) {
        Key(key);
        Value(member);
      }
      EndObject();
      return;
    case nlohmann::json::value_t::array:
      BeginArray();
      for (const nlohmann::json& item : v) Value(item);
      EndArray();
      return;
    default: BeforeValue(); out_ += v.dump();
  }
}

}  // namespace seam
