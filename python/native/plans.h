// The plans part of the module: seam.Plan's native side.
#pragma once

#include <pybind11/pybind11.h>

#include "seam/plan.h"

namespace seam::python {

// Every pipeline rank's plan, held whole (a std::vector would become a list).
struct Plans {
  Pipeline ranks;
};

void AddPlans(pybind11::module_& m);

}  // namespace seam::python
