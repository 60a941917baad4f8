// JsonWriter: JSON written value by value, byte for byte what nlohmann's
// dump(2) makes of the same document, without building the document first
// (a plan of a real model has tens of thousands of values; the document of
// maps cost more than binding and verifying the plan).
//
// nlohmann's json keeps an object's keys sorted, so each object's keys must
// be given in sorted order; a key out of order is a bug and throws.
//
//   std::string out;
//   JsonWriter w(out);
//   w.BeginObject();
//   w.Key("hidden"); w.Int(7168);
//   w.Field("model", std::string_view("kimi-k2"));
//   w.EndObject();
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace seam {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);
  void String(std::string_view s);
  void Int(int64_t v);
  void Bool(bool b);
  void Null();
  void Double(double d);
  void Value(const nlohmann::json& v);  // a small document, written in place
  // A key and its value.
  void Field(std::string_view key, std::string_view s);
  void Field(std::string_view key, int64_t v);
  void Field(std::string_view key, int v);
  void Field(std::string_view key, bool b);
  void Field(std::string_view key, double d);
  void Field(std::string_view key, const char* s) = delete;  // would be a bool; pass a string_view

 private:
  struct Level {
    bool object = false;
    int members = 0;
    std::string_view last_key;  // keys outlive their object: literals, or a document being written
  };
  void BeforeValue();
  void Quoted(std::string_view s);
  void NextMember();
  void Close(char bracket);
  void Indent();

  std::string& out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

}  // namespace seam
