#include "config.h"

#include <fmt/format.h>

#include <utility>

#include "errors.h"
#include "seam/limits.h"
#include "seam/model_source.h"

namespace seam::python {

namespace {

void CheckRange(const char* name, int value) {
  if (value > kMaxRanks) Raise(InvalidArgument(fmt::format("{}={} is more than {} ranks", name, value, kMaxRanks)));
}

}  // namespace

ParallelConfig ConfigOf(const ConfigArgs& a) {
  for (const auto& [name, v] :
       {std::pair{"tp", a.tp}, {"attn_dp", a.attn_dp}, {"dense_tp", a.dense_tp}, {"ep", a.ep}, {"pp", a.pp}}) {
    CheckRange(name, v);
  }
  if (a.pp_split.size() > static_cast<size_t>(kMaxRanks)) CheckRange("len(pp_split)", kMaxRanks + 1);
  ParallelConfig cfg{.tp = a.tp,
                     .attn_dp = a.attn_dp,
                     .dense_tp = a.dense_tp,
                     .moe = TakeArg("moe", ParseMoeMode(a.moe)),
                     .ep = a.ep,
                     .dp_lm_head = a.dp_lm_head,
                     .input_scattered = a.input_scattered,
                     .reduction = TakeArg("reduction", ParseReduction(a.reduction)),
                     .pp = a.pp,
                     .pp_split = a.pp_split};
  if (cfg.pp == 0) cfg.pp = a.pp_split.empty() ? 1 : static_cast<int>(a.pp_split.size());
  Check(Validate(cfg));
  return cfg;
}

void CheckSeconds(const char* name, double value) {
  if (!(value >= kMinSeconds && value <= kMaxSeconds)) {
    Raise(InvalidArgument(fmt::format("{}={} is not a number of seconds from {:g} to {:g} (a day)", name, value,
                                      kMinSeconds, kMaxSeconds)));
  }
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
