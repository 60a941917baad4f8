// Plan <-> compact text: one line per step, indentation for structure. The
// grammar is in include/seam/plan_io.h. The reader is strict: every token is
// read or rejected, every count is capped, and an error names file:line and
// what was expected there.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "seam/plan_io.h"
#include "seam/printable.h"

#include "plan/read_limits.h"
#include "seam/knobs.h"

namespace seam {
namespace {

// ---- writing ----

std::string RowsText(const std::optional<Rows>& r) { return r ? std::string(Name(*r)) : "none"; }

template <class T>
std::string Arrow(const T& a, const T& b) {
  return a == b ? std::string(Name(a)) : fmt::format("{}->{}", Name(a), Name(b));
}

std::string StepText(const Step& s) {
  std::string out(Name(s.kind));
  if (s.group) out += fmt::format("({})", Name(*s.group));
  out += fmt::format(" {} {}", Name(s.operand), Arrow(s.rows_in, s.rows_out));
  if (s.owed_before != Owed::kNothing || s.owed_after != Owed::kNothing) {
    out += " owes=" + Arrow(s.owed_before, s.owed_after);
  }
  return out + fmt::format(" w={}", s.width);
}

std::string BoundaryText(const Boundary& b) {
  std::string out = "value=none";
  if (b.value) {
    out = fmt::format("value={}", Name(b.value->rows));
    if (b.value->owed != Owed::kNothing) out += fmt::format(" owes={}", Name(b.value->owed));
    if (b.value->update != UpdateKind::kPlainAdd) out += fmt::format(" update={}", Name(b.value->update));
  }
  return out + " residual=" + RowsText(b.residual);
}

std::string_view YesNo(bool b) { return b ? "yes" : "no"; }

// Only the facts that differ from a bare declaration of the same kind.
std::string DeclText(const StageDecl& d) {
  const StageDecl bare{.kind = d.kind};
  std::string out(Name(d.kind));
  if (d.attention_sum != bare.attention_sum) out += fmt::format(" attention_sum={}", Name(d.attention_sum));
  if (d.gathers_input != bare.gathers_input) out += fmt::format(" gathers_input={}", YesNo(d.gathers_input));
  if (d.update != bare.update) out += fmt::format(" update={}", Name(d.update));
  if (d.read != bare.read) out += fmt::format(" read={}", Name(d.read));
  const std::pair<const char*, int> sizes[] = {{"gather_width", d.gather_width}, {"top_k", d.top_k}};
  for (const auto& [key, v] : sizes) {
    if (v != 0) out += fmt::format(" {}={}", key, v);
  }
  if (d.a2a != bare.a2a) out += fmt::format(" a2a={}", YesNo(d.a2a));
  const std::pair<const char*, int> more[] = {
      {"window", d.window}, {"kv_heads", d.kv_heads}, {"ffn_width", d.ffn_width}};
  for (const auto& [key, v] : more) {
    if (v != 0) out += fmt::format(" {}={}", key, v);
  }
  return out;
}

void WriteSteps(std::string& out, std::string_view indent, std::string_view section, const std::vector<Step>& steps) {
  for (const Step& s : steps) out += fmt::format("{}{} {}\n", indent, section, StepText(s));
}

void WriteStage(std::string& out, const StagePlan& s) {
  out += fmt::format("  stage {} layer {} {}\n", s.index, s.layer, DeclText(s.decl));
  out += fmt::format("    arrives {}\n", BoundaryText(s.arrives));
  out += fmt::format("    runs input={} residual={}\n", RowsText(s.input), RowsText(s.residual));
  WriteSteps(out, "    ", "entry", s.entry);
  WriteSteps(out, "    ", "compute", s.compute);
  WriteSteps(out, "    ", "exit", s.exit);
  out += fmt::format("    departs {}\n", BoundaryText(s.departs));
}

// A model name is one token: a bare word, or quoted with every byte that is
// not a printable non-space character (and " \\ =) written as \\xHH.
bool IsBare(char c) { return c > ' ' && c < 127 && c != '"' && c != '\\' && c != '='; }

std::string ModelText(const std::string& name) {
  if (!name.empty() && std::all_of(name.begin(), name.end(), IsBare)) return name;
  std::string out = "\"";
  for (char c : name) {
    out += IsBare(c) ? std::string(1, c) : fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  }
  return out + "\"";
}

// A knob as the header writes it: a count, yes or no, an enum's name, a
// layer split (1+3, or - for an even one).
std::string KnobText(const Knob& k, const ParallelConfig& c) {
  const KnobValue v = ValueOf(k, c);
  if (const auto* on = std::get_if<bool>(&v)) return std::string(YesNo(*on));
  if (const auto* split = std::get_if<std::vector<int>>(&v)) return split->empty() ? "-" : SplitText(*split);
  if (const auto* n = std::get_if<int>(&v)) return std::to_string(*n);
  return std::get<std::string>(v);
}

std::string HeaderText(const PlanHeader& h) {
  std::string config;
  for (const Knob* k : TextOrder()) {
    if (k->added_later && !IsSet(*k, h.config)) continue;
    config += fmt::format("{}={} ", k->text, KnobText(*k, h.config));
  }
  return fmt::format("plan {} hidden={} streams={} vocab={} act={} dispatch={} {}pp_rank={} layers={}..{}\n",
                     ModelText(h.model), h.hidden, h.residual_streams, h.vocab, Name(h.wire.act), Name(h.wire.dispatch),
                     config, h.pp_rank, h.first_layer, h.last_layer);
}

// ---- reading ----

using plan_limits::kMaxNumber;
using plan_limits::kMaxRanks;
using plan_limits::kMaxSplit;
using plan_limits::kMaxStages;
using plan_limits::kMaxSteps;

struct ReadError {
  std::string message;
};

// One non-blank, non-comment line: its number, indentation and tokens.
struct TextLine {
  int number = 0;
  int indent = 0;
  std::vector<std::string_view> tokens;
};

class Reader {
 public:
  Reader(std::string_view file, std::vector<TextLine> lines) : file_(file), lines_(std::move(lines)) {}

  bool AtEnd() const { return pos_ >= lines_.size(); }
  // The keyword of the next line at `indent`, or empty when the next line is
  // shallower (or there is none): the end of the enclosing block.
  std::string_view Peek(int indent) const {
    if (AtEnd() || lines_[pos_].indent < indent) return {};
    if (lines_[pos_].indent > indent) {
      Fail(lines_[pos_], fmt::format("expected {} spaces of indentation, got {}", indent, lines_[pos_].indent));
    }
    return lines_[pos_].tokens[0];
  }
  const TextLine& Take() { return lines_[pos_++]; }
  int LastLine() const { return lines_.empty() ? 1 : lines_.back().number; }

  [[noreturn]] void Fail(const TextLine& l, std::string_view why) const { Fail(l.number, why); }
  [[noreturn]] void Fail(int line, std::string_view why) const {
    throw ReadError{fmt::format("{}:{}: {}", file_, line, why)};
  }

 private:
  std::string_view file_;
  std::vector<TextLine> lines_;
  size_t pos_ = 0;
};

// The key=value tokens of a line after its positional ones. Each key may be
// given once; a key the line does not take is an error that lists those it does.
class Fields {
 public:
  Fields(const Reader& r, const TextLine& l, size_t positional, std::vector<std::string_view> keys)
      : r_(r), l_(l), keys_(std::move(keys)) {
    for (size_t i = positional; i < l.tokens.size(); ++i) {
      const std::string_view t = l.tokens[i];
      const size_t eq = t.find('=');
      if (eq == std::string_view::npos || eq == 0) Fail(fmt::format("expected key=value, got '{}'", t));
      const std::string_view key = t.substr(0, eq);
      if (std::find(keys_.begin(), keys_.end(), key) == keys_.end()) {
        Fail(fmt::format("unknown key '{}'; expected: {}", key, fmt::join(keys_, ", ")));
      }
      if (!values_.emplace(key, t.substr(eq + 1)).second) Fail(fmt::format("'{}' given twice", key));
    }
  }
  std::optional<std::string_view> Find(std::string_view key) const {
    auto it = values_.find(key);
    return it == values_.end() ? std::nullopt : std::optional(it->second);
  }
  std::string_view Get(std::string_view key) const {
    std::optional<std::string_view> v = Find(key);
    if (!v) Fail(fmt::format("missing '{}='", key));
    return *v;
  }
  [[noreturn]] void Fail(std::string_view why) const { r_.Fail(l_, why); }

 private:
  const Reader& r_;
  const TextLine& l_;
  std::vector<std::string_view> keys_;
  std::map<std::string_view, std::string_view, std::less<>> values_;
};

int Number(const Reader& r, const TextLine& l, std::string_view what, std::string_view text, int lo = 0,
           long long hi = kMaxNumber) {
  long long v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || text[0] == '-' || text[0] == '+' || ec == std::errc::invalid_argument || ptr != end) {
    r.Fail(l, fmt::format("{} '{}' is not a number", what, text));
  }
  if (ec == std::errc::result_out_of_range || v < lo || v > hi) {
    r.Fail(l, fmt::format("{} {} is out of range ({}..{})", what, text, lo, hi));
  }
  return static_cast<int>(v);
}

// Parses `text` with one of the Parse* functions; its message names the
// accepted spellings.
template <class F>
auto As(const Reader& r, const TextLine& l, std::string_view text, F parse) {
  auto parsed = parse(text);
  if (!parsed) r.Fail(l, parsed.error().message);
  return *parsed;
}

bool YesNoOf(const Reader& r, const TextLine& l, std::string_view key, std::string_view text) {
  if (text == "yes") return true;
  if (text == "no") return false;
  r.Fail(l, fmt::format("{}={} must be yes or no", key, text));
}

// "a" or "a->b": the same on both sides, or a transition.
std::pair<std::string_view, std::string_view> Sides(std::string_view text) {
  const size_t arrow = text.find("->", 1);
  if (arrow == std::string_view::npos) return {text, text};
  return {text.substr(0, arrow), text.substr(arrow + 2)};
}

void ExpectCount(const Reader& r, const TextLine& l, size_t count, std::string_view usage) {
  if (l.tokens.size() < count) r.Fail(l, fmt::format("truncated line; expected '{}'", usage));
}

void ExpectKeyword(const Reader& r, const TextLine& l, size_t i, std::string_view keyword, std::string_view usage) {
  if (l.tokens.size() <= i || l.tokens[i] != keyword) {
    r.Fail(l, fmt::format("expected '{}' as word {} of '{}'", keyword, i + 1, usage));
  }
}

class PlanReader {
 public:
  explicit PlanReader(Reader& r) : r_(r) {}

  Plan ReadPlan() {
    const TextLine& l = r_.Take();
    PlanHeader h = ReadHeader(l);
    cfg_ = h.config;
    std::vector<LinePlan> lines;
    while (r_.Peek(0) == "line") {
      const TextLine& at = r_.Take();
      lines.push_back(ReadLine(at));
      for (size_t i = 0; i + 1 < lines.size(); ++i) {
        if (lines[i].variant == lines.back().variant) r_.Fail(at, "the plan has this batch variant twice");
      }
    }
    return Plan(std::move(h), std::move(lines));
  }

 private:
  // The header's keys: the plan's own, its configuration's knobs, its place in the pipeline.
  static std::vector<std::string_view> HeaderKeys() {
    std::vector<std::string_view> keys = {"hidden", "streams", "vocab", "act", "dispatch"};
    for (const Knob* k : TextOrder()) keys.push_back(k->text);
    keys.insert(keys.end(), {"pp_rank", "layers"});
    return keys;
  }

  static const std::string& HeaderUsage() {
    static const std::string usage = [] {
      std::string out = "plan MODEL";
      for (std::string_view key : HeaderKeys()) out += fmt::format(" {}=", key);
      return out + "FIRST..LAST";
    }();
    return usage;
  }

  PlanHeader ReadHeader(const TextLine& l) {
    ExpectKeyword(r_, l, 0, "plan", HeaderUsage());
    ExpectCount(r_, l, 2, HeaderUsage());
    const Fields f(r_, l, 2, HeaderKeys());
    ParallelConfig c;
    for (const Knob& k : Knobs()) {
      if (Status s = SetValue(k, c, ReadKnob(k, f, l)); !s.ok()) r_.Fail(l, s.error().message);
    }
    if (Status s = Validate(c); !s.ok() && s.error().code != ErrorCode::kUnsupported) r_.Fail(l, s.error().message);
    const std::string_view layers = f.Get("layers");
    const size_t dots = layers.find("..");
    if (dots == std::string_view::npos) r_.Fail(l, fmt::format("layers={} must be FIRST..LAST", layers));
    PlanHeader h{.model = Model(l, l.tokens[1]),
                 .hidden = Int(f, l, "hidden", 1),
                 .residual_streams = Int(f, l, "streams", 1),
                 .vocab = Int(f, l, "vocab"),
                 .wire = {.act = As(r_, l, f.Get("act"), ParseWireDtype),
                          .dispatch = As(r_, l, f.Get("dispatch"), ParseWireDtype)},
                 .config = std::move(c),
                 .pp_rank = Int(f, l, "pp_rank"),
                 .first_layer = Number(r_, l, "first layer", layers.substr(0, dots)),
                 .last_layer = Number(r_, l, "last layer", layers.substr(dots + 2))};
    if (h.last_layer < h.first_layer) r_.Fail(l, fmt::format("layers={} ends before it starts", layers));
    return h;
  }

  int Int(const Fields& f, const TextLine& l, std::string_view key, int lo = 0, long long hi = kMaxNumber) {
    return Number(r_, l, key, f.Get(key), lo, hi);
  }

  // A count that stands for a width may be 0 (the default width); other counts are at least 1.
  KnobValue ReadKnob(const Knob& k, const Fields& f, const TextLine& l) {
    if (k.added_later && !f.Find(k.text)) return ValueOf(k, ParallelConfig{});
    const std::string_view text = f.Get(k.text);
    switch (KindOf(k)) {
      case KnobKind::kCount: return Number(r_, l, k.text, text, k.size != nullptr ? 0 : 1);
      case KnobKind::kBool: return YesNoOf(r_, l, k.text, text);
      case KnobKind::kEnum: return std::string(text);
      case KnobKind::kSplit: break;
    }
    return Split(l, k.text, text);
  }

  std::vector<int> Split(const TextLine& l, std::string_view key, std::string_view text) {
    std::vector<int> out;
    if (text == "-") return out;
    while (true) {
      if (out.size() == kMaxSplit) r_.Fail(l, fmt::format("{}= names more than {} ranks", key, kMaxSplit));
      const size_t plus = text.find('+');
      out.push_back(Number(r_, l, key, text.substr(0, plus), 1));
      if (plus == std::string_view::npos) return out;
      text = text.substr(plus + 1);
    }
  }

  // A bare word, or a quoted name with \\xHH escapes.
  std::string Model(const TextLine& l, std::string_view token) {
    if (token.find('=') != std::string_view::npos && token[0] != '"') {
      r_.Fail(l, fmt::format("expected the model name after 'plan', got '{}'", Printable(token)));
    }
    if (token[0] != '"') {
      if (!std::all_of(token.begin(), token.end(), IsBare)) {
        r_.Fail(l, fmt::format("model name '{}' needs quotes", Printable(token)));
      }
      return std::string(token);
    }
    if (token.size() < 2 || token.back() != '"') {
      r_.Fail(l, fmt::format("the model name {} has no closing quote", Printable(token)));
    }
    std::string out;
    for (size_t i = 1; i + 1 < token.size(); ++i) {
      if (token[i] != '\\') {
        if (!IsBare(token[i]))
          r_.Fail(l, fmt::format("the model name {} holds an unescaped '{}'", Printable(token),
                                 Printable(token.substr(i, 1))));
        out += token[i];
        continue;
      }
      unsigned value = 0;
      const std::string_view hex = token.substr(i + 2, 2);
      auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
      if (token.substr(i + 1, 1) != "x" || hex.size() != 2 || ec != std::errc() || ptr != hex.data() + 2 ||
          i + 4 > token.size() - 1) {
        r_.Fail(l, fmt::format("the model name {} has a bad escape; write a byte as \\xHH", Printable(token)));
      }
      out += static_cast<char>(value);
      i += 3;
    }
    return out;
  }

  LinePlan ReadLine(const TextLine& l) {
    if (l.tokens.size() != 2) r_.Fail(l, "expected 'line VARIANT' (ordinary or input-scattered)");
    LinePlan line{.variant = As(r_, l, l.tokens[1], ParseVariant)};
    line.start = ReadSteps(2, "start");
    while (r_.Peek(2) == "stage") {
      if (line.stages.size() == kMaxStages) r_.Fail(r_.Take(), fmt::format("more than {} stages", kMaxStages));
      line.stages.push_back(ReadStage(r_.Take()));
    }
    line.end = ReadEnd(Expect(2, "end", l, line.stages.empty() ? "'start', 'stage' or 'end'" : "'stage' or 'end'"));
    return line;
  }

  EndPlan ReadEnd(const TextLine& l) {
    if (l.tokens.size() != 2) r_.Fail(l, "expected 'end KIND' (final or send)");
    EndPlan end{.kind = As(r_, l, l.tokens[1], ParseEndKind)};
    end.arrives = ReadBoundaryLine(4, "arrives", l);
    end.steps = ReadSteps(4, "step");
    end.head = ReadSteps(4, "head");
    if (const std::string_view next = r_.Peek(4); !next.empty()) {
      r_.Fail(r_.Take(), fmt::format("expected 'step' or 'head', got '{}'", next));
    }
    return end;
  }

  static constexpr std::string_view kStageUsage = "stage INDEX layer LAYER KIND [key=value ...]";

  StagePlan ReadStage(const TextLine& l) {
    ExpectCount(r_, l, 5, kStageUsage);
    ExpectKeyword(r_, l, 2, "layer", kStageUsage);
    StagePlan s{.index = Number(r_, l, "stage index", l.tokens[1]),
                .layer = Number(r_, l, "layer", l.tokens[3]),
                .decl = ReadDecl(l)};
    s.arrives = ReadBoundaryLine(4, "arrives", l);
    ReadRuns(s, l);
    s.entry = ReadSteps(4, "entry");
    s.compute = ReadSteps(4, "compute");
    s.exit = ReadSteps(4, "exit");
    s.departs = ReadBoundaryLine(4, "departs", l, "'entry', 'compute', 'exit' or 'departs' (in this order)");
    if (const std::string_view next = r_.Peek(4); !next.empty()) {
      r_.Fail(r_.Take(), fmt::format("expected nothing after 'departs' in a stage, got '{}'", next));
    }
    return s;
  }

  StageDecl ReadDecl(const TextLine& l) {
    const Fields f(r_, l, 5,
                   {"attention_sum", "gathers_input", "update", "read", "gather_width", "top_k", "a2a", "window",
                    "kv_heads", "ffn_width"});
    StageDecl d{.kind = As(r_, l, l.tokens[4], ParseStageKind)};
    if (auto v = f.Find("attention_sum")) d.attention_sum = As(r_, l, *v, ParseAttentionSum);
    if (auto v = f.Find("gathers_input")) d.gathers_input = YesNoOf(r_, l, "gathers_input", *v);
    if (auto v = f.Find("update")) d.update = As(r_, l, *v, ParseUpdateKind);
    if (auto v = f.Find("read")) d.read = As(r_, l, *v, ParseReadKind);
    if (auto v = f.Find("a2a")) d.a2a = YesNoOf(r_, l, "a2a", *v);
    const std::pair<const char*, int*> sizes[] = {{"gather_width", &d.gather_width},
                                                  {"top_k", &d.top_k},
                                                  {"window", &d.window},
                                                  {"kv_heads", &d.kv_heads},
                                                  {"ffn_width", &d.ffn_width}};
    for (const auto& [key, field] : sizes) {
      if (auto v = f.Find(key)) *field = Number(r_, l, key, *v);
    }
    return d;
  }

  void ReadRuns(StagePlan& s, const TextLine& stage) {
    const TextLine& l = Expect(4, "runs", stage);
    const Fields f(r_, l, 1, {"input", "residual"});
    s.input = OptionalRows(l, f.Get("input"));
    s.residual = OptionalRows(l, f.Get("residual"));
  }

  // The next line, which must be `keyword` at `indent` (a child of `parent`);
  // `expected` says what could have come there.
  const TextLine& Expect(int indent, std::string_view keyword, const TextLine& parent, std::string_view expected = {}) {
    const std::string_view next = r_.Peek(indent);
    if (next == keyword) return r_.Take();
    const std::string want = expected.empty() ? fmt::format("'{}'", keyword) : std::string(expected);
    if (next.empty()) {
      r_.Fail(r_.AtEnd() ? r_.LastLine() : r_.Take().number,
              fmt::format("expected {} under the '{}' of line {}", want, parent.tokens[0], parent.number));
    }
    r_.Fail(r_.Take(), fmt::format("expected {}, got '{}'", want, next));
  }

  std::vector<Step> ReadSteps(int indent, std::string_view section) {
    std::vector<Step> out;
    while (r_.Peek(indent) == section) {
      const TextLine& l = r_.Take();
      if (out.size() == kMaxSteps) r_.Fail(l, fmt::format("more than {} {} steps", kMaxSteps, section));
      out.push_back(ReadStep(l));
    }
    return out;
  }

  static constexpr std::string_view kStepUsage = "SECTION KIND[(GROUP)] OPERAND ROWS[->ROWS] [owes=O[->O]] w=WIDTH";

  Step ReadStep(const TextLine& l) {
    ExpectCount(r_, l, 4, kStepUsage);
    const Fields f(r_, l, 4, {"owes", "w"});
    std::string_view kind = l.tokens[1];
    Step s;
    if (const size_t open = kind.find('('); open != std::string_view::npos) {
      if (kind.back() != ')') r_.Fail(l, fmt::format("step '{}' has no closing ')'", kind));
      s.group = As(r_, l, kind.substr(open + 1, kind.size() - open - 2), ParseGroup);
      kind = kind.substr(0, open);
    }
    s.kind = As(r_, l, kind, ParseStepKind);
    s.operand = As(r_, l, l.tokens[2], ParseOperand);
    const auto [in, out] = Sides(l.tokens[3]);
    s.rows_in = RowsOf(l, in);
    s.rows_out = RowsOf(l, out);
    const auto [before, after] = Sides(f.Find("owes").value_or("-"));
    s.owed_before = As(r_, l, before, ParseOwed);
    s.owed_after = As(r_, l, after, ParseOwed);
    s.width = Number(r_, l, "width", f.Get("w"));
    return s;
  }

  Boundary ReadBoundaryLine(int indent, std::string_view keyword, const TextLine& parent,
                            std::string_view expected = {}) {
    const TextLine& l = Expect(indent, keyword, parent, expected);
    const Fields f(r_, l, 1, {"value", "owes", "update", "residual"});
    Boundary b{.residual = OptionalRows(l, f.Get("residual"))};
    const std::string_view value = f.Get("value");
    if (value == "none") {
      if (f.Find("owes") || f.Find("update")) r_.Fail(l, "owes= and update= need a value (value=none)");
      return b;
    }
    b.value = ValueFacts{.rows = RowsOf(l, value),
                         .owed = As(r_, l, f.Find("owes").value_or("-"), ParseOwed),
                         .update = As(r_, l, f.Find("update").value_or("plain-add"), ParseUpdateKind)};
    return b;
  }

  Rows RowsOf(const TextLine& l, std::string_view text) {
    return As(r_, l, text, [&](std::string_view t) { return ParseRows(t, cfg_); });
  }
  std::optional<Rows> OptionalRows(const TextLine& l, std::string_view text) {
    if (text == "none") return std::nullopt;
    return RowsOf(l, text);
  }

  Reader& r_;
  ParallelConfig cfg_;
};

// Splits the text into lines, dropping blank ones and # comments; a tab or a
// carriage return is an error (indentation is spaces only).
std::vector<TextLine> Lex(std::string_view file, std::string_view text, int first_line) {
  std::vector<TextLine> out;
  int number = first_line;
  for (size_t start = 0; start < text.size(); ++number) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (const size_t bad = line.find_first_of("\t\r\v\f"); bad != std::string_view::npos) {
      throw ReadError{fmt::format("{}:{}: a tab or carriage return at column {}; use spaces and \\n line ends", file,
                                  number, bad + 1)};
    }
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string_view::npos || line[first] == '#') continue;
    TextLine l{.number = number, .indent = static_cast<int>(first)};
    for (size_t i = first; i < line.size();) {
      const size_t stop = std::min(line.find(' ', i), line.size());
      l.tokens.push_back(line.substr(i, stop - i));
      i = line.find_first_not_of(' ', stop);
      if (i == std::string_view::npos) break;
    }
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace

std::string ToText(const Plan& plan) {
  std::string out = HeaderText(plan.header());
  for (const LinePlan& line : plan.lines()) {
    out += fmt::format("line {}\n", Name(line.variant));
    WriteSteps(out, "  ", "start", line.start);
    for (const StagePlan& s : line.stages) WriteStage(out, s);
    out += fmt::format("  end {}\n", Name(line.end.kind));
    out += fmt::format("    arrives {}\n", BoundaryText(line.end.arrives));
    WriteSteps(out, "    ", "step", line.end.steps);
    WriteSteps(out, "    ", "head", line.end.head);
  }
  return out;
}

std::string ToText(const Pipeline& ranks) {
  std::string out;
  for (const Plan& p : ranks) out += ToText(p);
  return out;
}

Expected<Pipeline> PipelineFromText(std::string_view text, std::string_view file, int first_line) {
  try {
    Reader r(file, Lex(file, text, first_line));
    if (r.AtEnd()) r.Fail(first_line, "no plan here; expected a line 'plan MODEL ...'");
    Pipeline ranks;
    while (!r.AtEnd()) {
      const std::string_view next = r.Peek(0);
      if (next != "plan") r.Fail(r.Take(), fmt::format("expected a line 'plan MODEL ...', got '{}'", next));
      if (ranks.size() == kMaxRanks) r.Fail(r.Take(), fmt::format("more than {} plans", kMaxRanks));
      ranks.push_back(PlanReader(r).ReadPlan());
    }
    return ranks;
  } catch (const ReadError& e) {
    return Malformed(e.message);
  }
}

Expected<Plan> PlanFromText(std::string_view text, std::string_view file) {
  Expected<Pipeline> ranks = PipelineFromText(text, file);
  if (!ranks) return ranks.error();
  if (ranks->size() != 1) {
    return Malformed(fmt::format("{}: holds {} plans; expected one", file, ranks->size()));
  }
  return std::move(ranks->front());
}

}  // namespace seam
