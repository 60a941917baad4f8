// seam's errors as Python exceptions: each Error becomes the seam.Error
// subclass of its code (seam/_errors.py), carrying its message, kind, stage
// and rule.
#pragma once

#include <pybind11/pybind11.h>

#include "seam/error.h"

namespace seam::python {

[[noreturn]] void Raise(const Error& e);

// The value of an Expected, or its error raised.
template <class T>
T Take(Expected<T> e) {
  if (!e) Raise(e.error());
  return *std::move(e);
}
// The value of a keyword argument's Expected, or seam.BadInput naming the
// argument as the command line names its flag ("moe: ..." for "--moe: ...").
template <class T>
T TakeArg(const char* name, Expected<T> e) {
  if (!e) Raise(InvalidArgument(std::string(name) + ": " + e.error().message));
  return *std::move(e);
}
inline void Check(const Status& s) {
  if (!s.ok()) Raise(s.error());
}

// Translates seam's thrown errors (Failure, InternalError) met anywhere in
// the module.
void RegisterErrors();

}  // namespace seam::python
