#include "seam/error.h"

#include <fmt/format.h>

namespace seam {

Error InvalidArgument(std::string message) { return {ErrorCode::kInvalidArgument, std::move(message)}; }
Error Unsupported(std::string message) { return {ErrorCode::kUnsupported, std::move(message)}; }
Error Malformed(std::string message) { return {ErrorCode::kMalformed, std::move(message)}; }
Error FailedCheck(std::string message) { return {ErrorCode::kFailedCheck, std::move(message)}; }
int ExitStatusOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kFailedCheck: return 1;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kUnsupported:
    case ErrorCode::kMalformed: return 2;
    case ErrorCode::kDeadlineExceeded: return 3;
    case ErrorCode::kInternal: return 4;
  }
  return 4;
}

Error DeadlineExceeded(std::string message) { return {ErrorCode::kDeadlineExceeded, std::move(message)}; }
Error Internal(std::string message) { return {ErrorCode::kInternal, std::move(message)}; }
Error OutOfMemory() {
  return InvalidArgument(
      "ran out of memory; give fewer --tokens or --layers, or a lower --max-memory to be told what fits");
}

void FailCheck(const char* condition, const char* file, int line, const std::string& detail) {
  throw InternalError(fmt::format("internal error at {}:{}: {} ({})", file, line, condition, detail));
}

void ValueOfAnError(const Error& e) {
  throw InternalError(fmt::format("internal error: the value of a failed Expected was read; its error: {}", e.message));
}

}  // namespace seam
