#include "engine/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "core/enum_text.h"

namespace seam::engine {

// The tables' texts, by file name (generated from src/engine/tables/*.flags).
extern const std::vector<std::pair<std::string_view, std::string_view>> kEngineTableTexts;

namespace {

constexpr auto kArities = EnumNames<Arity>("arity", {{Arity::kSwitch, "switch"},
                                                     {Arity::kBool, "bool"},
                                                     {Arity::kValue, "value"},
                                                     {Arity::kOptional, "optional"},
                                                     {Arity::kMany, "many"},
                                                     {Arity::kAny, "any"}});

constexpr auto kFields = EnumNames<Field>("role", {{Field::kModel, "model"},
                                                   {Field::kTp, "tp"},
                                                   {Field::kDp, "dp"},
                                                   {Field::kPp, "pp"},
                                                   {Field::kEp, "ep"},
                                                   {Field::kDpAttention, "dp-attention"},
                                                   {Field::kMoeDenseTp, "moe-dense-tp"},
                                                   {Field::kA2aBackend, "a2a-backend"},
                                                   {Field::kExpertParallel, "expert-parallel"},
                                                   {Field::kInputScattered, "input-scattered"},
                                                   {Field::kDpLmHead, "dp-lm-head"},
                                                   {Field::kDtype, "dtype"},
                                                   {Field::kQuantization, "quantization"},
                                                   {Field::kKvCacheDtype, "kv-cache-dtype"},
                                                   {Field::kNnodes, "nnodes"},
                                                   {Field::kNodeRank, "node-rank"},
                                                   {Field::kDpLocal, "dp-local"},
                                                   {Field::kDpStartRank, "dp-start-rank"},
                                                   {Field::kDpAddress, "dp-address"},
                                                   {Field::kHeadless, "headless"},
                                                   {Field::kTwoBatchOverlap, "two-batch-overlap"},
                                                   {Field::kDispatchDtype, "dispatch-dtype"},
                                                   {Field::kDpRank, "dp-rank"},
                                                   {Field::kEplb, "eplb"},
                                                   {Field::kMemoryFraction, "memory-fraction"},
                                                   {Field::kPrefillChunk, "prefill-chunk"},
                                                   {Field::kCp, "cp"},
                                                   {Field::kPrefillCp, "prefill-cp"},
                                                   {Field::kCpStrategy, "cp-strategy"},
                                                   {Field::kDcp, "dcp"},
                                                   {Field::kDcpBackend, "dcp-backend"},
                                                   {Field::kDcpInterleave, "dcp-interleave"}});

constexpr auto kKinds = EnumNames<Kind>("kind", {{Kind::kServing, "serving"},
                                                 {Kind::kLimits, "limits"},
                                                 {Kind::kKernels, "kernels"},
                                                 {Kind::kFormats, "formats"},
                                                 {Kind::kPlacement, "placement"},
                                                 {Kind::kExperts, "experts"},
                                                 {Kind::kSpeculative, "speculative"}});

constexpr auto kEnvRoles = EnumNames<EnvRole>(
    "environment role", {{EnvRole::kDispatchBf16, "dispatch-bf16"}, {EnvRole::kPpPartition, "pp-partition"}});

std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.emplace_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string> SplitNames(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    out.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Expected<bool> YesNo(std::string_view w) {
  if (w == "yes") return true;
  if (w == "no") return false;
  return Malformed(fmt::format("'{}' is not yes or no", w));
}

Expected<Role> RoleOf(const std::vector<std::string>& w) {
  const std::string_view r = w[2];
  if (r == "alias" || r == "unmodelled") {
    if (w.size() != 5) return Malformed(fmt::format("{} takes two words after it", r));
    if (r == "alias") return Role(Alias{w[3], w[4]});
    return Role(Unmodelled{w[3], w[4]});
  }
  if (w.size() != 3) return Malformed(fmt::format("role '{}' takes nothing after it", r));
  if (Expected<Kind> k = kKinds.Parse(r)) return Role(*k);
  Expected<Field> f = kFields.Parse(r);
  if (!f) return Malformed(fmt::format("unknown role '{}'", r));
  return Role(*f);
}

Expected<FlagRow> FlagOf(const std::vector<std::string>& w) {
  if (w.size() < 3) return Malformed("a flag line is NAMES ARITY ROLE");
  FlagRow row{.names = SplitNames(w[0])};
  for (const std::string& n : row.names) {
    if (n.size() < 2 || n[0] != '-' || n == "--") return Malformed(fmt::format("'{}' is not a flag", n));
  }
  Expected<Arity> a = kArities.Parse(w[1]);
  if (!a) return a.error();
  row.arity = *a;
  Expected<Role> role = RoleOf(w);
  if (!role) return role.error();
  row.role = *role;
  return row;
}

Status Directive(EngineTable& t, const std::vector<std::string>& w, const std::string& line) {
  const std::string& d = w[0];
  if (d == "engine" && w.size() == 2) {
    Expected<Engine> e = ParseEngine(w[1]);
    if (!e) return e.error();
    t.engine = *e;
  } else if (d == "version" && w.size() == 2) {
    t.version = w[1];
  } else if (d == "source" && w.size() >= 2) {
    t.source = line.substr(line.find("source") + 7);
  } else if ((d == "abbreviations" || d == "underscores" || d == "dotted") && w.size() == 2) {
    Expected<bool> yes = YesNo(w[1]);
    if (!yes) return yes.error();
    (d == "abbreviations" ? t.abbreviations : d == "underscores" ? t.underscores : t.dotted) = *yes;
  } else if (d == "entry" && w.size() >= 2) {
    t.entries.emplace_back(w.begin() + 1, w.end());
  } else if (d == "positional" && w.size() == 2 && w[1] == "model") {
    t.positional_model = true;
  } else if (d == "env" && w.size() == 3) {
    Expected<EnvRole> r = kEnvRoles.Parse(w[2]);
    if (!r) return r.error();
    t.env.push_back({w[1], *r});
  } else {
    return Malformed(fmt::format("unknown directive or wrong word count: '{}'", line));
  }
  return Status::Ok();
}

// Each spelling names one row: a table that says otherwise is a mistake in it.
Status CheckUnique(const EngineTable& t) {
  std::map<std::string_view, int> seen;
  for (const FlagRow& f : t.flags) {
    for (const std::string& n : f.names) {
      if (++seen[n] > 1) return Malformed(fmt::format("flag {} is listed twice", n));
    }
  }
  for (const FlagRow& f : t.flags) {
    if (const Alias* a = std::get_if<Alias>(&f.role); a != nullptr) {
      const FlagRow* target = t.Find(a->flag);
      if (target == nullptr || std::holds_alternative<Alias>(target->role)) {
        return Malformed(fmt::format("{} is an alias of {}, which is not a flag of the table", f.names[0], a->flag));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view Why(Kind k) {
  switch (k) {
    case Kind::kServing: return "serving and scheduling, not communication between ranks";
    case Kind::kLimits: return "memory and batch limits: a plan counts bytes per token";
    case Kind::kKernels: return "kernels and compilation: the same collectives at the same seams";
    case Kind::kFormats: return "weight and file formats: the activations on the wire are the same";
    case Kind::kPlacement: return "where ranks run: the plan is the same on any placement";
    case Kind::kExperts: return "expert placement and balancing: each MoE's boundaries are the same";
    case Kind::kSpeculative: return "speculative decoding: a draft model is planned on its own";
  }
  SEAM_CHECK(false, "an unknown kind of flag");
}

const FlagRow* EngineTable::Find(std::string_view name) const {
  for (const FlagRow& f : flags) {
    if (std::find(f.names.begin(), f.names.end(), name) != f.names.end()) return &f;
  }
  return nullptr;
}

Expected<EngineTable> ReadEngineTable(std::string_view text, std::string_view name) {
  EngineTable t;
  bool engine_named = false;
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    ++number;
    std::string line(text.substr(start, end - start));
    start = end + 1;
    line = line.substr(0, line.find('#'));
    const std::vector<std::string> w = Words(line);
    if (w.empty()) continue;
    Status s = Status::Ok();
    if (w[0].starts_with("-")) {
      Expected<FlagRow> f = FlagOf(w);
      if (f)
        t.flags.push_back(*std::move(f));
      else
        s = f.error();
    } else {
      engine_named |= w[0] == "engine";
      s = Directive(t, w, line);
    }
    if (!s.ok()) return Malformed(fmt::format("engine table {} line {}: {}", name, number, s.error().message));
  }
  if (!engine_named || t.version.empty() || t.source.empty()) {
    return Malformed(fmt::format("engine table {}: it must name its engine, version and source", name));
  }
  if (Status s = CheckUnique(t); !s.ok()) {
    return Malformed(fmt::format("engine table {}: {}", name, s.error().message));
  }
  return t;
}

namespace {

// A release's version as numbers ("0.5.6" is 0, 5, 6).
std::vector<int> VersionNumbers(std::string_view version) {
  std::vector<int> parts;
  size_t i = 0;
  while (i < version.size()) {
    parts.push_back(std::atoi(std::string(version.substr(i)).c_str()));
    i = std::min(version.find('.', i), version.size()) + 1;
  }
  return parts;
}

// Releases newest first, main last: the first of an engine's is its default.
bool ComesFirst(const EngineTable& a, const EngineTable& b) {
  if ((a.version == "main") != (b.version == "main")) return b.version == "main";
  return VersionNumbers(a.version) > VersionNumbers(b.version);
}

// Every compiled-in table, read and ordered once; a table that does not
// read is a bug in seam's sources (a test reads each).
const std::vector<EngineTable>& AllTables() {
  static const std::vector<EngineTable> tables = [] {
    std::vector<EngineTable> out;
    for (const auto& [file, text] : kEngineTableTexts) {
      Expected<EngineTable> t = ReadEngineTable(text, file);
      SEAM_CHECK(t.ok(), t.error().message);
      out.push_back(*std::move(t));
    }
    std::stable_sort(out.begin(), out.end(), ComesFirst);
    return out;
  }();
  return tables;
}

}  // namespace

std::vector<const EngineTable*> TablesOf(Engine e) {
  std::vector<const EngineTable*> out;
  for (const EngineTable& t : AllTables()) {
    if (t.engine == e) out.push_back(&t);
  }
  return out;
}

Expected<const EngineTable*> TableFor(Engine e, std::string_view version) {
  const std::vector<const EngineTable*> tables = TablesOf(e);
  SEAM_CHECK(!tables.empty(), "an engine without a flag table");
  if (version.empty()) return tables.front();
  std::vector<std::string_view> known;
  for (const EngineTable* t : tables) {
    if (t->version == version) return t;
    known.push_back(t->version);
  }
  return InvalidArgument(fmt::format("--engine-version: seam has no table of {} {}; it reads {} {}", DisplayName(e),
                                     version, DisplayName(e), fmt::join(known, ", ")));
}

}  // namespace seam::engine
