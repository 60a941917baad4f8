// The streaming JSON writer writes what nlohmann's dump(2) makes of the same
// document, byte for byte: every catalogue plan, and values chosen for the
// corners of its format (empty containers, escapes, UTF-8, numbers).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "plan/json_writer.h"
#include "seam/bind.h"
#include "seam/families.h"
#include "seam/plan_io.h"

namespace seam {
namespace {

using nlohmann::json;

// nlohmann's own rendering of what was written.
std::string Canonical(const std::string& written) { return json::parse(written).dump(2) + "\n"; }

TEST(JsonWriter, EveryCataloguePipelineIsWhatNlohmannWrites) {
  const std::vector<ParallelConfig> configs = {
      {.tp = 2, .pp = 2},
      {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .pp = 2},
      {.tp = 4, .attn_dp = 4, .reduction = Reduction::kRsv},  // fractions of rows: bytes with fractions
      {.tp = 4, .input_scattered = true},
      {.tp = 8, .attn_dp = 2, .dp_lm_head = true}};
  int written = 0;
  for (const CatalogueEntry& e : Catalogue()) {
    for (const ParallelConfig& cfg : configs) {
      const Expected<Pipeline> p = BindPipeline(e.make(), cfg);
      if (!p) continue;
      const std::string text = ToJson(*p);
      ASSERT_EQ(text, Canonical(text)) << e.name << " " << Describe(cfg);
      ASSERT_EQ(ToJson(p->front()), Canonical(ToJson(p->front()))) << e.name << " " << Describe(cfg);
      ++written;
    }
  }
  EXPECT_GT(written, 40);
}

TEST(JsonWriter, CornersOfTheFormatAreWhatNlohmannWrites) {
  const std::vector<double> numbers = {0.0,
                                       -0.0,
                                       1.0,
                                       1408.0,
                                       341.33333333333337,
                                       0.1,
                                       1e-5,
                                       1e14,
                                       999999999999999.0,
                                       1e15,
                                       1e16,
                                       12345678901234567890.0,
                                       -2.5,
                                       std::numeric_limits<double>::infinity(),
                                       std::nan("")};
  const std::vector<std::string> strings = {"",          "plain",        "with \"quotes\"", "back\\slash",
                                            "tab\tnl\n", "\x01\x1f\x7f", "kimi–k2 ✓",       "é"};
  std::string out;
  JsonWriter w(out);
  json doc;
  w.BeginObject();
  w.Key("a_empty_array");
  w.BeginArray();
  w.EndArray();
  doc["a_empty_array"] = json::array();
  w.Key("b_empty_object");
  w.BeginObject();
  w.EndObject();
  doc["b_empty_object"] = json::object();
  w.Key("c_numbers");
  w.BeginArray();
  for (double d : numbers) w.Double(d);
  w.EndArray();
  doc["c_numbers"] = numbers;
  w.Key("d_strings");
  w.BeginArray();
  for (const std::string& s : strings) w.String(s);
  w.EndArray();
  doc["d_strings"] = strings;
  w.Key("e_scalars");
  w.BeginArray();
  w.Int(-7);
  w.Int(std::numeric_limits<int64_t>::max());
  w.Bool(true);
  w.Bool(false);
  w.Null();
  w.EndArray();
  doc["e_scalars"] = {-7, std::numeric_limits<int64_t>::max(), true, false, nullptr};
  const json nested = {{"z", {1, {{"y", nullptr}}}}, {"a", json::object()}};
  w.Key("f_document");
  w.Value(nested);
  doc["f_document"] = nested;
  w.EndObject();
  EXPECT_EQ(out + "\n", doc.dump(2) + "\n");
}

// nlohmann keeps keys sorted; a writer that gives them otherwise would write
// a document nlohmann never writes.
TEST(JsonWriter, AKeyOutOfOrderIsABug) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject();
  w.Key("b");
  w.Int(1);
  EXPECT_THROW(w.Key("a"), InternalError);
}

TEST(JsonWriter, InvalidUtf8IsRefusedAsNlohmannRefusesIt) {
  std::string out;
  JsonWriter w(out);
  EXPECT_THROW(w.String("\xff"), json::type_error);
}

}  // namespace
}  // namespace seam
