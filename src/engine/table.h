// An engine's flag table (docs/engine-tables.md): every flag one version of
// the engine's parser accepts, how many values each takes, and what each
// means to seam. The tables are data read from src/engine/tables/ and
// compiled in, so an engine's new release is a new file, not new code.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "seam/engine.h"

namespace seam::engine {

// How many values follow a flag, as Python's argparse counts them.
enum class Arity { kSwitch, kBool, kValue, kOptional, kMany, kAny };

// A value of the launch seam reads (EngineLaunch's fields).
enum class Field {
  kModel,
  kTp,
  kDp,
  kPp,
  kEp,
  kDpAttention,
  kMoeDenseTp,
  kA2aBackend,
  kExpertParallel,
  kInputScattered,
  kDpLmHead,
  kDtype,
  kQuantization,
  kKvCacheDtype,
  kNnodes,
  kNodeRank,
  kDpLocal,
  kDpStartRank,
  kDpAddress,
  kHeadless,
  kTwoBatchOverlap,
  kDispatchDtype,
  kDpRank,
  kEplb,
  kMemoryFraction,
  kPrefillChunk,
  kCp,
  kPrefillCp,
  kCpStrategy,
  kDcp,
  kDcpBackend,
  kDcpInterleave,
};

// A flag the plan does not depend on, by why.
enum class Kind { kServing, kLimits, kKernels, kFormats, kPlacement, kExperts, kSpeculative };
std::string_view Why(Kind k);

// A deprecated spelling the engine maps onto its successor: `flag value`.
struct Alias {
  std::string flag;
  std::string value;
};

// A flag that changes communication in a way seam does not model; `off` is
// the value that leaves it off ("-" for a switch: any use changes it).
struct Unmodelled {
  std::string what;
  std::string off;
};

using Role = std::variant<Field, Kind, Alias, Unmodelled>;

struct FlagRow {
  std::vector<std::string> names;  // the engine's spellings, its canonical one first
  Arity arity = Arity::kValue;
  Role role;
};

// An environment variable the engine reads that changes the plan.
enum class EnvRole { kDispatchBf16, kPpPartition };
struct EnvRow {
  std::string name;
  EnvRole role;
};

struct EngineTable {
  Engine engine = Engine::kSglang;
  std::string version;                            // "0.5.6", or "main"
  std::string source;                             // repository, path and commit the table was read from
  bool abbreviations = false;                     // a unique prefix of a long flag names it (argparse's allow_abbrev)
  bool underscores = false;                       // --a_b reads as --a-b
  bool dotted = false;                            // --flag.key VALUE sets one key of a JSON flag (vLLM)
  std::vector<std::vector<std::string>> entries;  // commands that start the engine
  bool positional_model = false;                  // a bare word names the model (vLLM's `serve MODEL`)
  std::vector<EnvRow> env;
  std::vector<FlagRow> flags;

  // The row a spelling names exactly, or null.
  const FlagRow* Find(std::string_view name) const;
};

// Reads a table's text; `name` says which in an error.
Expected<EngineTable> ReadEngineTable(std::string_view text, std::string_view name);

// The compiled-in tables of an engine, newest release first and main last.
std::vector<const EngineTable*> TablesOf(Engine e);
// The table of `version` ("" the default: the newest release), or an error
// listing the versions seam has.
Expected<const EngineTable*> TableFor(Engine e, std::string_view version);

}  // namespace seam::engine
