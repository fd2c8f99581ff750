// Tests for Status, Result<T>, the code names and numbers, and the propagation macros.

#include "rolly/core/status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rolly/core/status_matchers.h"

namespace rolly {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Each code with its permanent number and its documented name.
struct CodeRow {
  StatusCode code;
  int number;
  std::string_view name;
};

constexpr CodeRow kCodes[] = {
    {StatusCode::kOk, 0, "Ok"},
    {StatusCode::kNotFound, 1, "NotFound"},
    {StatusCode::kDamaged, 2, "Damaged"},
    {StatusCode::kNewerVersion, 3, "NewerVersion"},
    {StatusCode::kInvalidInput, 4, "InvalidInput"},
    {StatusCode::kInvalidData, 5, "InvalidData"},
    {StatusCode::kStorageFailed, 6, "StorageFailed"},
    {StatusCode::kNoSpace, 7, "NoSpace"},
    {StatusCode::kBusy, 8, "Busy"},
    {StatusCode::kBlocked, 9, "Blocked"},
    {StatusCode::kNotAuthority, 10, "NotAuthority"},
    {StatusCode::kCancelled, 11, "Cancelled"},
    {StatusCode::kChanged, 12, "Changed"},
    {StatusCode::kSignedOut, 13, "SignedOut"},
};

TEST(StatusCodeTest, NumbersArePermanent) {
  static_assert(static_cast<int>(StatusCode::kOk) == 0);
  static_assert(static_cast<int>(StatusCode::kNotFound) == 1);
  static_assert(static_cast<int>(StatusCode::kDamaged) == 2);
  static_assert(static_cast<int>(StatusCode::kNewerVersion) == 3);
  static_assert(static_cast<int>(StatusCode::kInvalidInput) == 4);
  static_assert(static_cast<int>(StatusCode::kInvalidData) == 5);
  static_assert(static_cast<int>(StatusCode::kStorageFailed) == 6);
  static_assert(static_cast<int>(StatusCode::kNoSpace) == 7);
  static_assert(static_cast<int>(StatusCode::kBusy) == 8);
  static_assert(static_cast<int>(StatusCode::kBlocked) == 9);
  static_assert(static_cast<int>(StatusCode::kNotAuthority) == 10);
  static_assert(static_cast<int>(StatusCode::kCancelled) == 11);
  static_assert(static_cast<int>(StatusCode::kChanged) == 12);
  static_assert(static_cast<int>(StatusCode::kSignedOut) == 13);
  for (const CodeRow& row : kCodes) {
    EXPECT_EQ(static_cast<int>(row.code), row.number) << row.name;
  }
}

TEST(StatusCodeTest, CountCoversEveryCodeExactly) {
  EXPECT_EQ(kStatusCodeCount, 14);
  EXPECT_EQ(static_cast<int>(std::size(kCodes)), kStatusCodeCount);
}

TEST(StatusCodeTest, EveryCodeHasItsName) {
  for (const CodeRow& row : kCodes) {
    EXPECT_EQ(StatusCodeName(row.code), row.name) << "code " << row.number;
  }
}

TEST(StatusCodeTest, EveryNumberBelowCountHasADistinctKnownName) {
  std::vector<std::string_view> names;
  for (int i = 0; i < kStatusCodeCount; ++i) {
    const std::string_view name = StatusCodeName(static_cast<StatusCode>(i));
    EXPECT_NE(name, "Unknown") << "code " << i;
    EXPECT_THAT(names, Not(::testing::Contains(name))) << "code " << i;
    names.push_back(name);
  }
}

TEST(StatusCodeTest, OutOfRangeCodeIsUnknown) {
  EXPECT_EQ(StatusCodeName(static_cast<StatusCode>(kStatusCodeCount)), "Unknown");
  EXPECT_EQ(StatusCodeName(static_cast<StatusCode>(255)), "Unknown");
}

TEST(StatusTest, DefaultIsOkWithEmptyMessage) {
  const Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_THAT(s.message(), IsEmpty());
  EXPECT_THAT(s, IsOk());
  EXPECT_EQ(s, OkStatus());
}

TEST(StatusTest, OkCodeDropsItsMessage) {
  const Status s(StatusCode::kOk, "ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_THAT(s.message(), IsEmpty());
  EXPECT_EQ(s, OkStatus());
  EXPECT_EQ(s.ToString(), "Ok");
}

TEST(StatusTest, FailedStatusKeepsCodeAndMessage) {
  const Status s(StatusCode::kDamaged, "header checksum does not match");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDamaged);
  EXPECT_EQ(s.message(), "header checksum does not match");
  EXPECT_THAT(s, StatusIs(StatusCode::kDamaged, HasSubstr("header")));
  EXPECT_THAT(s, Not(StatusIs(StatusCode::kDamaged, HasSubstr("directory"))));
  EXPECT_THAT(s, Not(StatusIs(StatusCode::kNotFound)));
  EXPECT_THAT(s, Not(IsOk()));
}

TEST(StatusTest, ToStringJoinsNameAndMessage) {
  EXPECT_EQ(OkStatus().ToString(), "Ok");
  EXPECT_EQ(DamagedError("header checksum does not match").ToString(),
            "Damaged: header checksum does not match");
  EXPECT_EQ(Status(StatusCode::kNotFound, "").ToString(), "NotFound");
}

TEST(StatusTest, FailedStatusWithEmptyMessageIsNotOk) {
  const Status s(StatusCode::kBusy, "");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s, StatusIs(StatusCode::kBusy));
  EXPECT_THAT(s.message(), IsEmpty());
}

TEST(StatusTest, CopyIsIndependentAndEqual) {
  Status original = NotFoundError("slot 3");
  Status copy(original);
  EXPECT_EQ(copy, original);
  EXPECT_THAT(copy, StatusIs(StatusCode::kNotFound, "slot 3"));

  original = OkStatus();
  EXPECT_TRUE(original.ok());
  EXPECT_THAT(copy, StatusIs(StatusCode::kNotFound, "slot 3"));
}

TEST(StatusTest, CopyAssignReplacesAndSelfAssignKeeps) {
  Status a = DamagedError("chunk 4");
  Status b = BusyError("loading");
  b = a;
  EXPECT_THAT(b, StatusIs(StatusCode::kDamaged, "chunk 4"));
  EXPECT_EQ(a, b);

  Status& same = a;
  a = same;
  EXPECT_THAT(a, StatusIs(StatusCode::kDamaged, "chunk 4"));

  b = OkStatus();
  EXPECT_TRUE(b.ok());
  EXPECT_THAT(a, StatusIs(StatusCode::kDamaged, "chunk 4"));
}

TEST(StatusTest, MoveCarriesCodeAndMessage) {
  Status a = StorageFailedError("fsync failed");
  Status b(std::move(a));
  EXPECT_THAT(b, StatusIs(StatusCode::kStorageFailed, "fsync failed"));

  Status c;
  c = std::move(b);
  EXPECT_THAT(c, StatusIs(StatusCode::kStorageFailed, "fsync failed"));
}

TEST(StatusTest, EqualityComparesCodeAndMessage) {
  EXPECT_EQ(DamagedError("x"), DamagedError("x"));
  EXPECT_NE(DamagedError("x"), DamagedError("y"));
  EXPECT_NE(DamagedError("x"), NotFoundError("x"));
  EXPECT_NE(DamagedError(""), OkStatus());
}

TEST(StatusTest, EachErrorConstructorGivesItsCode) {
  const std::pair<Status, StatusCode> cases[] = {
      {NotFoundError("m"), StatusCode::kNotFound},
      {DamagedError("m"), StatusCode::kDamaged},
      {NewerVersionError("m"), StatusCode::kNewerVersion},
      {InvalidInputError("m"), StatusCode::kInvalidInput},
      {InvalidDataError("m"), StatusCode::kInvalidData},
      {StorageFailedError("m"), StatusCode::kStorageFailed},
      {NoSpaceError("m"), StatusCode::kNoSpace},
      {BusyError("m"), StatusCode::kBusy},
      {BlockedError("m"), StatusCode::kBlocked},
      {NotAuthorityError("m"), StatusCode::kNotAuthority},
      {CancelledError("m"), StatusCode::kCancelled},
      {ChangedError("m"), StatusCode::kChanged},
      {SignedOutError("m"), StatusCode::kSignedOut},
  };
  // Every code but kOk has exactly one constructor.
  EXPECT_EQ(static_cast<int>(std::size(cases)), kStatusCodeCount - 1);
  for (const auto& [status, code] : cases) {
    EXPECT_FALSE(status.ok()) << StatusCodeName(code);
    EXPECT_THAT(status, StatusIs(code, "m"));
  }
}

TEST(ResultTest, HoldsAValue) {
  Result<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r, IsOk());
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(r.value(), 42);
  EXPECT_EQ(*r, 42);
}

TEST(ResultTest, HoldsAFailedStatus) {
  Result<int> r = DamagedError("record 7");
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r, StatusIs(StatusCode::kDamaged, "record 7"));
}

TEST(ResultTest, MadeFromOkStatusBecomesInvalidInput) {
  Result<int> r = OkStatus();
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r, StatusIs(StatusCode::kInvalidInput));
}

TEST(ResultTest, ConvertsFromConstructibleValue) {
  Result<std::string> r("door");
  ASSERT_OK(r.status());
  EXPECT_EQ(*r, "door");
  EXPECT_EQ(r->size(), 4u);
}

TEST(ResultTest, ValueCanBeModifiedAndMovedOut) {
  Result<std::string> r = std::string("slot");
  r.value() += "_1";
  EXPECT_EQ(*r, "slot_1");
  const std::string moved = std::move(r).value();
  EXPECT_EQ(moved, "slot_1");
}

TEST(ResultTest, HoldsMoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 5);
}

TEST(ResultTest, ConstAccessReadsValue) {
  const Result<std::string> r = std::string("abc");
  EXPECT_EQ(r.value(), "abc");
  EXPECT_EQ(*r, "abc");
  EXPECT_EQ(r->size(), 3u);
}

TEST(ResultDeathTest, ReadingValueOfFailedResultAborts) {
  Result<int> r = NotFoundError("slot 9");
  EXPECT_DEATH({ [[maybe_unused]] int v = r.value(); }, "value of a failed Result.*slot 9");
}

TEST(ResultDeathTest, DereferencingFailedResultAborts) {
  const Result<std::string> r = CancelledError("stopped");
  EXPECT_DEATH({ [[maybe_unused]] std::size_t n = r->size(); }, "Cancelled: stopped");
}

// Helpers for the propagation macros. `reached` records whether the code after the macro ran.
Status FailIf(bool fail) { return fail ? BusyError("busy now") : OkStatus(); }

Status ReturnIfError(bool fail, bool* reached) {
  ROLLY_RETURN_IF_ERROR(FailIf(fail));
  *reached = true;
  return OkStatus();
}

Result<int> Half(int n) {
  if (n % 2 != 0) return InvalidInputError("odd");
  return n / 2;
}

Status AssignOrReturn(int n, int* out, bool* reached) {
  ROLLY_ASSIGN_OR_RETURN(const int half, Half(n));
  *reached = true;
  *out = half;
  return OkStatus();
}

Result<int> QuarterOf(int n) {
  int half = 0;
  ROLLY_ASSIGN_OR_RETURN(half, Half(n));             // into an existing variable
  ROLLY_ASSIGN_OR_RETURN(auto quarter, Half(half));  // two on neighbouring lines
  return quarter;
}

TEST(StatusMacrosTest, ReturnIfErrorPropagatesFailure) {
  bool reached = false;
  EXPECT_THAT(ReturnIfError(true, &reached), StatusIs(StatusCode::kBusy, "busy now"));
  EXPECT_FALSE(reached);
}

TEST(StatusMacrosTest, ReturnIfErrorContinuesOnOk) {
  bool reached = false;
  EXPECT_OK(ReturnIfError(false, &reached));
  EXPECT_TRUE(reached);
}

TEST(StatusMacrosTest, AssignOrReturnPropagatesFailure) {
  bool reached = false;
  int out = -1;
  EXPECT_THAT(AssignOrReturn(3, &out, &reached), StatusIs(StatusCode::kInvalidInput, "odd"));
  EXPECT_FALSE(reached);
  EXPECT_EQ(out, -1);
}

TEST(StatusMacrosTest, AssignOrReturnAssignsValue) {
  bool reached = false;
  int out = -1;
  EXPECT_OK(AssignOrReturn(10, &out, &reached));
  EXPECT_TRUE(reached);
  EXPECT_EQ(out, 5);
}

TEST(StatusMacrosTest, AssignOrReturnWorksIntoExistingVariablesAndResults) {
  ASSERT_OK_AND_ASSIGN(const int quarter, QuarterOf(12));
  EXPECT_EQ(quarter, 3);
  EXPECT_THAT(QuarterOf(6), StatusIs(StatusCode::kInvalidInput));  // 6 -> 3 -> odd
  EXPECT_THAT(QuarterOf(5), StatusIs(StatusCode::kInvalidInput));
}

}  // namespace
}  // namespace rolly
