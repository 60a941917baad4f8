// The plan corpus: every bound plan of a wide set of scenarios, kept as text
// in tests/golden/ so that a change to the binder's rules shows up as a diff.
//
// A subject is a model (every catalogue entry, and the stack shapes the seed
// PR compares, built from stage declarations); a scenario is a subject under
// one parallel configuration, boundary reduction and pipeline split. Each
// subject's scenarios are stored in one file, in a stable order:
//
//   subject llama
//   scenario llama tp4 attn-dp2 rs pp2 1+3
//   plan llama hidden=64 ...          (the bound pipeline in the text form of
//   line ordinary                      seam/plan_io.h, rank after rank)
//   ...
//   scenario llama tp4 attn-dp2 rsv pp2 1+3
//   same-as llama tp4 attn-dp2 rs pp2 1+3   (the same plans, this configuration)
//   scenario llama tp2 dense-tp1 input-scattered ar pp1
//   rejected input-scattered ... (the binder's message; \n and \\ escaped)
//
//   for (const Subject& s : Subjects())
//     for (const Scenario& sc : ScenariosOf(s)) Expected<Pipeline> p = BindScenario(s, sc);
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "seam/model.h"
#include "seam/plan.h"

namespace seam::golden {

struct Subject {
  std::string name;
  std::string summary;  // what it is and its stage pattern, for the file's first line
  std::function<Model()> make;
};

// Every catalogue model, then the seed PR's stack shapes, in a fixed order.
const std::vector<Subject>& Subjects();

struct Scenario {
  std::string name;  // "<subject> <configuration>", see ConfigName
  ParallelConfig cfg;
};

// "tp4 attn-dp2 dense-tp1 a2a input-scattered rs pp2 1+3": what differs from
// the defaults (dense-tp only when it is not tp), the reduction, the pipeline.
std::string ConfigName(const ParallelConfig& cfg);
// The inverse of ConfigName; an error names the first word it cannot read.
Expected<ParallelConfig> ParseConfigName(std::string_view name);

// The configurations every subject runs under, before reduction and split.
std::vector<ParallelConfig> BaseConfigs();
// Every scenario of a model with `layers` layers: each base configuration
// under each reduction, uncut and cut over two ranks (every split for up to
// four layers; else an even and an uneven one).
std::vector<Scenario> ScenariosOf(const std::string& subject, int layers);

// What the binder does with a scenario: the pipeline, unverified, or its error.
Expected<Pipeline> BindScenario(const Model& model, const Scenario& s);

// A scenario as the corpus records it.
struct Recorded {
  std::string name;
  Expected<Pipeline> outcome;
  int line = 0;  // where it starts in its file (reading only)
};

// The file of one subject; identical plans of a later scenario are written
// as a back-reference to the first one.
std::string WriteSubjectFile(const Subject& subject, const std::vector<Recorded>& scenarios);
// Reads a subject file without verifying its plans; `path` names it in errors.
// Back-references resolve to the plans of the scenario they name, with this
// scenario's configuration.
Expected<std::vector<Recorded>> ReadSubjectFile(std::string_view text, const std::string& path);

// The differing leaves of two outcomes, at most `limit`, each
// "rank 1 / ordinary / stage 3 / entry[0].rows_out: stored slice, bound attn".
std::vector<std::string> LeafDifferences(const Expected<Pipeline>& stored, const Expected<Pipeline>& bound,
                                         size_t limit);

// The file name of a subject's scenarios inside the corpus folder.
std::string FileName(const Subject& s);

}  // namespace seam::golden
