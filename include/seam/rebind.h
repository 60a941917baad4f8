// seam/rebind.h — is a plan the one seam binds?
//
// A plan read from a file may be well formed and keep every invariant and
// still not be what seam binds for its stages and configuration (a step
// added that changes nothing, a gather moved). Binding the stages the plan
// declares under the configuration it names and comparing shows it.
//
//   Expected<std::vector<std::string>> d = CompareWithBinder(plans);
//   if (d && !d->empty()) ... one line per difference ...
#pragma once

#include <string>
#include <vector>

#include "seam/model.h"
#include "seam/plan.h"

namespace seam {

// The model the plans declare: its name, sizes and each layer's stages, as
// the stages of every rank's ordinary line hold them. The plans must be a
// whole, well-formed pipeline (VerifyPipeline finds nothing).
Model DeclaredModel(const Pipeline& ranks);

// The differences between the plans and what seam binds for their declared
// model and configuration (with add+norm fused or unfused, whichever the
// plans use), one line each; empty when they are the same.
std::vector<std::string> CompareWithBinder(const Pipeline& ranks);

}  // namespace seam
