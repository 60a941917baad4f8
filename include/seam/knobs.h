// seam/knobs.h — the knobs of a parallel configuration, one row each.
//
// Every field of ParallelConfig a user sets is one row of one table (Knobs()):
// where it lives, its command-line flag, its key in the plan's JSON and text
// forms, its Python keyword, and the engines' names for it. The command line,
// the plan readers and writers, Describe, seam's own flags for a
// configuration and the Python package walk the table, so a knob added to
// ParallelConfig and to the table is read and written everywhere (the knob's
// default is its initializer in ParallelConfig, read through the row).
//
//   for (const Knob& k : Knobs()) {
//     if (IsSet(k, cfg)) std::cout << k.flag << "\n";   // the flags that differ from their defaults
//   }
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "seam/error.h"
#include "seam/topology.h"

namespace seam {

// Where a knob's value lives: a count, a switch, one of the configuration's
// enums, or a layer split.
using KnobField = std::variant<int ParallelConfig::*, bool ParallelConfig::*, MoeMode ParallelConfig::*,
                               Reduction ParallelConfig::*, std::vector<int> ParallelConfig::*>;

enum class KnobKind { kCount, kBool, kEnum, kSplit };

// How readily a one-line summary names a knob.
enum class Mention {
  kAlways,     // Describe and seam's flags always name it (the TP size)
  kInSummary,  // Describe names it at its default too; seam's flags only when set
  kWhenSet,    // named only when it differs from its default
};

struct Knob {
  KnobField field;
  std::string_view json;        // the key in the plan's "config" object (also the field's name)
  std::string_view text;        // the key in the text form's plan header
  std::string_view python;      // the keyword of seam.plan and seam.run
  std::string_view flag;        // the command line's flag
  std::string_view value_name;  // what --help says the flag takes; empty for a switch
  std::string_view help;
  Mention mention = Mention::kWhenSet;
  // A count whose 0 stands for a width other knobs give (the TP group's):
  // the width it resolves to. A plan and its JSON state the width.
  int (ParallelConfig::*size)() const = nullptr;
  // A count whose default follows other knobs when it is not given (pp: as
  // many ranks as pp_split names).
  int (*default_from)(const ParallelConfig&) = nullptr;
  // A knob added after plans were first written: a plan that does not name
  // it reads as its default, and the text form names it only when it is set,
  // so plans written before it read, and are written, the same.
  bool added_later = false;
  // The engines' spelling of the knob (flags, or an environment variable),
  // for documentation; empty where the engine has none of its own.
  std::string_view sglang;
  std::string_view vllm;
};

// Every knob, in the order seam's flags, the JSON config object and the
// schemas name them.
std::span<const Knob> Knobs();
// The order the text form's plan header and Describe name the knobs in:
// the orders they had before the table, so what was written before reads
// the same.
std::span<const Knob* const> TextOrder();
std::span<const Knob* const> DescribeOrder();

KnobKind KindOf(const Knob& k);
// The names an enum knob takes (empty for the other kinds).
std::vector<std::string_view> ChoicesOf(const Knob& k);
// Whether the default follows other knobs (the TP group's width, the
// split's ranks): --help shows none, and Python's keyword defaults to None.
bool FollowsOthers(const Knob& k);

// A knob's value: a count, a switch, an enum's name or a layer split.
using KnobValue = std::variant<int, bool, std::string, std::vector<int>>;
KnobValue ValueOf(const Knob& k, const ParallelConfig& c);
// As ValueOf, a count that stands for a width as that width.
KnobValue ResolvedValueOf(const Knob& k, const ParallelConfig& c);
// The value's kind must be the knob's; an enum's name that is not one of
// its choices is the enum's parse error.
Status SetValue(const Knob& k, ParallelConfig& c, const KnobValue& v);
// Whether the knob's width or value differs from its default's.
bool IsSet(const Knob& k, const ParallelConfig& c);
// "1+3": a layer split as the command line and Describe write it.
std::string SplitText(const std::vector<int>& split);

// The knobs a command line or a call set on the defaults (given[i]: whether
// row i was set), completed: a knob not given whose default follows others
// takes it from them. The whole is Validated.
Expected<ParallelConfig> CompleteConfig(ParallelConfig c, const std::vector<bool>& given);
// Every count that stands for a width written as that width, as a plan states it.
ParallelConfig ResolvedConfig(const ParallelConfig& c);

// seam's own flags for a configuration, as `seam plan` takes them: the TP
// size, then every knob that differs from its default, in table order
// ("--tp 4 --attn-dp 2 --moe a2a").
std::string KnobFlags(const ParallelConfig& c);

}  // namespace seam
