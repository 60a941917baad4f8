#include "errors.h"

#include <string_view>

namespace py = pybind11;

namespace seam::python {
namespace {

// The kinds seam/_errors.py maps to exception classes.
std::string_view KindOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid-argument";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kMalformed: return "malformed";
    case ErrorCode::kFailedCheck: return "failed-check";
    case ErrorCode::kDeadlineExceeded: return "deadline-exceeded";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

// A message may quote a path or a name that is not UTF-8: its bytes become
// U+FFFD rather than the translation failing.
py::str Text(const std::string& s) {
  PyObject* text = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

void SetError(const Error& e) {
  py::object make = py::module_::import("seam._errors").attr("from_native");
  py::object exc = make(KindOf(e.code), Text(e.message), e.stage, Text(e.rule));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
}

}  // namespace

void Raise(const Error& e) {
  SetError(e);
  throw py::error_already_set();
}

void RegisterErrors() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Failure& f) {
      SetError(f.error());
    } catch (const InternalError& e) {
      SetError(Internal(e.what()));
    }
  });
}

}  // namespace seam::python
