// seam/plan_io.h — a plan as text: a table for people, JSON for tools (it
// reads back to an equal Plan), a compact text form for people and files that
// also reads back, Graphviz dot, and a structural diff.
//
//   std::cout << ToTable(plan);
//   Expected<Plan> back = PlanFromJson(ToJson(plan));   // *back == plan
//   Expected<Plan> same = PlanFromText(ToText(plan));   // *same == plan
//   for (const std::string& d : Diff(a, b)) std::cout << d << "\n";
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "seam/model.h"
#include "seam/plan.h"

namespace seam {

// The forms a plan prints in. Only svg can fail: it needs Graphviz.
enum class PlanFormat { kTable, kJson, kText, kDot, kSvg };
std::string_view Name(PlanFormat f);
Expected<PlanFormat> ParsePlanFormat(std::string_view text);
Expected<std::string> Format(const Pipeline& ranks, PlanFormat f);

std::string ToTable(const Plan& plan);
std::string ToTable(const Pipeline& ranks);  // each rank's table in turn
// A plan in a screen: per rank and batch variant, one row per kind of seam
// (the steps between two stages' computes) with how often the rank crosses
// it, its collectives and its bytes per token (seam plan --summary).
std::string ToSummary(const Pipeline& ranks);
// "wire: bf16 activations\n": the dtype the byte counts of a table are in.
std::string WireText(const WireDtypes& w);
std::string ToDot(const Plan& plan);
std::string ToDot(const Pipeline& ranks);  // one graph, the handoffs as edges
// The dot graph drawn by Graphviz's `dot -Tsvg`, found on PATH; without it
// an InvalidArgument error that says how to get it, and one too when `dot`
// refuses the graph or writes no SVG.
Expected<std::string> ToSvg(const Pipeline& ranks);

// A parallel configuration as the plan's "config" object, resolved (dense_tp
// and ep as sizes); run and compare reports write the same object.
nlohmann::ordered_json ConfigJson(const ParallelConfig& c);

// A catalogue entry as `seam models --format json` lists it (and the Python
// package reads it): name, summary, stage pattern, features and the real
// config.json its full size comes from (null: the tiny shape only).
nlohmann::ordered_json ModelJson(const CatalogueEntry& e);

// JSON with every fact of the plan; "bytes_per_token" fields are derived and
// written for readers, and ignored when read back.
std::string ToJson(const Plan& plan);
// Reads a plan without verifying it; a malformed document is an error that
// names the JSON path of the first bad field.
Expected<Plan> PlanFromJson(std::string_view text);

// A pipeline is always written as {"seam_pipeline": 2, "ranks": [plan, ...]},
// even of one rank; the reader also takes one plan on its own.
std::string ToJson(const Pipeline& ranks);
Expected<Pipeline> PipelineFromJson(std::string_view text);

// The compact text form: every fact of the plan, one line per step,
// indentation (spaces) for structure; blank lines and lines starting with #
// are skipped. A pipeline is its ranks' plans one after another.
//
//   plan llama hidden=64 streams=1 vocab=0 act=bf16 dispatch=bf16 tp=2 attn_dp=1 dense_tp=2 moe=tp ep=2 dp_lm_head=no
//   reduction=ar scattered=no
//        pp=1 split=- pp_rank=0 layers=0..4          (one line)
//   line ordinary                                    (a batch variant)
//     start STEP                                     (the embedding, or from_pp on later ranks)
//     stage 1 layer 0 dense-ffn [key=value ...]      (declared facts that differ from a bare declaration:
//                                                     attention_sum gathers_input update read gather_width
//                                                     top_k a2a window kv_heads ffn_width)
//       arrives value=full owes=attn_tp residual=full  (value=none: a written stream; residual=none:
//                                                     the stack entry; update=hyper-connection)
//       runs input=full residual=full                (none: a no-op's input)
//       entry STEP   compute STEP   exit STEP        (one line each, in this order)
//       departs value=full owes=tp residual=full
//     end final                                      (or send)
//       arrives BOUNDARY
//       step STEP
//
// STEP is KIND[(GROUP)] OPERAND ROWS [owes=OWED] w=WIDTH, e.g.
// "rs(attn_tp) value attn->slice owes=attn_tp->- w=64": ROWS and OWED are one
// name when a step keeps them, "before->after" when it changes them; owes= is
// left out when nothing is owed on either side. Enum names are the JSON ones.
std::string ToText(const Plan& plan);
std::string ToText(const Pipeline& ranks);
// Reads without verifying. A malformed line is a Malformed error
// "<file>:<line>: what was expected"; `first_line` numbers the first line of
// `text` (for a plan embedded in a larger file).
Expected<Pipeline> PipelineFromText(std::string_view text, std::string_view file = "plan", int first_line = 1);
Expected<Plan> PlanFromText(std::string_view text, std::string_view file = "plan");

// The differences between two plans, one line each, empty when equal.
std::vector<std::string> Diff(const Plan& a, const Plan& b);
std::vector<std::string> Diff(const Pipeline& a, const Pipeline& b);  // rank by rank

}  // namespace seam
