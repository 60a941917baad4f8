// Plan <-> JSON. The reader walks the document with a path so its errors say
// where the bad field is ("lines[0].stages[3].entry[1].group").
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "seam/plan_io.h"

#include "core/strict_json.h"

namespace seam {
namespace {

using nlohmann::json;
// Format 2: wire dtypes instead of a byte count; a pipeline is always written
// as one, even of one rank.
constexpr int kFormatVersion = 2;

// ---- writing ----

json RowsJson(const std::optional<Rows>& r) { return r ? json(Name(*r)) : json(nullptr); }

json StepJson(const Step& s, const PlanHeader& h) {
  return {{"step", Name(s.kind)},
          {"operand", Name(s.operand)},
          {"group", s.group ? json(Name(*s.group)) : json(nullptr)},
          {"rows", {Name(s.rows_in), Name(s.rows_out)}},
          {"owes", {Name(s.owed_before), Name(s.owed_after)}},
          {"width", s.width},
          {"bytes_per_token", BytesPerToken(s, h)}};
}

json StepsJson(const std::vector<Step>& steps, const PlanHeader& h) {
  json out = json::array();
  for (const Step& s : steps) out.push_back(StepJson(s, h));
  return out;
}

json BoundaryJson(const Boundary& b) {
  json value = nullptr;
  if (b.value) value = {{"rows", Name(b.value->rows)}, {"owes", Name(b.value->owed)}, {"update", Name(b.value->update)}};
  return {{"value", value}, {"residual", RowsJson(b.residual)}};
}

json DeclJson(const StageDecl& d) {
  return {{"kind", Name(d.kind)},     {"attention_sum", Name(d.attention_sum)},
          {"gathers_input", d.gathers_input}, {"update", Name(d.update)},
          {"read", Name(d.read)},     {"gather_width", d.gather_width},
          {"top_k", d.top_k},         {"a2a", d.a2a},
          {"window", d.window},       {"kv_heads", d.kv_heads},
          {"ffn_width", d.ffn_width}};
}

json StageJson(const StagePlan& s, const PlanHeader& h) {
  return {{"index", s.index},           {"layer", s.layer},
          {"decl", DeclJson(s.decl)},   {"arrives", BoundaryJson(s.arrives)},
          {"input", RowsJson(s.input)}, {"residual", RowsJson(s.residual)},
          {"entry", StepsJson(s.entry, h)}, {"compute", StepsJson(s.compute, h)},
          {"exit", StepsJson(s.exit, h)},   {"departs", BoundaryJson(s.departs)}};
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
  std::vector<Node> Items() const {
    if (!j_.is_array()) Fail("is not an array");
    std::vector<Node> out;
    for (size_t i = 0; i < j_.size(); ++i) out.emplace_back(j_[i], fmt::format("{}[{}]", path_, i));
    return out;
  }
  bool IsNull() const { return j_.is_null(); }
  // An integer in [lo, 1e9]; plans hold sizes, indices and widths.
  int Int(int lo = 0, int hi = 1'000'000'000) const {
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

ParallelConfig ReadConfig(const Node& n) {
  ParallelConfig c{.tp = n["tp"].Int(),
                   .attn_dp = n["attn_dp"].Int(),
                   .dense_tp = n["dense_tp"].Int(),
                   .moe = n["moe"].As(ParseMoeMode),
                   .ep = n["ep"].Int(),
                   .dp_lm_head = n["dp_lm_head"].Bool(),
                   .input_scattered = n["input_scattered"].Bool(),
                   .reduction = n["reduction"].As(ParseReduction),
                   .pp = n["pp"].Int()};
  for (const Node& v : n["pp_split"].Items()) c.pp_split.push_back(v.Int());
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
  const std::vector<Node> rows = n["rows"].Items();
  const std::vector<Node> owes = n["owes"].Items();
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
  for (const Node& s : n.Items()) out.push_back(ReadStep(s, cfg));
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
  for (const Node& s : n["stages"].Items()) line.stages.push_back(ReadStage(s, cfg));
  const Node end = n["end"];
  line.end = {end["kind"].As(ParseEndKind), ReadBoundary(end["arrives"], cfg), ReadSteps(end["steps"], cfg),
              ReadSteps(end["head"], cfg)};
  return line;
}

Plan ReadPlan(const Node& n) {
  if (n["seam_plan"].Int() != kFormatVersion) n["seam_plan"].Fail(fmt::format("expected format {}", kFormatVersion));
  const std::vector<Node> layers = n["layers"].Items();
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
  for (const Node& l : n["lines"].Items()) {
    lines.push_back(ReadLine(l, h.config));
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
      if (lines[i].variant == lines.back().variant) l["variant"].Fail("the plan has this batch variant twice");
    }
  }
  return Plan(std::move(h), std::move(lines));
}


json PlanDoc(const Plan& plan) {
  const PlanHeader& h = plan.header();
  json lines = json::array();
  for (const LinePlan& line : plan.lines()) {
    json stages = json::array();
    for (const StagePlan& s : line.stages) stages.push_back(StageJson(s, h));
    lines.push_back({{"variant", Name(line.variant)},
                     {"start", StepsJson(line.start, h)},
                     {"stages", stages},
                     {"end", {{"kind", Name(line.end.kind)},
                              {"arrives", BoundaryJson(line.end.arrives)},
                              {"steps", StepsJson(line.end.steps, h)},
                              {"head", StepsJson(line.end.head, h)}}},
                     {"bytes_per_token", BytesPerToken(line, h)}});
  }
  const json doc = {{"seam_plan", kFormatVersion}, {"model", h.model},
                    {"hidden", h.hidden},          {"residual_streams", h.residual_streams}, {"vocab", h.vocab},
                    {"act_dtype", Name(h.wire.act)}, {"dispatch_dtype", Name(h.wire.dispatch)},
                    {"config", json(ConfigJson(h.config))},
                    {"pp_rank", h.pp_rank},        {"layers", {h.first_layer, h.last_layer}},
                    {"lines", lines}};
  return doc;
}

Pipeline ReadPipeline(const Node& n) {
  if (n["seam_pipeline"].Int() != kFormatVersion) {
    n["seam_pipeline"].Fail(fmt::format("expected format {}", kFormatVersion));
  }
  Pipeline ranks;
  for (const Node& r : n["ranks"].Items()) ranks.push_back(ReadPlan(r));
  if (ranks.empty()) n["ranks"].Fail("holds no plans");
  return ranks;
}

}  // namespace

std::string ToJson(const Plan& plan) { return PlanDoc(plan).dump(2) + "\n"; }

std::string ToJson(const Pipeline& ranks) {
  json docs = json::array();
  for (const Plan& p : ranks) docs.push_back(PlanDoc(p));
  return json{{"seam_pipeline", kFormatVersion}, {"ranks", docs}}.dump(2) + "\n";
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
          {"real_config", e.source == "-" ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json("configs/" + e.source)}};
}

nlohmann::ordered_json ConfigJson(const ParallelConfig& c) {
  return {{"tp", c.tp},
          {"attn_dp", c.attn_dp},
          {"dense_tp", c.dense_tp_size()},
          {"moe", Name(c.moe)},
          {"ep", c.ep_size()},
          {"dp_lm_head", c.dp_lm_head},
          {"input_scattered", c.input_scattered},
          {"reduction", Name(c.reduction)},
          {"pp", c.pp},
          {"pp_split", c.pp_split}};
}

}  // namespace seam
