#include "engine/launch.h"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <set>

#include "engine/translate.h"

namespace seam::engine {
namespace {

constexpr int kMaxSize = 65536;  // the same bound as seam's own parallel flags

Expected<int> Integer(std::string_view flag, std::string_view v, int least) {
  int n = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || n < least || n > kMaxSize) {
    return InvalidArgument(fmt::format("{}: '{}' is not an integer from {} to {}", flag, v, least, kMaxSize));
  }
  return n;
}

// A share of the GPU's memory: above 0, at most 1.
Status Fraction(std::string_view flag, std::string_view v, double& out) {
  double x = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || !(x > 0 && x <= 1)) {
    return InvalidArgument(
        fmt::format("{}: '{}' is not a fraction of the GPU's memory above 0 and at most 1", flag, v));
  }
  out = x;
  return Status::Ok();
}

// Sets one field of the launch from a flag's value ("" for a switch; `on`
// false for a --no- negation).
Status SetField(EngineLaunch& l, Field f, std::string_view flag, std::string_view v, bool on) {
  // An int or an optional<int> field, from `least` up.
  auto size = [&](auto& out, int least) -> Status {
    Expected<int> n = Integer(flag, v, least);
    if (!n) return n.error();
    out = *n;
    return Status::Ok();
  };
  switch (f) {
    case Field::kModel: l.model_path = v; return Status::Ok();
    case Field::kTp: return size(l.tp, 1);
    case Field::kDp: return size(l.dp, 1);
    case Field::kPp: return size(l.pp, 1);
    case Field::kEp: return size(l.ep, 1);
    case Field::kMoeDenseTp: return size(l.moe_dense_tp, 1);
    case Field::kNnodes: return size(l.nnodes, 1);
    case Field::kNodeRank: return size(l.node_rank, 0);
    case Field::kDpLocal: return size(l.dp_local, 1);
    case Field::kDpStartRank: return size(l.dp_start_rank, 0);
    case Field::kDpAttention: l.dp_attention = on; return Status::Ok();
    case Field::kExpertParallel: l.expert_parallel = on; return Status::Ok();
    case Field::kInputScattered: l.input_scattered = on; return Status::Ok();
    case Field::kDpLmHead: l.dp_lm_head = on; return Status::Ok();
    case Field::kHeadless: l.headless = on; return Status::Ok();
    case Field::kTwoBatchOverlap: l.two_batch_overlap = on; return Status::Ok();
    case Field::kA2aBackend: l.a2a_backend = v; return Status::Ok();
    case Field::kDtype: l.dtype = v; return Status::Ok();
    case Field::kQuantization: l.quantization = v; return Status::Ok();
    case Field::kKvCacheDtype: l.kv_cache_dtype = v; return Status::Ok();
    case Field::kDpAddress: l.dp_address = v; return Status::Ok();
    case Field::kDispatchDtype: l.dispatch_dtype = v; return Status::Ok();
    case Field::kDpRank: return size(l.dp_rank, 0);
    case Field::kEplb: l.eplb = on; return Status::Ok();
    case Field::kMemoryFraction: return Fraction(flag, v, l.memory_fraction);
    case Field::kPrefillChunk: return size(l.prefill_chunk, 1);
    case Field::kCp: return size(l.cp, 1);
    case Field::kPrefillCp: l.prefill_cp = on; return Status::Ok();
    case Field::kCpStrategy: l.cp_strategy = v; return Status::Ok();
    case Field::kDcp: return size(l.dcp, 1);
    case Field::kDcpBackend: l.dcp_backend = v; return Status::Ok();
    case Field::kDcpInterleave: return size(l.dcp_interleave, 1);
  }
  SEAM_CHECK(false, "an unknown launch field");
}

bool TakesNoValue(const FlagRow& f) { return f.arity == Arity::kSwitch || f.arity == Arity::kBool; }

std::string Spelled(const ReadFlag& r) {
  if (r.values.empty()) return r.spelled;
  return fmt::format("{} {}", r.spelled, fmt::join(r.values, " "));
}

Status Refuse(const EngineTable& t, const ReadFlag& r, const Unmodelled& u) {
  return Unsupported(
      fmt::format("{} changes communication seam does not model ({}): {} runs it, seam plans tensor, attention-data, "
                  "context (prefill), expert and pipeline parallelism only{}",
                  Spelled(r), u.what, DisplayName(t.engine),
                  u.off == "-" ? "" : fmt::format("; leave it out or give {} {}", r.row->names.front(), u.off)));
}

class Applier {
 public:
  Applier(const EngineTable& t, EngineLaunch& l) : t_(t), l_(l) {}

  Status Apply(const ReadFlag& r) {
    const FlagRow& f = *r.row;
    if (const Field* field = std::get_if<Field>(&f.role)) return Set(f, *field, r);
    if (const Kind* kind = std::get_if<Kind>(&f.role)) {
      if (ignored_.insert(&f).second) l_.ignored.push_back(fmt::format("{}: {}", f.names.front(), Why(*kind)));
      return Status::Ok();
    }
    if (const Alias* a = std::get_if<Alias>(&f.role)) return ApplyAlias(r, *a);
    const Unmodelled& u = std::get<Unmodelled>(f.role);
    const bool off = TakesNoValue(f) ? r.negated : r.values.size() == 1 && r.values[0] == u.off;
    if (!off) return Refuse(t_, r, u);
    if (ignored_.insert(&f).second) {
      l_.ignored.push_back(fmt::format("{} {}: {} off", f.names.front(), u.off, u.what));
    }
    return Status::Ok();
  }

 private:
  Status Set(const FlagRow& f, Field field, const ReadFlag& r) {
    const std::string value = r.values.empty() ? "" : fmt::format("{}", fmt::join(r.values, " "));
    auto [it, first] = given_.emplace(field, value);
    if (!first && it->second != value) {
      l_.read_notes.push_back(fmt::format("{} is given more than once: {} keeps the last, {}", f.names.front(),
                                          DisplayName(t_.engine), TakesNoValue(f) ? Spelled(r) : value));
    }
    it->second = value;
    return SetField(l_, field, f.names.front(), value, !r.negated);
  }

  Status ApplyAlias(const ReadFlag& r, const Alias& a) {
    const FlagRow* target = t_.Find(a.flag);
    SEAM_CHECK(target != nullptr, "an alias of a flag the table lacks");  // ReadEngineTable checks each
    l_.read_notes.push_back(
        fmt::format("{}: {}'s older spelling of {} {}", r.spelled, DisplayName(t_.engine), a.flag, a.value));
    ReadFlag mapped{.row = target, .spelled = a.flag};
    if (!TakesNoValue(*target)) mapped.values = {a.value};
    return Apply(mapped);
  }

  const EngineTable& t_;
  EngineLaunch& l_;
  std::set<const FlagRow*> ignored_;
  std::map<Field, std::string> given_;
};

Status ApplyEnv(const EngineTable& t, const ReadLine& line, EngineLaunch& l) {
  for (const auto& [name, value] : line.env) {
    const EnvRow* row = nullptr;
    for (const EnvRow& e : t.env) {
      if (e.name == name) row = &e;
    }
    if (row == nullptr) {
      l.ignored.push_back(fmt::format("{}={}: an environment setting seam does not read", name, value));
      continue;
    }
    switch (row->role) {
      case EnvRole::kDispatchBf16: l.dispatch_bf16 = !value.empty() && value != "0" && value != "false"; break;
      case EnvRole::kPpPartition: l.pp_partition = value; break;
    }
  }
  return Status::Ok();
}

}  // namespace

Expected<EngineLaunch> ApplyLine(const EngineTable& t, const ReadLine& line) {
  EngineLaunch l{.engine = t.engine, .version = t.version, .read_notes = line.notes};
  SEAM_RETURN_IF_ERROR(ApplyEnv(t, line, l));
  Applier applier(t, l);
  for (const ReadFlag& r : line.flags) SEAM_RETURN_IF_ERROR(applier.Apply(r));
  if (!line.positional.empty()) {
    // `vllm serve A --model B` serves A: the positional model replaces --model.
    if (!l.model_path.empty() && l.model_path != line.positional) {
      l.ignored.push_back(fmt::format("--model {}: {} serves the model named first, {}", l.model_path,
                                      DisplayName(t.engine), line.positional));
    }
    l.model_path = line.positional;
  }
  if (l.model_path.empty()) {
    return InvalidArgument(fmt::format("the {} command line names no model ({})", DisplayName(t.engine),
                                       t.positional_model ? "serve MODEL or --model" : "--model-path"));
  }
  return l;
}

}  // namespace seam::engine
