// seam/sharding.h — whether a model's sizes split over a parallel
// configuration: what both `seam plan` and `seam run` accept.
//
// Two kinds of fact, checked in this order: the shardings an inference
// engine would refuse (heads, key/value heads, FFN and expert widths that do
// not divide over their group), then what the canonical reduction needs
// (power-of-two sum groups, widths that split into its K-blocks). A model
// without sizes (the tiny stacks the sweep builds) has only the second's
// group rule to meet.
//
//   if (Status s = CheckSharding(model, cfg); !s.ok()) return s.error();
#pragma once

#include "seam/model.h"
#include "seam/topology.h"

namespace seam {

Status CheckSharding(const Model& m, const ParallelConfig& cfg);
// The first kind alone: what an engine refuses at start-up.
Status CheckEngineSplits(const Model& m, const ParallelConfig& cfg);

// The member of an a2a MoE's group that holds `expert`: experts are dealt
// round-robin over the group.
constexpr int ExpertOwner(int expert, int members) { return expert % members; }

}  // namespace seam
