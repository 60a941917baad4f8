// seam/error.h — the error vocabulary: Error, Status and Expected<T>.
//
// Everything that can fail for a reason outside the program comes back as a
// value: Status or Expected<T>, carrying an Error whose code says whose the
// failure is (bad input, a failed check, a deadline) and whose message says
// what is wrong and what would work instead. Broken internal invariants are
// reported with SEAM_CHECK, which throws InternalError with file:line (a bug
// in seam, never a user mistake). Inside one module a failure deep in a
// rank's body or a parser may travel as a thrown Failure; the module's
// boundary catches it and returns its Error (docs/errors.md).
//
//   SEAM_RETURN_IF_ERROR(CheckSharding(model, cfg));
//   SEAM_ASSIGN_OR_RETURN(Pipeline plans, BindPipeline(model, cfg));
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace seam {

enum class ErrorCode {
  kInvalidArgument,   // a flag or size that cannot work (tp not divisible, ...)
  kUnsupported,       // a combination the binder rejects (names stage and rule)
  kMalformed,         // a file that does not parse or misses fields
  kFailedCheck,       // a plan that violates an invariant, or a run that disagrees with its reference
  kDeadlineExceeded,  // a rank did not reach a collective within the run's timeout
  kInternal,          // a bug in seam met at a boundary that reports rather than throws
};

struct Error {
  // No default: an error always says whose failure it is (a forgotten code
  // would otherwise read as bad input).
  Error() = delete;
  Error(ErrorCode c, std::string m) : code(c), message(std::move(m)) {}

  ErrorCode code;
  std::string message;
  // A binder rejection names the stage and the rule it breaks; a pipeline
  // cut must reject with the same two as the uncut stack.
  int stage = -1;
  std::string rule;
};

// The exit status a command reports for an error of this code: 1 a failed
// check, 2 bad input (flags, sizes, files, what the binder rejects), 3 a
// deadline exceeded, 4 an internal error. 0 is success.
int ExitStatusOf(ErrorCode code);

// Throws InternalError with file:line (SEAM_CHECK).
[[noreturn]] void FailCheck(const char* condition, const char* file, int line, const std::string& detail);
// Throws InternalError naming the error whose Expected's value was read.
[[noreturn]] void ValueOfAnError(const Error& e);

Error InvalidArgument(std::string message);
Error Unsupported(std::string message);
Error Malformed(std::string message);
Error FailedCheck(std::string message);
Error DeadlineExceeded(std::string message);
Error Internal(std::string message);
// An allocation failed though the run's estimate fit its limit: bad input
// (the sizes asked for do not fit this machine), the same on every thread.
Error OutOfMemory();

// A success or an Error; [[nodiscard]] so a failure cannot be dropped.
// A success holds no Error (no strings made or freed): the binder returns
// many per plan.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT: implicit by design
  static Status Ok() { return Status(); }
  bool ok() const { return !error_.has_value(); }
  // Only of a failed status: asking a success for its error is a bug.
  const Error& error() const {
    if (!error_) FailCheck("!ok()", __FILE__, __LINE__, "the error of a successful Status was read");
    return *error_;
  }

 private:
  std::optional<Error> error_;
};

// A value or an Error. Small on purpose: the toolchain's std::expected needs
// C++23 and newer clang than the fuzzing toolchain has.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Expected(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // Reading the value of an error, or the error of a value, is a bug in the
  // caller: it is reported with the error it ignored, not as bad_variant_access.
  const T& value() const& {
    HoldsValue();
    return std::get<0>(v_);
  }
  T& value() & {
    HoldsValue();
    return std::get<0>(v_);
  }
  T&& value() && {
    HoldsValue();
    return std::get<0>(std::move(v_));
  }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const {
    if (ok()) FailCheck("!ok()", __FILE__, __LINE__, "the error of an Expected holding a value was read");
    return std::get<1>(v_);
  }
  Status status() const { return ok() ? Status::Ok() : Status(error()); }

 private:
  void HoldsValue() const {
    if (!ok()) ValueOfAnError(std::get<1>(v_));
  }

  std::variant<T, Error> v_;
};

// A failure thrown inside a module (from deep in a rank's body, a parser),
// caught at the module's boundary and returned as the Error it carries.
class Failure : public std::exception {
 public:
  explicit Failure(Error error) : error_(std::move(error)) {}
  const Error& error() const { return error_; }
  const char* what() const noexcept override { return error_.message.c_str(); }

 private:
  Error error_;
};

// Thrown only for broken internal invariants (bugs), never for user input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace seam

// Returns the error of a failed Status from the enclosing function (which
// returns Status or Expected<T>).
#define SEAM_RETURN_IF_ERROR(expr)                                                             \
  do {                                                                                         \
    if (::seam::Status seam_status_ = (expr); !seam_status_.ok()) return seam_status_.error(); \
  } while (false)

// Declares or assigns `lhs` from an Expected's value, or returns its error.
#define SEAM_ASSIGN_OR_RETURN(lhs, expr) SEAM_ASSIGN_OR_RETURN_AT(SEAM_CONCAT_(seam_expected_, __LINE__), lhs, expr)
#define SEAM_ASSIGN_OR_RETURN_AT(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp) return tmp.error();                  \
  lhs = std::move(tmp).value()
#define SEAM_CONCAT_(a, b) SEAM_CONCAT_INNER_(a, b)
#define SEAM_CONCAT_INNER_(a, b) a##b

#define SEAM_CHECK(cond, detail)                                         \
  do {                                                                   \
    if (!(cond)) ::seam::FailCheck(#cond, __FILE__, __LINE__, (detail)); \
  } while (false)
