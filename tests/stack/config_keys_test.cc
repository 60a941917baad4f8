// docs/config-keys.md is the importer's specification, and this test reads
// it: every row's test value, put into its family's test base, gives another
// model (modelled), the same model (ignored, unread) or exactly the row's
// message (refused); and every key the importer looks up has a modelled or
// refused row, so neither the table nor the importer can drift from the other.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "seam/hf_config.h"
#include "seam/model.h"
#include "seam/runtime/hf_checkpoint.h"
#include "stack/hf_reader.h"

namespace seam {
namespace {

using json = nlohmann::json;

struct Row {
  std::string key;
  std::string use;    // modelled, refused, ignored, unread
  std::string value;  // JSON; "-": not set by this test
  std::string with;   // a JSON object of other keys set with it, or empty
  std::string text;   // the message (refused) or what seam does
  int line = 0;
};

struct Section {
  std::vector<std::string> model_types;  // empty: every family
  std::string base;                      // "configs/X.json" or "catalogue NAME"
  std::vector<Row> rows;
};

std::string Unquote(std::string cell) {
  while (!cell.empty() && cell.front() == ' ') cell.erase(0, 1);
  while (!cell.empty() && cell.back() == ' ') cell.pop_back();
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`') cell = cell.substr(1, cell.size() - 2);
  return cell;
}

std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool code = false;
  for (size_t i = 1; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '`') code = !code;
    if (c == '|' && !code) {
      out.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  return out;
}

std::vector<Section> ReadTable() {
  std::ifstream in(SEAM_DOCS "/config-keys.md");
  EXPECT_TRUE(in.good()) << SEAM_DOCS "/config-keys.md";
  std::vector<Section> out;
  std::string line;
  int n = 0;
  std::string pending;  // text of the section's prose, for its test base
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("## ", 0) == 0) {
      Section s;
      static const std::regex quoted("`([^`]+)`");
      for (std::sregex_iterator it(line.begin(), line.end(), quoted), end; it != end; ++it) {
        s.model_types.push_back((*it)[1]);
      }
      out.push_back(s);
      pending.clear();
      continue;
    }
    if (out.empty()) continue;
    Section& s = out.back();
    if (line.rfind("|", 0) != 0) {
      pending += line + " ";
      std::smatch m;
      if (std::regex_search(pending, m, std::regex("Test\\s+base:\\s+`(configs/[^`]+)`"))) s.base = m[1];
      if (std::regex_search(pending, m, std::regex("Test\\s+base:\\s+the\\s+catalogue's\\s+`([^`]+)`"))) {
        s.base = "catalogue " + m[1].str();
      }
      continue;
    }
    const std::vector<std::string> cells = Cells(line);
    if (cells.size() != 4 || Unquote(cells[0]) == "key" || cells[0].find("---") != std::string::npos) continue;
    Row r{.key = Unquote(cells[0]), .use = Unquote(cells[1]), .text = Unquote(cells[3]), .line = n};
    const std::string value = cells[2];
    const size_t with = value.find(" with ");
    r.value = Unquote(with == std::string::npos ? value : value.substr(0, with));
    if (with != std::string::npos) r.with = Unquote(value.substr(with + 6));
    s.rows.push_back(r);
  }
  return out;
}

// Python's bare Infinity, as nlohmann reads no such word.
json ParseConfig(const std::string& text) {
  Expected<json> j = hf::ParseConfigJson(text, "base");
  EXPECT_TRUE(j.ok()) << j.error().message;
  return j.ok() ? *j : json();
}

json Base(const std::string& base, const std::string& model_type) {
  json j;
  if (base.rfind("configs/", 0) == 0) {
    std::ifstream in(fmt::format("{}/{}", SEAM_HF_CONFIGS, base.substr(8)));
    std::stringstream text;
    text << in.rdbuf();
    j = ParseConfig(text.str());
  } else {
    Expected<Model> m = CatalogueModel(base.substr(10));
    EXPECT_TRUE(m.ok()) << base;
    Expected<std::string> text = HfConfigText(*m, Dtype::kF32);
    EXPECT_TRUE(text.ok()) << text.error().message;
    j = ParseConfig(*text);
  }
  if (!model_type.empty()) j["model_type"] = model_type;
  return j;
}

// Sets a key by its table path: "a.b", with "[]" the first element of a list.
void Set(json& j, const std::string& path, const json& value) {
  json* at = &j;
  std::stringstream parts(path);
  std::string part;
  std::vector<std::string> names;
  while (std::getline(parts, part, '.')) names.push_back(part);
  for (size_t i = 0; i < names.size(); ++i) {
    std::string name = names[i];
    const bool first = name.size() > 2 && name.substr(name.size() - 2) == "[]";
    if (first) name.resize(name.size() - 2);
    if (i + 1 == names.size() && !first) {
      (*at)[name] = value;
      return;
    }
    at = &(*at)[name];
    if (first) at = &(*at)[0];
  }
}

// The model a config describes, or the importer's message.
struct Imported {
  std::optional<Model> model;
  std::string error;
};

Imported Import(const json& j, std::set<std::string>* read = nullptr) {
  const std::string source = "test.json";
  try {
    return {hf::ImportModel(hf::Reader(j, source, "", read)), ""};
  } catch (const Failure& e) {
    return {std::nullopt, e.error().message};
  }
}

bool Same(const Model& a, const Model& b) {
  if (a.name != b.name || a.hidden != b.hidden || a.num_layers != b.num_layers ||
      a.residual_streams != b.residual_streams || !(*a.dims == *b.dims)) {
    return false;
  }
  const std::vector<StageRef> x = StagesOf(a, 0, a.num_layers);
  const std::vector<StageRef> y = StagesOf(b, 0, b.num_layers);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].layer != y[i].layer || !(x[i].decl == y[i].decl)) return false;
  }
  return true;
}

const std::vector<Section>& Table() {
  static const std::vector<Section> table = ReadTable();
  return table;
}

const Section* SectionOf(const std::string& model_type) {
  for (const Section& s : Table()) {
    for (const std::string& t : s.model_types) {
      if (t == model_type) return &s;
    }
  }
  return nullptr;
}

const Section& Common() {
  static const Section none;
  for (const Section& s : Table()) {
    if (s.model_types.empty()) return s;
  }
  ADD_FAILURE() << "no section for every family";
  return none;
}

TEST(ConfigKeys, EveryFamilyHasASectionWithATestBaseAndEveryRowAUse) {
  ASSERT_FALSE(Table().empty());
  for (const std::string& type : KnownModelTypes()) {
    const Section* s = SectionOf(type);
    ASSERT_NE(s, nullptr) << "docs/config-keys.md has no section for " << type;
    EXPECT_FALSE(s->base.empty()) << type;
  }
  const std::set<std::string> uses = {"modelled", "refused", "ignored", "unread"};
  for (const Section& s : Table()) {
    std::set<std::string> keys;
    for (const Row& r : s.rows) {
      EXPECT_TRUE(uses.contains(r.use)) << "line " << r.line << ": " << r.use;
      EXPECT_TRUE(keys.insert(r.key).second) << "line " << r.line << ": " << r.key << " twice";
      EXPECT_TRUE(r.use == "modelled" || r.value != "-")
          << "line " << r.line << ": only a modelled key may go untested";
    }
  }
}

void CheckRow(const std::string& type, const json& base, const Model& want, const Row& r) {
  SCOPED_TRACE(fmt::format("{} line {}: {} = {}", type, r.line, r.key, r.value));
  if (r.value == "-") return;
  json j = base;
  if (!r.with.empty()) {
    const json with = json::parse(r.with);
    for (const auto& [key, value] : with.items()) Set(j, key, value);
  }
  Set(j, r.key, json::parse(r.value));
  const Imported got = Import(j);
  if (r.use == "refused") {
    EXPECT_EQ(got.error, "test.json: " + r.text);
    return;
  }
  ASSERT_TRUE(got.model.has_value()) << got.error;
  if (r.use == "modelled") {
    EXPECT_FALSE(Same(*got.model, want)) << "a modelled key whose test value leaves the model as it was";
    if (r.text.find("; must be given") != std::string::npos) {
      json without = base;
      without.erase(r.key);
      EXPECT_EQ(Import(without).error, fmt::format("test.json: missing key '{}'", r.key));
    }
  } else {
    EXPECT_TRUE(Same(*got.model, want)) << "an " << r.use << " key that changes the model";
  }
}

TEST(ConfigKeys, EachKeysTestValueChangesTheModelLeavesItOrIsRefusedAsTheTableSays) {
  for (const std::string& type : KnownModelTypes()) {
    const Section* s = SectionOf(type);
    ASSERT_NE(s, nullptr) << type;
    const json base = Base(s->base, type);
    const Imported want = Import(base);
    ASSERT_TRUE(want.model.has_value()) << type << ": " << want.error;
    std::set<std::string> own;
    for (const Row& r : s->rows) {
      CheckRow(type, base, *want.model, r);
      own.insert(r.key);
    }
    for (const Row& r : Common().rows) {
      if (!own.contains(r.key)) CheckRow(type, base, *want.model, r);
    }
  }
}

// A key path as the table writes it: list indexes as "[]".
std::string TablePath(const std::string& path) { return std::regex_replace(path, std::regex("\\[[0-9]+\\]"), "[]"); }

// Every key the importer looks up, on every real config and every test
// base, is one the table models or refuses: a key seam reads cannot be
// missing from the table, or listed as ignored.
TEST(ConfigKeys, EveryKeyTheImporterReadsIsModelledOrRefusedInTheTable) {
  std::vector<json> configs;
  for (const char* file :
       {"llama-3.1-8b.json", "qwen3-8b.json", "qwen3-30b-a3b.json", "gpt-oss-20b.json", "deepseek-v2-lite.json",
        "kimi-k2.json", "nemotron-h-56b.json", "nemotron-3-nano-30b-a3b.json", "qwen3-next-80b-a3b.json",
        "nemotron-super-49b.json", "deepseek-v4-flash.json"}) {
    configs.push_back(Base(fmt::format("configs/{}", file), ""));
  }
  for (const std::string& type : KnownModelTypes()) configs.push_back(Base(SectionOf(type)->base, type));
  for (const json& j : configs) {
    const std::string type = j["model_type"];
    SCOPED_TRACE(type);
    std::set<std::string> read;
    const Imported got = Import(j, &read);
    ASSERT_TRUE(got.model.has_value()) << got.error;
    std::map<std::string, std::string> use;
    for (const Row& r : Common().rows) use[r.key] = r.use;
    for (const Row& r : SectionOf(type)->rows) use[r.key] = r.use;
    for (const std::string& path : read) {
      std::string key = TablePath(path);
      // rope_scaling's own keys are its row's.
      if (key.rfind("rope_scaling.", 0) == 0) key = "rope_scaling";
      // An object whose own keys are rows ("block_configs[].attention").
      if (!use.contains(key)) {
        for (const auto& [row, how] : use) {
          if (row.rfind(key + ".", 0) == 0) use[key] = "modelled";
          if (use.contains(key)) break;
        }
      }
      const auto it = use.find(key);
      ASSERT_TRUE(it != use.end()) << "the importer reads " << path << ", which docs/config-keys.md does not list";
      EXPECT_TRUE(it->second == "modelled" || it->second == "refused")
          << "the importer reads " << path << ", listed as " << it->second;
    }
  }
}

// A dump writes the model that ran and nothing else: every key of a
// catalogue model's config.json is a key of its family's table.
TEST(ConfigKeys, EveryKeyADumpWritesIsInItsFamilysTable) {
  for (const CatalogueEntry& entry : Catalogue()) {
    const Model m = entry.make();
    if (!HasHfForm(m)) continue;
    SCOPED_TRACE(entry.name);
    Expected<std::string> text = HfConfigText(m, Dtype::kF32);
    ASSERT_TRUE(text.ok()) << text.error().message;
    std::set<std::string> rows;
    for (const Row& r : Common().rows) rows.insert(r.key);
    for (const Row& r : SectionOf(m.hf_type)->rows) rows.insert(r.key);
    const json written = ParseConfig(*text);
    for (const auto& [key, _] : written.items()) {
      EXPECT_TRUE(rows.contains(key)) << "a dump writes " << key << ", which its family's table does not list";
    }
  }
}

}  // namespace
}  // namespace seam
