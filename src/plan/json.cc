// Plan <-> JSON. The reader walks the document with a path so its errors say
// where the bad field is ("lines[0].stages[3].entry[1].group").
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "seam/plan_io.h"

#include "core/strict_json.h"
#include "plan/json_writer.h"
#include "plan/read_limits.h"
#include "seam/knobs.h"

namespace seam {
namespace {

using nlohmann::json;
// Format 2: wire dtypes instead of a byte count; a pipeline is always written
// as one, even of one rank.
// 3: the configuration names cp and dcp (and steps may gather keys or
// queries and exchange partials). A format 2 document, written before
// context parallelism, reads with cp and dcp 1.
constexpr int kFormatVersion = 3;
constexpr int kOldestFormat = 2;

// ---- writing ----
// Each object's keys in sorted order (JsonWriter; nlohmann's order).

void WriteRows(JsonWriter& w, const std::optional<Rows>& r) {
  if (r) {
    w.String(Name(*r));
  } else {
    w.Null();
  }
}

void WritePair(JsonWriter& w, std::string_view a, std::string_view b) {
  w.BeginArray();
  w.String(a);
  w.String(b);
  w.EndArray();
}

void WriteStep(JsonWriter& w, const Step& s, const PlanHeader& h) {
  w.BeginObject();
  w.Field("bytes_per_token", BytesPerToken(s, h));
  w.Key("group");
  if (s.group) {
    w.String(Name(*s.group));
  } else {
    w.Null();
  }
  w.Field("operand", Name(s.operand));
  w.Key("owes");
  WritePair(w, Name(s.owed_before), Name(s.owed_after));
  w.Key("rows");
  WritePair(w, Name(s.rows_in), Name(s.rows_out));
  w.Field("step", Name(s.kind));
  w.Field("width", s.width);
  w.EndObject();
}

void WriteSteps(JsonWriter& w, const std::vector<Step>& steps, const PlanHeader& h) {
  w.BeginArray();
  for (const Step& s : steps) WriteStep(w, s, h);
  w.EndArray();
}

void WriteBoundary(JsonWriter& w, const Boundary& b) {
  w.BeginObject();
  w.Key("residual");
  WriteRows(w, b.residual);
  w.Key("value");
  if (b.value) {
    w.BeginObject();
    w.Field("owes", Name(b.value->owed));
    w.Field("rows", Name(b.value->rows));
    w.Field("update", Name(b.value->update));
    w.EndObject();
  } else {
    w.Null();
  }
  w.EndObject();
}

void WriteDecl(JsonWriter& w, const StageDecl& d) {
  w.BeginObject();
  w.Field("a2a", d.a2a);
  w.Field("attention_sum", Name(d.attention_sum));
  w.Field("ffn_width", d.ffn_width);
  w.Field("gather_width", d.gather_width);
  w.Field("gathers_input", d.gathers_input);
  w.Field("kind", Name(d.kind));
  w.Field("kv_heads", d.kv_heads);
  w.Field("read", Name(d.read));
  w.Field("top_k", d.top_k);
  w.Field("update", Name(d.update));
  w.Field("window", d.window);
  w.EndObject();
}

void WriteStage(JsonWriter& w, const StagePlan& s, const PlanHeader& h) {
  w.BeginObject();
  w.Key("arrives");
  WriteBoundary(w, s.arrives);
  w.Key("compute");
  WriteSteps(w, s.compute, h);
  w.Key("decl");
  WriteDecl(w, s.decl);
  w.Key("departs");
  WriteBoundary(w, s.departs);
  w.Key("entry");
  WriteSteps(w, s.entry, h);
  w.Key("exit");
  WriteSteps(w, s.exit, h);
  w.Field("index", s.index);
  w.Key("input");
  WriteRows(w, s.input);
  w.Field("layer", s.layer);
  w.Key("residual");
  WriteRows(w, s.residual);
  w.EndObject();
}

void WriteLine(JsonWriter& w, const LinePlan& line, const PlanHeader& h) {
  w.BeginObject();
  w.Field("bytes_per_token", BytesPerToken(line, h));
  w.Key("end");
  w.BeginObject();
  w.Key("arrives");
  WriteBoundary(w, line.end.arrives);
  w.Key("head");
  WriteSteps(w, line.end.head, h);
  w.Field("kind", Name(line.end.kind));
  w.Key("steps");
  WriteSteps(w, line.end.steps, h);
  w.EndObject();
  w.Key("stages");
  w.BeginArray();
  for (const StagePlan& s : line.stages) WriteStage(w, s, h);
  w.EndArray();
  w.Key("start");
  WriteSteps(w, line.start, h);
  w.Field("variant", Name(line.variant));
  w.EndObject();
}

void WritePlan(JsonWriter& w, const Plan& plan) {
  const PlanHeader& h = plan.header();
  w.BeginObject();
  w.Field("act_dtype", Name(h.wire.act));
  w.Key("config");
  w.Value(json(ConfigJson(h.config)));
  w.Field("dispatch_dtype", Name(h.wire.dispatch));
  w.Field("hidden", h.hidden);
  w.Key("layers");
  w.BeginArray();
  w.Int(h.first_layer);
  w.Int(h.last_layer);
  w.EndArray();
  w.Key("lines");
  w.BeginArray();
  for (const LinePlan& line : plan.lines()) WriteLine(w, line, h);
  w.EndArray();
  w.Field("model", h.model);
  w.Field("pp_rank", h.pp_rank);
  w.Field("residual_streams", h.residual_streams);
  w.Field("seam_plan", kFormatVersion);
  w.Field("vocab", h.vocab);
  w.EndObject();
}

// ---- reading ----

// A JSON node and the path that reached it; every accessor throws a
// ReadError naming the path.
struct ReadError {
  std::string message;
};

class Node {
 public:
  Node(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  Node operator[](std::string_view key) const {
    if (!j_.is_object()) Fail("is not an object");
    auto it = j_.find(key);
    if (it == j_.end()) throw ReadError{fmt::format("{}: missing field '{}'", Where(), key)};
    return Node(*it, path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key));
  }
  // The elements of an array of at most `max` (plan_limits) `what`.
  std::vector<Node> Items(size_t max, std::string_view what) const {
    if (!j_.is_array()) Fail("is not an array");
    if (j_.size() > max) Fail(fmt::format("holds more than {} {}", max, what));
    std::vector<Node> out;
    for (size_t i = 0; i < j_.size(); ++i) out.emplace_back(j_[i], fmt::format("{}[{}]", path_, i));
    return out;
  }
  bool IsNull() const { return j_.is_null(); }
  bool Has(std::string_view key) const {
    if (!j_.is_object()) Fail("is not an object");
    return j_.contains(key);
  }
  // An integer in [lo, 1e9]; plans hold sizes, indices and widths.
  int Int(int lo = 0, int hi = plan_limits::kMaxNumber) const {
    if (!j_.is_number_integer()) Fail("is not an integer");
    if (j_.is_number_unsigned() && j_.get<unsigned long long>() > static_cast<unsigned long long>(hi)) {
      Fail(fmt::format("is out of range ({} to {})", lo, hi));
    }
    const auto v = j_.get<long long>();
    if (v < lo || v > hi) Fail(fmt::format("is out of range ({} to {})", lo, hi));
    return static_cast<int>(v);
  }
  bool Bool() const {
    if (!j_.is_boolean()) Fail("is not true or false");
    return j_.get<bool>();
  }
  std::string String() const {
    if (!j_.is_string()) Fail("is not a string");
    return j_.get<std::string>();
  }
  // Parses a string field with one of the Parse* functions.
  template <class F>
  auto As(F parse) const {
    auto parsed = parse(String());
    if (!parsed) Fail(parsed.error().message);
    return *parsed;
  }
  [[noreturn]] void Fail(std::string_view why) const { throw ReadError{fmt::format("{}: {}", Where(), why)}; }

 private:
  std::string Where() const { return path_.empty() ? "plan" : path_; }
  const json& j_;
  std::string path_;
};

// A knob's value as its kind (seam/knobs.h); a count is at least 0 here and
// Validate says what else it must be.
KnobValue ReadKnob(const Knob& k, const Node& n) {
  switch (KindOf(k)) {
    case KnobKind::kCount: return n.Int();
    case KnobKind::kBool: return n.Bool();
    case KnobKind::kEnum: return n.String();
    case KnobKind::kSplit: break;
  }
  std::vector<int> split;
  for (const Node& v : n.Items(plan_limits::kMaxSplit, "layer counts")) split.push_back(v.Int());
  return split;
}

ParallelConfig ReadConfig(const Node& n) {
  ParallelConfig c;
  for (const Knob& k : Knobs()) {
    if (k.added_later && !n.Has(k.json)) continue;  // written before the knob: its default
    const Node v = n[k.json];
    if (Status s = SetValue(k, c, ReadKnob(k, v)); !s.ok()) v.Fail(s.error().message);
  }
  if (Status s = Validate(c); !s.ok() && s.error().code != ErrorCode::kUnsupported) n.Fail(s.error().message);
  return c;
}

std::optional<Rows> ReadOptionalRows(const Node& n, const ParallelConfig& cfg) {
  if (n.IsNull()) return std::nullopt;
  return n.As([&](const std::string& t) { return ParseRows(t, cfg); });
}

Rows ReadRows(const Node& n, const ParallelConfig& cfg) {
  return n.As([&](const std::string& t) { return ParseRows(t, cfg); });
}

Step ReadStep(const Node& n, const ParallelConfig& cfg) {
  const std::vector<Node> rows = n["rows"].Items(plan_limits::kMaxSteps, "entries");
  const std::vector<Node> owes = n["owes"].Items(plan_limits::kMaxSteps, "entries");
  if (rows.size() != 2) n["rows"].Fail("needs [in, out]");
  if (owes.size() != 2) n["owes"].Fail("needs [before, after]");
  const Node group = n["group"];
  return {.kind = n["step"].As(ParseStepKind),
          .operand = n["operand"].As(ParseOperand),
          .group = group.IsNull() ? std::nullopt : std::optional(group.As(ParseGroup)),
          .rows_in = ReadRows(rows[0], cfg),
          .rows_out = ReadRows(rows[1], cfg),
          .owed_before = owes[0].As(ParseOwed),
          .owed_after = owes[1].As(ParseOwed),
          .width = n["width"].Int()};
}

std::vector<Step> ReadSteps(const Node& n, const ParallelConfig& cfg) {
  std::vector<Step> out;
  for (const Node& s : n.Items(plan_limits::kMaxSteps, "steps")) out.push_back(ReadStep(s, cfg));
  return out;
}

Boundary ReadBoundary(const Node& n, const ParallelConfig& cfg) {
  Boundary b{.residual = ReadOptionalRows(n["residual"], cfg)};
  const Node v = n["value"];
  if (!v.IsNull()) {
    b.value = ValueFacts{ReadRows(v["rows"], cfg), v["owes"].As(ParseOwed), v["update"].As(ParseUpdateKind)};
  }
  return b;
}

StageDecl ReadDecl(const Node& n) {
  return {.kind = n["kind"].As(ParseStageKind),
          .attention_sum = n["attention_sum"].As(ParseAttentionSum),
          .gathers_input = n["gathers_input"].Bool(),
          .update = n["update"].As(ParseUpdateKind),
          .read = n["read"].As(ParseReadKind),
          .gather_width = n["gather_width"].Int(),
          .top_k = n["top_k"].Int(),
          .a2a = n["a2a"].Bool(),
          .window = n["window"].Int(),
          .kv_heads = n["kv_heads"].Int(),
          .ffn_width = n["ffn_width"].Int()};
}

StagePlan ReadStage(const Node& n, const ParallelConfig& cfg) {
  return {.index = n["index"].Int(),
          .layer = n["layer"].Int(),
          .decl = ReadDecl(n["decl"]),
          .arrives = ReadBoundary(n["arrives"], cfg),
          .input = ReadOptionalRows(n["input"], cfg),
          .residual = ReadOptionalRows(n["residual"], cfg),
          .entry = ReadSteps(n["entry"], cfg),
          .compute = ReadSteps(n["compute"], cfg),
          .exit = ReadSteps(n["exit"], cfg),
          .departs = ReadBoundary(n["departs"], cfg)};
}

LinePlan ReadLine(const Node& n, const ParallelConfig& cfg) {
  LinePlan line{.variant = n["variant"].As(ParseVariant), .start = ReadSteps(n["start"], cfg)};
  for (const Node& s : n["stages"].Items(plan_limits::kMaxStages, "stages")) line.stages.push_back(ReadStage(s, cfg));
  const Node end = n["end"];
  line.end = {end["kind"].As(ParseEndKind), ReadBoundary(end["arrives"], cfg), ReadSteps(end["steps"], cfg),
              ReadSteps(end["head"], cfg)};
  return line;
}

void CheckFormat(const Node& version) {
  const int v = version.Int();
  if (v < kOldestFormat || v > kFormatVersion) {
    version.Fail(
        fmt::format("expected format {} (or {}, written before context parallelism)", kFormatVersion, kOldestFormat));
  }
}

Plan ReadPlan(const Node& n) {
  CheckFormat(n["seam_plan"]);
  const std::vector<Node> layers = n["layers"].Items(plan_limits::kMaxSteps, "entries");
  if (layers.size() != 2) n["layers"].Fail("needs [first, last)");
  PlanHeader h{.model = n["model"].String(),
               .hidden = n["hidden"].Int(1),
               .residual_streams = n["residual_streams"].Int(1),
               .vocab = n["vocab"].Int(),
               .wire = {.act = n["act_dtype"].As(ParseWireDtype), .dispatch = n["dispatch_dtype"].As(ParseWireDtype)},
               .config = ReadConfig(n["config"]),
               .pp_rank = n["pp_rank"].Int(),
               .first_layer = layers[0].Int(),
               .last_layer = layers[1].Int()};
  std::vector<LinePlan> lines;
  for (const Node& l : n["lines"].Items(plan_limits::kMaxLines, "lines")) {
    lines.push_back(ReadLine(l, h.config));
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
      if (lines[i].variant == lines.back().variant) l["variant"].Fail("the plan has this batch variant twice");
    }
  }
  return Plan(std::move(h), std::move(lines));
}

Pipeline ReadPipeline(const Node& n) {
  CheckFormat(n["seam_pipeline"]);
  Pipeline ranks;
  for (const Node& r : n["ranks"].Items(plan_limits::kMaxRanks, "plans")) ranks.push_back(ReadPlan(r));
  if (ranks.empty()) n["ranks"].Fail("holds no plans");
  return ranks;
}

}  // namespace

namespace {

// At least what a plan's JSON takes, so the text is allocated once: growing
// it by doubling copies it and faults in fresh pages each time, and pages
// reserved but never written cost nothing.
size_t JsonBytes(const Plan& plan) {
  size_t bytes = 4096;
  for (const LinePlan& line : plan.lines()) bytes += 1024 * line.stages.size() + 512 * StepCount(line);
  return bytes;
}

}  // namespace

std::string ToJson(const Plan& plan) {
  std::string out;
  out.reserve(JsonBytes(plan));
  JsonWriter w(out);
  WritePlan(w, plan);
  out += '\n';
  return out;
}

std::string ToJson(const Pipeline& ranks) {
  std::string out;
  size_t bytes = 64;
  for (const Plan& p : ranks) bytes += JsonBytes(p);
  out.reserve(bytes);
  JsonWriter w(out);
  w.BeginObject();
  w.Key("ranks");
  w.BeginArray();
  for (const Plan& p : ranks) WritePlan(w, p);
  w.EndArray();
  w.Field("seam_pipeline", kFormatVersion);
  w.EndObject();
  out += '\n';
  return out;
}

namespace {

Error PlanJsonError(const JsonError& e) {
  if (e.problem == JsonProblem::kSyntax) return Malformed("the plan is not valid JSON");
  return Malformed("the plan: " + e.message);
}

}  // namespace

Expected<Plan> PlanFromJson(std::string_view text) {
  StrictJson<json> parsed = ParseStrictJson<json>(text);
  if (parsed.error) return PlanJsonError(*parsed.error);
  const json doc = std::move(parsed.value);
  try {
    return ReadPlan(Node(doc, ""));
  } catch (const ReadError& e) {
    return Malformed(e.message);
  }
}

Expected<Pipeline> PipelineFromJson(std::string_view text) {
  StrictJson<json> parsed = ParseStrictJson<json>(text);
  if (parsed.error) return PlanJsonError(*parsed.error);
  const json doc = std::move(parsed.value);
  try {
    if (doc.is_object() && doc.contains("seam_pipeline")) return ReadPipeline(Node(doc, ""));
    return Pipeline{ReadPlan(Node(doc, ""))};
  } catch (const ReadError& e) {
    return Malformed(e.message);
  }
}

nlohmann::ordered_json ModelJson(const CatalogueEntry& e) {
  return {{"name", e.name},
          {"summary", e.summary},
          {"stages", PatternOf(e.make())},
          {"features", e.features},
          {"real_config",
           e.source == "-" ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json("configs/" + e.source)}};
}

nlohmann::ordered_json ConfigJson(const ParallelConfig& c) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const Knob& k : Knobs()) {
    out[std::string(k.json)] =
        std::visit([](const auto& v) { return nlohmann::ordered_json(v); }, ResolvedValueOf(k, c));
  }
  return out;
}

}  // namespace seam
