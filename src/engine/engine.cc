#include "seam/engine.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/enum_text.h"
#include "engine/launch.h"
#include "engine/translate.h"
#include "seam/knobs.h"
#include "seam/model_source.h"
#include "seam/sharding.h"

namespace seam {
namespace {

constexpr auto kEngines = EnumNames<Engine>("engine", {{Engine::kSglang, "sglang"}, {Engine::kVllm, "vllm"}});

}  // namespace

std::string_view Name(Engine e) { return kEngines.Name(e); }
// Each dispatch on the engine below is an exhaustive switch: an engine added
// to the enum is a compile warning (an error in CI) until each says what it does.
std::string_view DisplayName(Engine e) {
  switch (e) {
    case Engine::kSglang: return "SGLang";
    case Engine::kVllm: return "vLLM";
  }
  SEAM_CHECK(false, "an unknown engine");
}
Expected<Engine> ParseEngine(std::string_view text) {
  Expected<Engine> e = kEngines.Parse(text);
  if (!e) return InvalidArgument(e.error().message);
  return e;
}

std::vector<std::string> EngineVersions(Engine e) {
  std::vector<std::string> out;
  for (const engine::EngineTable* t : engine::TablesOf(e)) out.push_back(t->version);
  return out;
}

bool EngineHasFlag(Engine e, std::string_view flag) {
  Expected<const engine::EngineTable*> table = engine::TableFor(e, "");
  return table && (*table)->Find(flag) != nullptr;
}

Expected<EngineLaunch> ParseEngineArgs(Engine engine, const std::vector<std::string>& args, std::string_view version) {
  Expected<const engine::EngineTable*> table = engine::TableFor(engine, version);
  if (!table) return table.error();
  // One argument holding a whole line (a quoted paste) is split as a shell would.
  std::vector<std::string> words = args;
  if (args.size() == 1 && args[0].find_first_of(" \t\n") != std::string::npos) {
    Expected<std::vector<std::string>> split = engine::ShellWords(args[0]);
    if (!split) return split.error();
    words = *std::move(split);
  }
  Expected<engine::ReadLine> line = engine::ParseLine(**table, words);
  if (!line) return line.error();
  return engine::ApplyLine(**table, *line);
}

Expected<std::string> ConfigPathOf(const EngineLaunch& l) {
  std::error_code ec;
  const std::filesystem::path p(l.model_path);
  if (std::filesystem::is_directory(p, ec)) return (p / "config.json").string();
  if (std::filesystem::exists(p, ec)) return p.string();
  return InvalidArgument(fmt::format(
      "model path '{}' is neither a directory holding config.json nor a config.json; seam reads the model's config "
      "locally (download the config.json of a hub model first)",
      l.model_path));
}

namespace {

Expected<EngineTranslation> TranslateFor(const EngineLaunch& l, const Model& model, const CheckpointQuant& q) {
  switch (l.engine) {
    case Engine::kSglang: return engine::TranslateSglang(l, model, q);
    case Engine::kVllm: return engine::TranslateVllm(l, model, q);
  }
  SEAM_CHECK(false, "an unknown engine");
}

}  // namespace

Expected<EngineTranslation> Translate(const EngineLaunch& l, const Model& model, const CheckpointQuant& checkpoint) {
  Expected<EngineTranslation> read = TranslateFor(l, model, checkpoint);
  if (!read) return read.error();
  EngineTranslation t = *std::move(read);
  t.two_batch_overlap = l.two_batch_overlap;  // each engine's start-up checks have let it through
  // How the line was read comes before how its sizes map.
  t.notes.insert(t.notes.begin(), l.read_notes.begin(), l.read_notes.end());
  return t;
}

Expected<EngineChoice> ChooseEngineLaunch(Engine engine, const std::vector<std::string>& args, int layers,
                                          std::string_view version) {
  Expected<EngineLaunch> launch = ParseEngineArgs(engine, args, version);
  if (!launch) return launch.error();
  Expected<std::string> config = ConfigPathOf(*launch);
  if (!config) return config.error();
  Expected<Model> model = ChooseModel("", *config, layers);
  if (!model) return model.error();
  Expected<CheckpointQuant> quant = CheckpointQuantOf(*config);
  if (!quant) return quant.error();
  Expected<EngineTranslation> t = Translate(*launch, *model, *quant);
  if (!t) return t.error();
  return EngineChoice{.hf_config = *config,
                      .model = *std::move(model),
                      .config = t->config,
                      .wire = t->wire,
                      .replicas = t->replicas,
                      .nodes = t->nodes,
                      .weights = t->weights,
                      .kv = t->kv,
                      .two_batch_overlap = t->two_batch_overlap,
                      .memory_fraction = launch->memory_fraction,
                      .prefill_chunk = launch->prefill_chunk,
                      .quantization = launch->quantization,
                      .seam_flags = t->seam_flags,
                      .notes = t->notes,
                      .ignored = launch->ignored};
}

std::string SeamFlags(const ParallelConfig& cfg, const WireDtypes& wire) {
  std::string out = KnobFlags(cfg);
  if (wire.act != WireDtype::kBf16) out += fmt::format(" --act-dtype {}", Name(wire.act));
  if (wire.dispatch != wire.act) out += fmt::format(" --dispatch-dtype {}", Name(wire.dispatch));
  return out;
}

namespace engine {

Error Refuses(Engine e, std::string_view reason) {
  return InvalidArgument(fmt::format("{} refuses this at start-up: {}", DisplayName(e), reason));
}

Status CheckModelSplits(Engine e, const Model& m, const ParallelConfig& cfg) {
  const Status s = CheckEngineSplits(m, cfg);
  if (s.ok()) return s;
  return Refuses(e, s.error().message);
}

Status ReadDecodeContextParallel(const EngineLaunch& l, std::span<const std::string_view> backends,
                                 EngineTranslation& t) {
  const std::string backend = l.dcp_backend.empty() ? std::string(backends.front()) : l.dcp_backend;
  if (std::find(backends.begin(), backends.end(), backend) == backends.end()) {
    return Refuses(l.engine, fmt::format("argument --dcp-comm-backend: invalid choice: '{}' (choose from {})",
                                         Printable(backend), fmt::join(backends, ", ")));
  }
  if (l.dcp == 1) {
    if (!l.dcp_backend.empty()) {
      t.notes.push_back(fmt::format("--dcp-comm-backend {} without decode context parallelism: unused", backend));
    }
    return Status::Ok();
  }
  if (l.dcp_interleave != 1) {
    return Unsupported(fmt::format(
        "--cp-kv-cache-interleave-size {} changes communication seam does not model (a DCP cache split in runs of "
        "{} tokens): seam splits each request's cache token by token (interleave 1, the default), token p on DCP "
        "rank p mod {}",
        l.dcp_interleave, l.dcp_interleave, l.dcp));
  }
  t.config.dcp = l.dcp;
  t.notes.push_back(fmt::format(
      "--decode-context-parallel-size {}: each request's keys and values split token by token over {} "
      "consecutive ranks of each attention-TP group (--dcp {}); their queries all-gathered, each head's partial "
      "output sent to the head's rank with its maximum and sum, and merged in seam's fixed order{}",
      l.dcp, l.dcp, l.dcp,
      backend == "ag_rs" ? "; the engine's default --dcp-comm-backend ag_rs all-gathers the log-sum-exps and "
                           "reduce-scatters the rescaled outputs, a sum in NCCL's order, where seam exchanges the "
                           "partials all-to-all as --dcp-comm-backend a2a does"
                         : ""));
  return Status::Ok();
}

Expected<EngineTranslation> Finish(EngineTranslation t) {
  SEAM_RETURN_IF_ERROR(Validate(t.config));
  SEAM_RETURN_IF_ERROR(Validate(t.wire));
  t.seam_flags = SeamFlags(t.config, t.wire);
  return t;
}

}  // namespace engine
}  // namespace seam
