#include "config.h"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <utility>

#include "errors.h"
#include "seam/knobs.h"
#include "seam/limits.h"
#include "seam/model_source.h"

namespace seam::python {

namespace py = pybind11;

namespace {

void CheckRange(const std::string& name, int value) {
  if (value > kMaxRanks) Raise(InvalidArgument(fmt::format("{}={} is more than {} ranks", name, value, kMaxRanks)));
}

// A keyword's value as its knob's kind (the package checked its type).
KnobValue ValueOfKeyword(const Knob& k, const py::handle& v) {
  const std::string name(k.python);
  switch (KindOf(k)) {
    case KnobKind::kCount: {
      const int n = v.cast<int>();
      CheckRange(name, n);
      return n;
    }
    case KnobKind::kBool: return v.cast<bool>();
    case KnobKind::kEnum: return v.cast<std::string>();
    case KnobKind::kSplit: break;
  }
  auto split = v.cast<std::vector<int>>();
  if (split.size() > static_cast<size_t>(kMaxRanks)) CheckRange(fmt::format("len({})", name), kMaxRanks + 1);
  return split;
}

std::string_view KindName(KnobKind kind) {
  switch (kind) {
    case KnobKind::kCount: return "count";
    case KnobKind::kBool: return "bool";
    case KnobKind::kEnum: return "enum";
    case KnobKind::kSplit: return "split";
  }
  return "?";
}

}  // namespace

ParallelConfig ConfigOf(const py::dict& knobs) {
  ParallelConfig cfg;
  std::vector<bool> given;
  for (const Knob& k : Knobs()) {
    const py::str key(std::string(k.python));
    given.push_back(knobs.contains(key) && !knobs[key].is_none());
    if (!given.back()) continue;
    if (Status s = SetValue(k, cfg, ValueOfKeyword(k, knobs[key])); !s.ok()) {
      Raise(InvalidArgument(fmt::format("{}: {}", k.python, s.error().message)));  // as TakeArg names it
    }
  }
  return Take(CompleteConfig(cfg, given));
}

py::list KnobList() {
  py::list out;
  for (const Knob& k : Knobs()) {
    const std::vector<std::string_view> choices = ChoicesOf(k);
    // A default that follows other knobs, or an even split, is None: any value given is a choice.
    const bool none = FollowsOthers(k) || KindOf(k) == KnobKind::kSplit;
    py::dict d;
    d["name"] = std::string(k.python);
    d["json"] = std::string(k.json);
    d["kind"] = std::string(KindName(KindOf(k)));
    d["choices"] = std::vector<std::string>(choices.begin(), choices.end());
    d["default"] =
        none ? py::object(py::none()) : std::visit([](const auto& v) { return py::cast(v); }, ValueOf(k, {}));
    out.append(d);
  }
  return out;
}

void CheckSeconds(const char* name, double value) {
  if (!(value >= kMinSeconds && value <= kMaxSeconds)) {
    Raise(InvalidArgument(fmt::format("{}={} is not a number of seconds from {:g} to {:g} (a day)", name, value,
                                      kMinSeconds, kMaxSeconds)));
  }
}

double SecondsOfMillis(const char* name, double ms) {
  if (!(ms > 0 && ms <= kMaxSeconds * 1e3)) {
    Raise(InvalidArgument(fmt::format("{}={} is not a number of milliseconds above 0 and at most a day", name, ms)));
  }
  return ms / 1e3;
}

WireDtypes WireOf(const std::string& act, const std::optional<std::string>& dispatch) {
  WireDtypes w{.act = TakeArg("act_dtype", ParseWireDtype(act))};
  w.dispatch = dispatch ? TakeArg("dispatch_dtype", ParseWireDtype(*dispatch)) : w.act;
  if (Status s = Validate(w); !s.ok()) Raise(InvalidArgument("act_dtype: " + s.error().message));
  return w;
}

Model ModelOf(const std::string& name, const std::string& hf_config, int layers) {
  return Take(ChooseModel(name, hf_config, layers));
}

}  // namespace seam::python
