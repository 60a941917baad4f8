// The error vocabulary: each code's exit status, and the macros that pass
// an error up.
#include <gtest/gtest.h>

#include <type_traits>

#include "seam/error.h"

namespace seam {
namespace {

TEST(Errors, EachCodeHasOneExitStatus) {
  EXPECT_EQ(ExitStatusOf(ErrorCode::kFailedCheck), 1);
  EXPECT_EQ(ExitStatusOf(ErrorCode::kInvalidArgument), 2);
  EXPECT_EQ(ExitStatusOf(ErrorCode::kUnsupported), 2);
  EXPECT_EQ(ExitStatusOf(ErrorCode::kMalformed), 2);
  EXPECT_EQ(ExitStatusOf(ErrorCode::kDeadlineExceeded), 3);
  EXPECT_EQ(ExitStatusOf(ErrorCode::kInternal), 4);
}

Status FailsWhen(bool fail) { return fail ? Status(Malformed("bad")) : Status::Ok(); }
Expected<int> Half(int n) {
  if (n % 2 != 0) return InvalidArgument("odd");
  return n / 2;
}

// Steps that stop at the first error and pass it up unchanged.
Expected<int> Quarter(int n, bool fail_first) {
  SEAM_RETURN_IF_ERROR(FailsWhen(fail_first));
  SEAM_ASSIGN_OR_RETURN(const int half, Half(n));
  SEAM_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(Errors, TheMacrosReturnTheFirstErrorAndOtherwiseTheValue) {
  EXPECT_EQ(Quarter(8, false).value(), 2);
  EXPECT_EQ(Quarter(8, true).error().code, ErrorCode::kMalformed);
  EXPECT_EQ(Quarter(6, false).error().message, "odd");  // 6 / 2 = 3 is odd
  EXPECT_EQ(Quarter(5, false).error().code, ErrorCode::kInvalidArgument);
}

TEST(Errors, AStatusIsOkExactlyWhenItHoldsNoErrorAndKeepsTheOneItHolds) {
  const Status ok = Status::Ok();
  EXPECT_TRUE(ok.ok());
  const Status failed = Unsupported("no path");
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(failed.error().message, "no path");
  const Status copy = failed;
  EXPECT_EQ(copy.error().message, "no path");
  EXPECT_TRUE(Expected<int>(3).status().ok());
  EXPECT_EQ(Expected<int>(Malformed("x")).status().error().message, "x");
}

// Reading what is not there is a bug in the caller, reported with what it
// ignored, never bad_variant_access or an empty error that reads as bad input.
TEST(Errors, ReadingTheValueOfAnErrorReportsTheErrorAsAnInternalError) {
  const Expected<int> failed = Malformed("config.json: missing field 'hidden_size'");
  try {
    (void)failed.value();
    FAIL() << "value() of an error returned";
  } catch (const InternalError& e) {
    EXPECT_STREQ(e.what(),
                 "internal error: the value of a failed Expected was read; its error: config.json: missing "
                 "field 'hidden_size'");
  }
  EXPECT_THROW((void)*Expected<int>(Malformed("x")), InternalError);
  EXPECT_THROW((void)Expected<int>(3).error(), InternalError);
  EXPECT_THROW((void)Status::Ok().error(), InternalError);
  static_assert(!std::is_default_constructible_v<Error>, "an Error always names its code");
}

TEST(Errors, AFailureCarriesItsError) {
  try {
    throw Failure(DeadlineExceeded("late"));
  } catch (const Failure& f) {
    EXPECT_EQ(f.error().code, ErrorCode::kDeadlineExceeded);
    EXPECT_STREQ(f.what(), "late");
  }
}

}  // namespace
}  // namespace seam
