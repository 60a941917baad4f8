#include "engine/argparse.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "engine/translate.h"
#include "seam/spelling.h"

namespace seam::engine {
namespace {

// Bounds on a pasted line: a launch line is a few hundred words.
constexpr size_t kMaxWords = 4096;
constexpr size_t kMaxLineBytes = 1 << 20;

bool IsEnvAssignment(std::string_view w) {
  const size_t eq = w.find('=');
  if (eq == 0 || eq == std::string_view::npos) return false;
  if (!(std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_')) return false;
  return std::all_of(w.begin(), w.begin() + eq,
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// argparse reads -1 and -.5 as values, not flags (neither engine has a
// flag that looks like a number).
bool IsNegativeNumber(std::string_view w) {
  if (w.size() < 2 || w[0] != '-') return false;
  const std::string_view rest = w.substr(1);
  const size_t dot = rest.find('.');
  auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  if (dot == std::string_view::npos) return digits(rest);
  return digits(rest.substr(0, dot)) && dot + 1 < rest.size() && digits(rest.substr(dot + 1));
}

// argparse's test of whether a word is a flag: it starts with -, is not a
// lone -, not a negative number, and holds no space.
bool IsFlagLike(std::string_view w) {
  return w.size() > 1 && w[0] == '-' && !IsNegativeNumber(w) && w.find(' ') == std::string_view::npos;
}

// `python` in an entry stands for any Python: python3, python3.12, a path to one.
bool EntryWordMatches(std::string_view pattern, std::string_view word) {
  if (pattern != "python") return pattern == word;
  const std::string_view base = word.substr(word.rfind('/') + 1);
  if (!base.starts_with("python")) return false;
  const std::string_view version = base.substr(6);
  return std::all_of(version.begin(), version.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

// How many words of `words` from `at` an entry of `t` takes (0: none).
size_t EntryLength(const EngineTable& t, const std::vector<std::string>& words, size_t at) {
  for (const std::vector<std::string>& entry : t.entries) {
    if (at + entry.size() > words.size()) continue;
    bool match = true;
    for (size_t k = 0; k < entry.size() && match; ++k) match = EntryWordMatches(entry[k], words[at + k]);
    if (match) return entry.size();
  }
  return 0;
}

// A command that starts another engine, named to the user.
std::optional<std::string> OtherEngineEntry(Engine self, const std::vector<std::string>& words, size_t at) {
  for (Engine other : {Engine::kSglang, Engine::kVllm}) {
    if (other == self) continue;
    for (const EngineTable* t : TablesOf(other)) {
      const size_t n = EntryLength(*t, words, at);
      if (n > 0) return fmt::format("{}", fmt::join(words.begin() + at, words.begin() + at + n, " "));
    }
  }
  return std::nullopt;
}

struct Resolved {
  const FlagRow* row = nullptr;
  std::string spelled;
  std::optional<std::string> value;  // given with = or attached to a short flag
  bool negated = false;
};

// The rows a long prefix could name, with the spellings it matches.
std::vector<std::pair<const FlagRow*, std::string>> PrefixMatches(const EngineTable& t, std::string_view prefix) {
  std::vector<std::pair<const FlagRow*, std::string>> out;
  for (const FlagRow& f : t.flags) {
    for (const std::string& n : f.names) {
      if (n.starts_with("--") && n.starts_with(prefix)) out.emplace_back(&f, n);
      const std::string negation = "--no-" + n.substr(2);
      if (f.arity == Arity::kBool && n.starts_with("--") && negation.starts_with(prefix))
        out.emplace_back(&f, negation);
    }
  }
  return out;
}

Expected<Resolved> Resolve(const EngineTable& t, std::string_view word, std::vector<std::string>& notes) {
  std::string name(word.substr(0, word.find('=')));
  std::optional<std::string> value;
  if (name.size() < word.size()) value = std::string(word.substr(name.size() + 1));
  if (t.underscores && name.starts_with("--")) {
    // Up to the first dot: a dotted key keeps its own spelling.
    std::replace(name.begin(), name.begin() + static_cast<long>(std::min(name.find('.'), name.size())), '_', '-');
  }
  if (const FlagRow* row = t.Find(name)) return Resolved{row, name, value};
  // --compilation-config.mode=3: one key of a JSON flag, which takes one value.
  if (const size_t dot = name.find('.'); t.dotted && dot != std::string::npos) {
    const FlagRow* row = t.Find(name.substr(0, dot));
    if (row != nullptr && row->arity == Arity::kValue) return Resolved{row, name, value};
  }
  if (name.starts_with("--no-")) {
    const FlagRow* row = t.Find("--" + name.substr(5));
    if (row != nullptr && row->arity == Arity::kBool) return Resolved{row, name, value, true};
  }
  // A one-letter flag takes its value attached: -O3 is -O 3.
  if (!word.starts_with("--") && word.size() > 2) {
    const FlagRow* row = t.Find(word.substr(0, 2));
    if (row != nullptr && row->arity != Arity::kSwitch && row->arity != Arity::kBool) {
      return Resolved{row, std::string(word.substr(0, 2)), std::string(word.substr(2))};
    }
  }
  if (t.abbreviations && name.starts_with("--")) {
    const auto matches = PrefixMatches(t, name);
    std::set<const FlagRow*> rows;
    for (const auto& m : matches) rows.insert(m.first);
    if (rows.size() > 1) {
      std::vector<std::string> spellings;
      for (const auto& m : matches) spellings.push_back(m.second);
      return Refuses(t.engine, fmt::format("ambiguous option: {} could match {}", name, fmt::join(spellings, ", ")));
    }
    if (rows.size() == 1) {
      const auto& [row, spelling] = matches.front();
      notes.push_back(
          fmt::format("{}: {}'s parser reads a unique prefix as {}", name, DisplayName(t.engine), spelling));
      return Resolved{row, name, value, spelling.starts_with("--no-")};
    }
  }
  return Resolved{nullptr, std::string(word), value};
}

std::string OptionStrings(const FlagRow& f) { return fmt::format("{}", fmt::join(f.names, "/")); }

// The values a flag takes from the words after it, as argparse counts them.
Status TakeValues(const EngineTable& t, const std::vector<std::string>& words, size_t& i, const Resolved& r,
                  ReadFlag& out) {
  const FlagRow& f = *r.row;
  auto next_is_value = [&] { return i + 1 < words.size() && !IsFlagLike(words[i + 1]); };
  switch (f.arity) {
    case Arity::kSwitch:
    case Arity::kBool:
      if (r.value) {
        return Refuses(t.engine,
                       fmt::format("argument {}: ignored explicit argument '{}'", OptionStrings(f), *r.value));
      }
      return Status::Ok();
    case Arity::kValue:
    case Arity::kOptional:
      if (r.value)
        out.values.push_back(*r.value);
      else if (next_is_value())
        out.values.push_back(words[++i]);
      if (f.arity == Arity::kValue && out.values.empty()) {
        return Refuses(t.engine, fmt::format("argument {}: expected one argument", OptionStrings(f)));
      }
      return Status::Ok();
    case Arity::kMany:
    case Arity::kAny:
      if (r.value) {
        out.values.push_back(*r.value);
        return Status::Ok();
      }
      while (next_is_value()) out.values.push_back(words[++i]);
      if (f.arity == Arity::kMany && out.values.empty()) {
        return Refuses(t.engine, fmt::format("argument {}: expected at least one argument", OptionStrings(f)));
      }
      return Status::Ok();
  }
  SEAM_CHECK(false, "an unknown arity");
}

// What seam knows of a word the engine does not: another engine's flag, a
// flag of another version, or a near spelling.
std::string HintFor(const EngineTable& t, std::string_view word) {
  if (!IsFlagLike(word)) return "";
  const std::string name(word.substr(0, word.find('=')));
  for (Engine other : {Engine::kSglang, Engine::kVllm}) {
    if (other == t.engine) continue;
    for (const EngineTable* o : TablesOf(other)) {
      if (o->Find(name) != nullptr) return fmt::format("{} is a {} flag", name, DisplayName(other));
    }
  }
  for (const EngineTable* o : TablesOf(t.engine)) {
    if (o != &t && o->Find(name) != nullptr) {
      return fmt::format("{} is a flag of {} {}, not of {}", name, DisplayName(t.engine), o->version, t.version);
    }
  }
  std::vector<std::string> names;
  for (const FlagRow& f : t.flags) names.insert(names.end(), f.names.begin(), f.names.end());
  if (std::optional<std::string> near = Nearest(name, names)) return fmt::format("did you mean {}?", *near);
  return "";
}

Error Unrecognized(const EngineTable& t, const std::vector<std::string>& extras) {
  std::vector<std::string> hints;
  for (const std::string& w : extras) {
    if (std::string h = HintFor(t, w); !h.empty()) hints.push_back(std::move(h));
  }
  std::string message = fmt::format("unrecognized arguments: {}", fmt::join(extras, " "));
  if (!hints.empty()) message += fmt::format(" ({})", fmt::join(hints, "; "));
  return Refuses(t.engine, message);
}

// Environment assignments and the command that starts the engine, before its flags.
Status ReadCommand(const EngineTable& t, const std::vector<std::string>& words, size_t& i, ReadLine& line) {
  while (i < words.size() && IsEnvAssignment(words[i])) {
    const size_t eq = words[i].find('=');
    line.env.emplace_back(words[i].substr(0, eq), words[i].substr(eq + 1));
    ++i;
  }
  if (i == words.size() || IsFlagLike(words[i])) return Status::Ok();
  if (const size_t n = EntryLength(t, words, i); n > 0) {
    i += n;
    return Status::Ok();
  }
  if (std::optional<std::string> other = OtherEngineEntry(t.engine, words, i)) {
    return InvalidArgument(
        fmt::format("'{}' starts another engine, not {}: give that engine's --engine", *other, DisplayName(t.engine)));
  }
  return Status::Ok();
}

}  // namespace

Expected<std::vector<std::string>> ShellWords(std::string_view line) {
  if (line.size() > kMaxLineBytes) {
    return InvalidArgument(
        fmt::format("a launch line of {} bytes; seam reads lines up to {} bytes", line.size(), kMaxLineBytes));
  }
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      else
        word += c;
    } else if (c == '\\' && i + 1 < line.size()) {
      const char next = line[++i];
      if (next == '\n') continue;  // a continued line
      if (quote == '"' && next != '"' && next != '\\' && next != '$' && next != '`') word += '\\';
      word += next;
      in_word = true;
    } else if (quote == '"') {
      if (c == '"')
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) return InvalidArgument(fmt::format("the launch line has an unclosed {} quote", quote));
  if (in_word) words.push_back(std::move(word));
  return words;
}

Expected<ReadLine> ParseLine(const EngineTable& t, const std::vector<std::string>& words) {
  if (words.size() > kMaxWords) {
    return InvalidArgument(
        fmt::format("a launch line of {} words; seam reads lines up to {} words", words.size(), kMaxWords));
  }
  ReadLine line;
  size_t i = 0;
  SEAM_RETURN_IF_ERROR(ReadCommand(t, words, i, line));
  std::vector<std::string> extras;  // what the parser does not know, in order
  bool only_positional = false;     // after a bare --
  for (; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (!only_positional && w == "--") {
      only_positional = true;
      continue;
    }
    if (only_positional || !IsFlagLike(w)) {
      if (t.positional_model && line.positional.empty())
        line.positional = w;
      else
        extras.push_back(w);
      continue;
    }
    Expected<Resolved> r = Resolve(t, w, line.notes);
    if (!r) return r.error();
    if (r->row == nullptr) {
      extras.push_back(w);
      continue;
    }
    ReadFlag flag{.row = r->row, .spelled = r->spelled, .negated = r->negated};
    SEAM_RETURN_IF_ERROR(TakeValues(t, words, i, *r, flag));
    line.flags.push_back(std::move(flag));
  }
  if (!extras.empty()) return Unrecognized(t, extras);
  return line;
}

}  // namespace seam::engine
