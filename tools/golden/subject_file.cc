// One subject's file of the corpus: its scenarios in order, each a pipeline
// in the plan text form, a back-reference to identical plans, or the
// binder's rejection.
#include <fmt/format.h>

#include <map>

#include "corpus.h"
#include "seam/plan_io.h"

namespace seam::golden {
namespace {

// Which token axes the configuration shards rows over: the row names of the
// text form ("attn", "slice") mean the same rows exactly when these agree.
std::pair<bool, bool> RowAxes(const ParallelConfig& cfg) { return {cfg.attn_dp > 1, cfg.attn_tp() > 1}; }

// The plans with the configuration blanked, and the row axes their names
// stand for: equal keys mean plans equal in every leaf but the configuration
// their headers name.
std::string PlansKey(const Pipeline& ranks) {
  Pipeline blank;
  for (const Plan& p : ranks) {
    PlanHeader h = p.header();
    h.config = {};
    blank.emplace_back(std::move(h), p.lines());
  }
  const auto [dp, attn_tp] = RowAxes(ranks.front().config());
  return fmt::format("{} {}\n{}", dp, attn_tp, ToText(blank));
}

// A rejection on one line: backslash and newline escaped.
std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::optional<std::string> Unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (i + 1 == text.size() || (text[i + 1] != '\\' && text[i + 1] != 'n')) return std::nullopt;
    out += text[++i] == 'n' ? '\n' : '\\';
  }
  return out;
}

// The plans of `ranks` as a scenario under `cfg` binds them.
Pipeline WithConfig(Pipeline ranks, const ParallelConfig& cfg) {
  Pipeline out;
  for (Plan& p : ranks) {
    PlanHeader h = p.header();
    h.config = cfg;
    out.emplace_back(std::move(h), p.lines());
  }
  return out;
}

struct ReadError {
  std::string message;
};

// The lines of a file with their numbers (1-based) and offsets.
struct FileLine {
  int number = 0;
  size_t begin = 0;
  std::string_view text;
};

std::vector<FileLine> LinesOf(std::string_view text) {
  std::vector<FileLine> out;
  int number = 1;
  for (size_t start = 0; start < text.size(); ++number) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.push_back({number, start, text.substr(start, end - start)});
    start = end + 1;
  }
  return out;
}

bool Skipped(std::string_view line) {
  const size_t first = line.find_first_not_of(' ');
  return first == std::string_view::npos || line[first] == '#';
}

class FileReader {
 public:
  FileReader(std::string_view text, const std::string& path) : text_(text), path_(path), lines_(LinesOf(text)) {}

  std::vector<Recorded> Read() {
    size_t i = 0;
    while (i < lines_.size() && Skipped(lines_[i].text)) ++i;
    if (i == lines_.size() || !lines_[i].text.starts_with("subject ")) {
      Fail(i < lines_.size() ? lines_[i].number : 1, "expected 'subject NAME' first");
    }
    subject_ = std::string(lines_[i].text.substr(8));
    ++i;
    while (i < lines_.size()) {
      if (Skipped(lines_[i].text)) {
        ++i;
        continue;
      }
      const FileLine& head = lines_[i];
      if (!head.text.starts_with("scenario ")) {
        Fail(head.number, fmt::format("expected 'scenario NAME', got '{}'", head.text));
      }
      size_t end = i + 1;
      while (end < lines_.size() && !lines_[end].text.starts_with("scenario ")) ++end;
      out_.push_back(ReadScenario(head, i + 1, end));
      i = end;
    }
    return std::move(out_);
  }

 private:
  Recorded ReadScenario(const FileLine& head, size_t body, size_t end) {
    const std::string name(head.text.substr(9));
    if (!name.starts_with(subject_ + " ")) {
      Fail(head.number, fmt::format("scenario '{}' is not one of subject '{}'", name, subject_));
    }
    Expected<ParallelConfig> cfg = ParseConfigName(std::string_view(name).substr(subject_.size() + 1));
    if (!cfg) Fail(head.number, cfg.error().message);
    if (!seen_.emplace(name, out_.size()).second) Fail(head.number, fmt::format("scenario '{}' is here twice", name));
    while (body < end && Skipped(lines_[body].text)) ++body;
    if (body == end) Fail(head.number, fmt::format("scenario '{}' records nothing", name));
    const FileLine& first = lines_[body];
    Recorded r{.name = name, .outcome = Malformed("unread"), .line = head.number};
    if (first.text.starts_with("same-as ") || first.text.starts_with("rejected ")) {
      for (size_t k = body + 1; k < end; ++k) {
        if (!Skipped(lines_[k].text)) Fail(lines_[k].number, "expected one line after 'same-as' or 'rejected'");
      }
      r.outcome = first.text.starts_with("rejected ") ? Rejected(first) : SameAs(first, *cfg);
    } else {
      const size_t stop = end < lines_.size() ? lines_[end].begin : text_.size();
      Expected<Pipeline> plans = PipelineFromText(text_.substr(first.begin, stop - first.begin), path_, first.number);
      if (!plans) throw ReadError{plans.error().message};
      r.outcome = *std::move(plans);
    }
    return r;
  }

  Expected<Pipeline> Rejected(const FileLine& l) {
    std::optional<std::string> message = Unescape(l.text.substr(9));
    if (!message) Fail(l.number, "a rejection escapes only \\\\ and \\n");
    // The code is not stored: a rejection compares by its message.
    return Unsupported(*message);
  }

  Expected<Pipeline> SameAs(const FileLine& l, const ParallelConfig& cfg) {
    const std::string target(l.text.substr(8));
    auto it = seen_.find(target);
    if (it == seen_.end() || it->second >= out_.size() || !out_[it->second].outcome) {
      Fail(l.number, fmt::format("same-as '{}' names no earlier scenario with plans", target));
    }
    const Pipeline& same = *out_[it->second].outcome;
    if (RowAxes(same.front().config()) != RowAxes(cfg)) {
      Fail(l.number, fmt::format("same-as '{}' names a scenario whose rows are sharded over other axes", target));
    }
    return WithConfig(same, cfg);
  }

  [[noreturn]] void Fail(int line, std::string_view why) const {
    throw ReadError{fmt::format("{}:{}: {}", path_, line, why)};
  }

  std::string_view text_;
  const std::string& path_;
  std::vector<FileLine> lines_;
  std::string subject_;
  std::map<std::string, size_t> seen_;  // scenario name -> its position in out_
  std::vector<Recorded> out_;
};

}  // namespace

std::string WriteSubjectFile(const Subject& subject, const std::vector<Recorded>& scenarios) {
  std::string out = fmt::format(
      "# {}: {}\n# Every plan the binder binds for it (unverified), scenario by scenario; a rejection is\n"
      "# recorded with its message. Rewritten by scripts/golden: review its diff.\nsubject {}\n",
      subject.name, subject.summary, subject.name);
  std::map<std::string, std::string> first_with;  // plans key -> the first scenario that has them
  for (const Recorded& r : scenarios) {
    out += fmt::format("scenario {}\n", r.name);
    if (!r.outcome) {
      out += fmt::format("rejected {}\n", Escape(r.outcome.error().message));
      continue;
    }
    auto [it, fresh] = first_with.emplace(PlansKey(*r.outcome), r.name);
    out += fresh ? ToText(*r.outcome) : fmt::format("same-as {}\n", it->second);
  }
  return out;
}

Expected<std::vector<Recorded>> ReadSubjectFile(std::string_view text, const std::string& path) {
  try {
    return FileReader(text, path).Read();
  } catch (const ReadError& e) {
    return Malformed(e.message);
  }
}

}  // namespace seam::golden
