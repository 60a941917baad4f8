#include "seam/error.h"

#include <fmt/format.h>

namespace seam {

Error InvalidArgument(std::string message) {
  return {ErrorCode::kInvalidArgument, std::move(message)};
}
Error Unsupported(std::string message) { return {ErrorCode::kUnsupported, std::move(message)}; }
Error Malformed(std::string message) { return {ErrorCode::kMalformed, std::move(message)}; }
Error FailedCheck(std::string message) { return {ErrorCode::kFailedCheck, std::move(message)}; }

void FailCheck(const char* condition, const char* file, int line, const std::string& detail) {
  throw InternalError(fmt::format("internal error at {}:{}: {} ({})", file, line, condition, detail));
}

}  // namespace seam
