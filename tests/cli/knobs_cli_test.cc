// The knob table (seam/knobs.h) against what lies outside the library: every
// knob, set away from its default, survives the command line, the plan's
// JSON and its text form (a knob a parser, reader or writer left out fails
// here, whichever it was), and the JSON Schemas' config objects list exactly
// the table's knobs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "process_testing.h"

#include "seam/checked.h"
#include "seam/knobs.h"
#include "seam/model_source.h"
#include "seam/plan_io.h"

namespace seam {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kModel = "deepseek-v2-lite";  // attention, dense and MoE layers: every knob binds on it
constexpr int kLayers = 4;

// Values other than a knob's default, by kind: small counts, the switch on,
// each other name of an enum, a split of the model's layers.
std::vector<KnobValue> Samples(const Knob& k) {
  switch (KindOf(k)) {
    case KnobKind::kCount: return {1, 2, 4};
    case KnobKind::kBool: return {true};
    case KnobKind::kEnum: break;
    case KnobKind::kSplit: return {std::vector<int>{1, kLayers - 1}};
  }
  std::vector<KnobValue> out;
  const KnobValue fallback = ValueOf(k, ParallelConfig{});
  for (std::string_view name : ChoicesOf(k)) {
    if (KnobValue(std::string(name)) != fallback) out.emplace_back(std::string(name));
  }
  return out;
}

struct Setting {
  const Knob* knob;
  KnobValue value;
};

// The other knobs' samples a configuration may need to make `k`'s valid
// (--dp-lm-head needs --attn-dp, which needs --tp): none, one or two of them.
std::vector<std::vector<Setting>> Supports(const Knob& k) {
  std::vector<Setting> others;
  for (const Knob& o : seam::Knobs()) {
    if (&o == &k) continue;
    for (const KnobValue& v : Samples(o)) others.push_back({&o, v});
  }
  std::vector<std::vector<Setting>> out = {{}};
  for (const Setting& a : others) out.push_back({a});
  for (size_t i = 0; i < others.size(); ++i) {
    for (size_t j = i + 1; j < others.size(); ++j) {
      if (others[i].knob != others[j].knob) out.push_back({others[i], others[j]});
    }
  }
  return out;
}

// A configuration that binds on the model with `k` away from its default,
// setting as few other knobs as it needs.
std::optional<ParallelConfig> Showing(const Knob& k, const Model& m) {
  const std::vector<std::vector<Setting>> supports = Supports(k);
  for (const KnobValue& v : Samples(k)) {
    for (const std::vector<Setting>& support : supports) {
      ParallelConfig c;
      for (const Setting& s : support) EXPECT_TRUE(SetValue(*s.knob, c, s.value).ok());
      EXPECT_TRUE(SetValue(k, c, v).ok());
      if (!Validate(c).ok() || !IsSet(k, c) || !BindPipelineChecked(m, c).ok()) continue;
      return c;
    }
  }
  return std::nullopt;
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

class Knobs : public testing::InTempDir {
 protected:
  // The configuration of the plan `seam plan` prints for `flags` in `format`, read back.
  std::optional<ParallelConfig> Planned(const std::string& flags, const std::string& format) const {
    std::vector<std::string> args = {"plan", kModel, "--layers", std::to_string(kLayers), "--format", format};
    for (const std::string& w : Words(flags)) args.push_back(w);
    const testing::Result r = Shell(testing::Quote(SEAM_CLI), args);
    EXPECT_EQ(r.code, 0) << flags << ": " << r.err;
    Expected<Pipeline> back = format == "json" ? PipelineFromJson(r.out) : PipelineFromText(r.out);
    EXPECT_TRUE(back.ok()) << flags << " as " << format << ": " << (back ? "" : back.error().message);
    if (!back || back->empty()) return std::nullopt;
    return back->front().header().config;
  }
};

TEST_F(Knobs, EveryKnobRoundTripsThroughTheCommandLineJsonAndText) {
  const Expected<Model> m = ChooseModel(kModel, "", kLayers);
  ASSERT_TRUE(m.ok()) << m.error().message;
  for (const Knob& k : seam::Knobs()) {
    SCOPED_TRACE(std::string(k.flag));
    const std::optional<ParallelConfig> cfg = Showing(k, *m);
    ASSERT_TRUE(cfg) << "no configuration of at most three knobs binds " << kModel << " with " << k.flag
                     << " away from its default; give Samples another value";
    // seam's own flags for the configuration name the knob, and the command line takes them back.
    const std::string flags = KnobFlags(*cfg);
    EXPECT_NE((" " + flags + " ").find(" " + std::string(k.flag) + " "), std::string::npos) << flags;
    for (const char* format : {"json", "text"}) {
      const std::optional<ParallelConfig> back = Planned(flags, format);
      ASSERT_TRUE(back) << format;
      EXPECT_EQ(ValueOf(k, *back), ValueOf(k, ResolvedConfig(*cfg))) << flags << " as " << format;
      EXPECT_EQ(*back, ResolvedConfig(*cfg)) << flags << " as " << format << ": " << Describe(*back);
    }
  }
}

// The schemas are files people read; this is what keeps their config object
// the table's, key for key, in its order, each of its kind.
void ExpectConfigIsTheTable(const std::string& schema) {
  SCOPED_TRACE(schema);
  std::ifstream in(std::string(SEAM_DOCS) + "/schemas/" + schema);
  ASSERT_TRUE(in.good());
  const Json doc = Json::parse(in);
  const Json& config = doc.at("$defs").at("config");
  std::vector<std::string> keys;
  std::vector<std::string> flags;
  for (const Knob& k : seam::Knobs()) {
    keys.emplace_back(k.json);
    flags.emplace_back(k.flag);
  }
  EXPECT_EQ(config.at("required").get<std::vector<std::string>>(), keys);
  std::vector<std::string> properties;
  for (const auto& [key, value] : config.at("properties").items()) properties.push_back(key);
  EXPECT_EQ(properties, keys);
  EXPECT_NE(config.at("description").get<std::string>().find(fmt::format("(the flags {})", fmt::join(flags, ", "))),
            std::string::npos)
      << config.at("description");
  for (const Knob& k : seam::Knobs()) {
    const Json& p = config.at("properties").at(std::string(k.json));
    switch (KindOf(k)) {
      case KnobKind::kCount:
        EXPECT_EQ(p.at("type"), "integer") << k.json;
        EXPECT_EQ(p.at("minimum"), 1) << k.json << ": a plan states every width";
        break;
      case KnobKind::kBool: EXPECT_EQ(p.at("type"), "boolean") << k.json; break;
      case KnobKind::kEnum: {
        EXPECT_EQ(p.at("$ref"), fmt::format("#/$defs/{}", k.json)) << k.json;
        const std::vector<std::string_view> names = ChoicesOf(k);
        const std::vector<std::string> choices(names.begin(), names.end());
        EXPECT_EQ(doc.at("$defs").at(std::string(k.json)).at("enum").get<std::vector<std::string>>(), choices);
        break;
      }
      case KnobKind::kSplit:
        EXPECT_EQ(p.at("type"), "array") << k.json;
        EXPECT_EQ(p.at("items").at("type"), "integer") << k.json;
        break;
    }
  }
}

TEST(KnobTable, EverySchemasConfigObjectIsTheTable) {
  for (const char* schema : {"plan.schema.json", "run.schema.json", "compare.schema.json"}) {
    ExpectConfigIsTheTable(schema);
  }
}

}  // namespace
}  // namespace seam
