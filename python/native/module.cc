// seam._seam: the native side of the seam Python package (seam/__init__.py
// is the API; this module holds seam's values and calls its libraries).
#include <pybind11/pybind11.h>

#include "compare.h"
#include "errors.h"
#include "plans.h"
#include "seam/version.h"

PYBIND11_MODULE(_seam, m) {
  m.doc() = "seam's native module; use the seam package.";
  m.attr("__version__") = SEAM_VERSION_STRING;
  seam::python::RegisterErrors();
  seam::python::AddPlans(m);
  seam::python::AddCompare(m);
  seam::python::AddRun(m);
}
