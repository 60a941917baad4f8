#pragma once

#include <pybind11/pybind11.h>

namespace seam::python {

void AddCompare(pybind11::module_& m);  // seam.compare's native side
void AddRun(pybind11::module_& m);      // seam.run's native side

}  // namespace seam::python
