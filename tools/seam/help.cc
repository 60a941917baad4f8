// --help as a reader wants it: each option's value named by what it is
// (N, SECONDS, tp|a2a; never TEXT), the examples of each command, and an
// unknown flag answered with the flag meant.
#include <fmt/format.h>

#include <map>

#include "cli.h"
#include "seam/spelling.h"

namespace seam::cli {
namespace {

// What each option takes, where CLI11 would say TEXT (or INT); the
// parallel knobs name theirs in the knob table (seam/knobs.h).
const std::map<std::string, std::string>& ValueNames() {
  static const std::map<std::string, std::string> names = {
      {"model", "NAME"},
      {"file", "PLAN"},
      {"first", "PLAN"},
      {"second", "PLAN"},
      {"--hf-config", "CONFIG.json"},
      {"--engine", "sglang|vllm"},
      {"--engine-version", "VERSION"},
      {"--emit", "sglang|vllm"},
      {"--act-dtype", "bf16|fp16|fp32"},
      {"--dispatch-dtype", "fp8|bf16|fp16|fp32"},
      {"--weight-dtype", "bf16|fp16|fp8|fp32"},
      {"--hardware", "h100|h200|b200|gb200|pcie|FILE"},
      {"--max-seconds", "SECONDS"},
      {"--timeout", "SECONDS"},
      {"--ttft", "MS"},
      {"--tpot", "MS"},
      {"--objective", "throughput|latency|ttft"},
      {"--dtype", "fp32|bf16"},
      {"--backend", "threads|record|mpi"},
      {"--mpi-mode", "canonical|native"},
      {"--fault", "RANK:KIND[@CALL]"},
      {"--max-memory", "SIZE"},
      {"--seed", "N"},
      {"--dump", "DIR"},
      {"--weights", "DIR"},
      {"--max-stages", "N"},
      {"--max-pp", "N"},
      {"--write-trace", "DIR"},
      {"--trace-format", "seam|nccl|torch"},
      {"--tokens", "N|N,N,..."},
  };
  return names;
}

// Each command's examples, printed below its options.
const std::map<std::string, std::string>& Examples() {
  static const std::map<std::string, std::string> examples = {
      {"models", "seam models\nseam models --format json"},
      {"plan",
       "seam plan deepseek-v2-lite --tp 8 --attn-dp 4 --moe a2a\n"
       "seam plan --hf-config configs/deepseek-v3.json --tp 16 --attn-dp 16 --moe a2a --dp-lm-head --pp 2 --summary\n"
       "seam plan --engine sglang -- --model-path configs/deepseek-v3.json --tp-size 8 --dp-size 8 "
       "--enable-dp-attention --moe-a2a-backend deepep\n"
       "seam plan --hf-config configs/llama-3.1-70b.json --tp 8 --pp 2 --emit vllm"},
      {"show", "seam plan llama --tp 2 --format json > plan.json && seam show plan.json"},
      {"run",
       "seam run qwen3-moe --tp 4 --attn-dp 2 --moe a2a --pp 2 --dtype bf16\n"
       "seam run --hf-config configs/llama-3.1-8b.json --layers 1 --tp 8 --backend record\n"
       "seam run deepseek-v2-lite --matrix\n"
       "seam run llama --tp 2 --attn-dp 2 --requests 5:6,9:4@1,3 --generate 5 --chunk 4 --mixed\n"
       "seam run deepseek-v2-lite --tp 4 --attn-dp 2 --moe a2a --write-trace run-trace --trace-format nccl"},
      {"check",
       "seam check deepseek-v2-lite --tp 4 --attn-dp 2 --moe a2a --trace run-trace/*\n"
       "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL NCCL_DEBUG_FILE=nccl.%h.%p ...  # then:\n"
       "seam check --engine sglang --trace nccl.* -- --model-path configs/deepseek-v3.json --tp-size 8 "
       "--dp-size 8 --enable-dp-attention"},
      {"sweep", "seam sweep --max-stages 3 --max-pp 2"},
      {"diff",
       "seam plan llama --tp 2 --format json > a.json && seam plan llama --tp 2 --input-scattered --format json "
       "> b.json && seam diff a.json b.json"},
      {"compare",
       "seam compare --hf-config configs/llama-3.1-70b.json --gpus 8 --top 5\n"
       "seam compare --hf-config configs/deepseek-v3.json --nodes 2 --hardware h200 --weight-dtype fp8 --emit sglang\n"
       "seam compare --engine vllm -- configs/qwen3-30b-a3b.json -tp 2 -dp 4 --enable-expert-parallel"},
  };
  return examples;
}

// seam's flags under the names the engines and other tools give them.
const std::map<std::string, std::string>& SeamSpellings() {
  static const std::map<std::string, std::string> spellings = {
      {"--dp", "--attn-dp"},
      {"--dp-size", "--attn-dp"},
      {"--attn-dp-size", "--attn-dp"},
      {"--ep-size", "--ep"},
      {"--tp-size", "--tp"},
      {"--tensor-parallel-size", "--tp"},
      {"--pp-size", "--pp"},
      {"--pipeline-parallel-size", "--pp"},
      {"--moe-dense-tp-size", "--dense-tp"},
      {"--enable-dp-lm-head", "--dp-lm-head"},
      {"--enable-attn-tp-input-scattered", "--input-scattered"},
      {"--config", "--hf-config"},
      {"--model-path", "--hf-config"},
  };
  return spellings;
}

std::vector<std::string> LongNames(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  }
  return names;
}

// What a flag seam's command does not have was meant to be.
std::string Meant(const CLI::App& cmd, const std::string& word) {
  const std::string flag = word.substr(0, word.find('='));
  std::string out;
  const std::vector<std::string> names = LongNames(cmd);
  if (auto s = SeamSpellings().find(flag); s != SeamSpellings().end()) {
    if (std::find(names.begin(), names.end(), s->second) != names.end()) out = "did you mean " + s->second + "?";
  } else if (std::optional<std::string> near = Nearest(flag, names)) {
    out = "did you mean " + *near + "?";
  }
  for (Engine e : {Engine::kSglang, Engine::kVllm}) {
    if (!EngineHasFlag(e, flag)) continue;
    const std::string engine = fmt::format("{} is {}'s flag: seam {} --engine {} -- ... {} ... reads {}'s whole line",
                                           flag, DisplayName(e), cmd.get_name(), Name(e), word, DisplayName(e));
    return out.empty() ? engine : fmt::format("{} ({})", out, engine);
  }
  return out;
}

}  // namespace

// CLI11's option column without "Excludes: ..." (the error names the two
// flags when both are given): the value's name, its default and what it needs.
class Formatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* o) const override {
    std::string out;
    if (o->get_type_size() != 0) {
      out += " " + o->get_type_name();
      if (!o->get_default_str().empty()) out += "=" + o->get_default_str();
    }
    for (const CLI::Option* need : o->get_needs()) out += " (with " + need->get_name() + ")";
    return out;
  }
};

void PolishHelp(CLI::App& app) {
  const auto formatter = std::make_shared<Formatter>();
  app.formatter(formatter);
  for (CLI::App* cmd : app.get_subcommands({})) {
    cmd->formatter(formatter);
    for (CLI::Option* o : cmd->get_options()) {
      const std::string type = o->get_type_name();
      if (type == "INT") o->type_name("N");
      if (type != "TEXT") continue;
      const auto name = ValueNames().find(o->get_name());
      // A flag added without a value name is a bug its first --help shows.
      SEAM_CHECK(name != ValueNames().end(), "seam " + cmd->get_name() + " " + o->get_name() + " has no value name");
      o->type_name(name->second);
    }
    if (auto e = Examples().find(cmd->get_name()); e != Examples().end()) {
      std::string lines;
      for (size_t at = 0; at < e->second.size();) {
        const size_t end = std::min(e->second.find('\n', at), e->second.size());
        lines += "  " + e->second.substr(at, end - at) + "\n";
        at = end + 1;
      }
      cmd->footer("\nExamples:\n" + lines);
    }
  }
}

std::string ExamplesOf(const std::string& command) {
  const auto e = Examples().find(command);
  return e == Examples().end() ? "" : e->second;
}

std::string UnknownFlags(const CLI::App& app) {
  for (const CLI::App* cmd : app.get_subcommands()) {
    std::string out;
    for (const std::string& word : cmd->remaining()) {
      if (!word.starts_with("-")) continue;
      const std::string meant = Meant(*cmd, word);
      out += fmt::format("{} has no flag {}{}\n", cmd->get_name(), word.substr(0, word.find('=')),
                         meant.empty() ? "" : ": " + meant);
    }
    if (!out.empty()) return out;
  }
  return "";
}

}  // namespace seam::cli
