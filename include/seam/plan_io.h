// seam/plan_io.h — a plan as text: a table for people, JSON for tools (it
// reads back to an equal Plan), Graphviz dot, and a structural diff.
//
//   std::cout << ToTable(plan);
//   Expected<Plan> back = PlanFromJson(ToJson(plan));   // *back == plan
//   for (const std::string& d : Diff(a, b)) std::cout << d << "\n";
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seam/plan.h"

namespace seam {

std::string ToTable(const Plan& plan);
std::string ToTable(const Pipeline& ranks);  // each rank's table in turn
std::string ToDot(const Plan& plan);
std::string ToDot(const Pipeline& ranks);  // one graph, the handoffs as edges

// JSON with every fact of the plan; "bytes_per_token" fields are derived and
// written for readers, and ignored when read back.
std::string ToJson(const Plan& plan);
// Reads a plan without verifying it; a malformed document is an error that
// names the JSON path of the first bad field.
Expected<Plan> PlanFromJson(std::string_view text);

// A pipeline of one rank is written as that rank's plan; of several, as
// {"seam_pipeline": 1, "ranks": [plan, ...]}. The reader takes either.
std::string ToJson(const Pipeline& ranks);
Expected<Pipeline> PipelineFromJson(std::string_view text);

// The differences between two plans, one line each, empty when equal.
std::vector<std::string> Diff(const Plan& a, const Plan& b);
std::vector<std::string> Diff(const Pipeline& a, const Pipeline& b);  // rank by rank

}  // namespace seam
