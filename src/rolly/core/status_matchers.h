// GoogleMock matchers for Status and Result<T>, for the library's tests and for games' own.
//
//   EXPECT_THAT(Read(bytes), StatusIs(StatusCode::kDamaged));
//   EXPECT_THAT(Read(bytes), StatusIs(StatusCode::kDamaged, HasSubstr("header")));
//   EXPECT_THAT(Write(file), IsOk());
//   ASSERT_OK(status);  ASSERT_OK_AND_ASSIGN(auto file, Read(bytes));
//
// Header-only; include it only from test code that links GoogleMock.

#ifndef ROLLY_CORE_STATUS_MATCHERS_H_
#define ROLLY_CORE_STATUS_MATCHERS_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "rolly/core/status.h"

namespace rolly {

inline void PrintTo(const Status& status, std::ostream* os) { *os << status.ToString(); }
inline void PrintTo(StatusCode code, std::ostream* os) { *os << StatusCodeName(code); }

namespace testing_internal {
inline const Status& GetStatus(const Status& status) { return status; }
template <typename T>
const Status& GetStatus(const Result<T>& result) {
  return result.status();
}
}  // namespace testing_internal

// Matches a Status or Result whose code is `code` and whose message matches `message_matcher`.
MATCHER_P2(StatusIs, code, message_matcher,
           std::string(negation ? "isn't " : "is ") +
               std::string(::rolly::StatusCodeName(code))) {
  const ::rolly::Status& s = ::rolly::testing_internal::GetStatus(arg);
  *result_listener << "status is " << s.ToString();
  return s.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(s.message()),
                                       result_listener);
}

// Matches a Status or Result whose code is `code`, whatever its message.
MATCHER_P(StatusIs, code,
          std::string(negation ? "isn't " : "is ") + std::string(::rolly::StatusCodeName(code))) {
  const ::rolly::Status& s = ::rolly::testing_internal::GetStatus(arg);
  *result_listener << "status is " << s.ToString();
  return s.code() == code;
}

// Matches an Ok Status or a Result holding a value.
MATCHER(IsOk, negation ? "isn't Ok" : "is Ok") {
  const ::rolly::Status& s = ::rolly::testing_internal::GetStatus(arg);
  *result_listener << "status is " << s.ToString();
  return s.ok();
}

}  // namespace rolly

#define ROLLY_TEST_CONCAT_INNER_(a, b) a##b
#define ROLLY_TEST_CONCAT_(a, b) ROLLY_TEST_CONCAT_INNER_(a, b)

#define ASSERT_OK(expr) ASSERT_THAT((expr), ::rolly::IsOk())
#define EXPECT_OK(expr) EXPECT_THAT((expr), ::rolly::IsOk())
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(ROLLY_TEST_CONCAT_(rolly_test_result_, __LINE__), lhs, rexpr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(result, lhs, rexpr)        \
  auto result = (rexpr);                                      \
  ASSERT_THAT(result.status(), ::rolly::IsOk());              \
  lhs = std::move(result).value()

#endif  // ROLLY_CORE_STATUS_MATCHERS_H_
