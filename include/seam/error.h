// seam/error.h — the error vocabulary: Error, Status and Expected<T>.
//
// Errors the user or the configuration caused come back as values; they say
// what is wrong and what would work instead. Broken internal invariants are
// reported with SEAM_CHECK, which throws InternalError with file:line (a bug
// in seam, never a user mistake).
//
//   Expected<ParallelConfig> cfg = ...;
//   if (!cfg) { std::cerr << cfg.error().message; return 2; }
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace seam {

enum class ErrorCode {
  kInvalidArgument,  // a flag or size that cannot work (tp not divisible, ...)
  kUnsupported,      // a combination the binder rejects (names stage and rule)
  kMalformed,        // a file that does not parse or misses fields
  kFailedCheck,      // a plan that violates an invariant
};

struct Error {
  ErrorCode code = ErrorCode::kInvalidArgument;
  std::string message;
  // A binder rejection names the stage and the rule it breaks; a pipeline
  // cut must reject with the same two as the uncut stack.
  int stage = -1;
  std::string rule;
};

Error InvalidArgument(std::string message);
Error Unsupported(std::string message);
Error Malformed(std::string message);
Error FailedCheck(std::string message);

// A success or an Error; [[nodiscard]] so a failure cannot be dropped.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design
  static Status Ok() { return Status(); }
  bool ok() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
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
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }
  Status status() const { return ok() ? Status::Ok() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

// Thrown only for broken internal invariants (bugs), never for user input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void FailCheck(const char* condition, const char* file, int line,
                            const std::string& detail);

}  // namespace seam

#define SEAM_CHECK(cond, detail)                                   \
  do {                                                             \
    if (!(cond)) ::seam::FailCheck(#cond, __FILE__, __LINE__, (detail)); \
  } while (false)
