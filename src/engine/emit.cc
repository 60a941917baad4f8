// A configuration written back as an engine's launch line, and read back
// through the same front door before it is returned: a line seam writes is
// one seam reads as the configuration it was written for.
#include <fmt/format.h>

#include <filesystem>

#include "engine/emit.h"
#include "seam/pipeline.h"
#include "seam/printable.h"

namespace seam {
namespace engine {
namespace {

// Node 0's address in the other nodes' lines: a shell variable the user
// sets, left unquoted so the shell expands it.
constexpr std::string_view kNode0 = "$NODE0_ADDR";

// A word as a POSIX shell reads it back: bare when it holds only characters
// no shell treats specially, else single-quoted.
std::string Quote(std::string_view word) {
  if (word.starts_with(kNode0)) return std::string(word);
  const bool bare = !word.empty() && word.find_first_not_of(
                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789_-./:=,+@%") == std::string_view::npos;
  if (bare) return std::string(word);
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> Join(const Writing& w) {
  std::vector<std::string> lines;
  for (const std::vector<std::string>& node : w.per_node) {
    std::vector<std::string> quoted;
    for (const std::string& e : w.env) quoted.push_back(Quote(e));
    for (const std::string& word : w.words) quoted.push_back(Quote(word));
    for (const std::string& word : node) quoted.push_back(Quote(word));
    lines.push_back(fmt::format("{}", fmt::join(quoted, " ")));
  }
  return lines;
}

Expected<Writing> WriteFor(const EmitRequest& r, const Model& m, const CheckpointQuant& q) {
  switch (r.engine) {
    case Engine::kSglang: return WriteSglang(r, m);
    case Engine::kVllm: return WriteVllm(r, m, q);
  }
  SEAM_CHECK(false, "an unknown engine");
}

// What a line runs, read back through the engine's front door.
struct ReadBack {
  EngineTranslation t;
  ParallelConfig want;  // the request's configuration as it changes the model's plan
  ParallelConfig got;   // the line's
};

Expected<ReadBack> ReadBackOf(const std::string& line, const EmitRequest& r, const Model& m, const CheckpointQuant& q) {
  Expected<EngineLaunch> l = ParseEngineArgs(r.engine, {line}, r.version);
  if (!l) return l.error();
  Expected<EngineTranslation> t = Translate(*l, m, q);
  if (!t) return t.error();
  return ReadBack{.t = *t, .want = Effective(r.config, m), .got = Effective(t->config, m)};
}

bool Differs(Knob k, const ReadBack& b, const EmitRequest& r) {
  switch (k) {
    case Knob::kDenseTp: return b.want.dense_tp != b.got.dense_tp;
    case Knob::kMoe: return b.want.moe != b.got.moe;
    case Knob::kEp: return b.want.ep != b.got.ep;
    case Knob::kDpLmHead: return b.want.dp_lm_head != b.got.dp_lm_head;
    case Knob::kInputScattered: return b.want.input_scattered != b.got.input_scattered;
    case Knob::kReduction: return b.want.reduction != b.got.reduction;
    case Knob::kDispatch: return b.want.moe == MoeMode::kA2a && b.t.wire.dispatch != r.wire.dispatch;
    case Knob::kKv: return b.t.kv != r.kv.value_or(r.wire.act);
  }
  SEAM_CHECK(false, "an unknown knob");
}

bool Same(const ReadBack& b, const EmitRequest& r) {
  return b.want == b.got && b.t.replicas == r.replicas && b.t.nodes == r.nodes && b.t.wire.act == r.wire.act &&
         b.t.two_batch_overlap == r.two_batch_overlap && !Differs(Knob::kDispatch, b, r) && !Differs(Knob::kKv, b, r);
}

// Why a line that reads back differently is all the engine can say: the
// knobs it has no flag for that change this model's plan; none is seam's bug.
Error Mismatch(const ReadBack& b, const EmitRequest& r, const Writing& w, const std::string& line) {
  std::vector<std::string> why;
  for (const Unwritten& u : w.cannot) {
    if (Differs(u.knob, b, r)) why.push_back(u.why);
  }
  if (!why.empty()) return Cannot(r.engine, fmt::format("{}", fmt::join(why, "; ")));
  return Internal(fmt::format("the {} line seam wrote reads back as {} x{} on {} node(s), not {} x{} on {}: {}",
                              DisplayName(r.engine), Describe(b.got), b.t.replicas, b.t.nodes, Describe(b.want),
                              r.replicas, r.nodes, line));
}

}  // namespace

Error Cannot(Engine e, std::string_view why) {
  return InvalidArgument(fmt::format("{} cannot run this configuration: {}", DisplayName(e), why));
}

std::string ModelPathOf(const std::string& path) {
  const std::filesystem::path p(path);
  if (p.filename() != "config.json") return path;
  const std::string dir = p.parent_path().string();
  return dir.empty() ? "." : dir;
}

std::vector<int> LayerCounts(const ParallelConfig& cfg, int layers) {
  Expected<std::vector<LayerRange>> ranges = SplitLayers(cfg, layers);
  if (!ranges) return cfg.pp_split;
  std::vector<int> counts;
  for (const LayerRange& range : *ranges) counts.push_back(range.last - range.first);
  return counts;
}

void AddDtype(const EmitRequest& r, Writing& w) {
  if (r.wire.act == WireDtype::kFp16) w.Add("--dtype", "float16");
  if (r.wire.act == WireDtype::kFp32) w.Add("--dtype", "float32");
}

void AddKvDtype(const EmitRequest& r, const std::vector<std::string_view>& spelled, Writing& w) {
  if (!r.kv || *r.kv == r.wire.act) return;
  const std::string_view word = spelled[static_cast<size_t>(*r.kv)];
  if (word.empty()) {
    w.Cannot(Knob::kKv,
             fmt::format("a {} KV cache under {} activations has no --kv-cache-dtype", Name(*r.kv), Name(r.wire.act)));
  } else {
    w.Add("--kv-cache-dtype", std::string(word));
  }
}

}  // namespace engine

ParallelConfig Effective(const ParallelConfig& cfg, const Model& model) {
  ParallelConfig e = cfg;
  e.dense_tp = HasStageKind(model, StageKind::kDenseFfn) ? cfg.dense_tp_size() : cfg.tp;
  if (!HasStageKind(model, StageKind::kSparseFfn)) e.moe = MoeMode::kTp;
  e.ep = e.moe == MoeMode::kA2a ? cfg.ep_size() : 0;
  e.pp_split = engine::LayerCounts(cfg, model.num_layers);
  return e;
}

Expected<EngineLines> EmitLaunch(const EmitRequest& r, const Model& model, const CheckpointQuant& checkpoint) {
  SEAM_RETURN_IF_ERROR(Validate(r.config));
  SEAM_RETURN_IF_ERROR(Validate(r.wire));
  if (r.replicas < 1 || r.nodes < 1) {
    return InvalidArgument(fmt::format("{} replicas on {} nodes: each is at least 1", r.replicas, r.nodes));
  }
  Expected<engine::Writing> w = engine::WriteFor(r, model, checkpoint);
  if (!w) return w.error();
  EngineLines out{.lines = engine::Join(*w), .notes = w->notes};
  for (const std::string& line : out.lines) {
    Expected<engine::ReadBack> back = engine::ReadBackOf(line, r, model, checkpoint);
    if (!back) return back.error();
    if (!engine::Same(*back, r)) return engine::Mismatch(*back, r, *w, line);
  }
  // What the engine has no flag for made no difference to this model.
  for (const engine::Unwritten& u : w->cannot) {
    out.notes.push_back(fmt::format("{}; for {} it makes no difference", u.why, Printable(model.name)));
  }
  if (out.lines.size() > 1) {
    out.notes.push_back(fmt::format("node 0's address is {}: set it on every node before its line", engine::kNode0));
  }
  return out;
}

}  // namespace seam
