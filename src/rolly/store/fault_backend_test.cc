// FaultBackend: every fault kind observable, every status through every operation, counting.

#include "rolly/store/fault_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "rolly/core/status_matchers.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/memory_backend.h"
#include "rolly/store/simulated_file_system.h"
#include "rolly/store/store_test_util.h"

namespace rolly::store {
namespace {

using ::testing::HasSubstr;

FileName Slot(std::string_view slot) { return FileName::ForSlot("f", slot, Copy::kA).value(); }

class FaultBackendTest : public ::testing::Test {
 protected:
  // Runs one operation of `kind` and returns its status.
  Status Run(Op kind) {
    switch (kind) {
      case Op::kWrite:
        return WriteNow(fault_, Slot("s"), BytesOf("new"));
      case Op::kRead:
        return ReadNow(fault_, Slot("s")).status();
      case Op::kExists:
        return ExistsNow(fault_, Slot("s")).status();
      case Op::kDelete:
        return DeleteNow(fault_, Slot("gone"));
      case Op::kList:
        return ListNow(fault_).status();
    }
    return OkStatus();
  }

  MemoryBackend memory_;
  FaultBackend fault_{&memory_};
};

constexpr Op kAllOps[] = {Op::kWrite, Op::kRead, Op::kExists, Op::kDelete, Op::kList};

// The code a caller sees when `code` is injected into an operation of `kind`.
StatusCode Seen(Op kind, StatusCode code) {
  if (code == StatusCode::kStorageFailed || code == StatusCode::kSignedOut) return code;
  if (kind == Op::kWrite && code == StatusCode::kNoSpace) return code;
  if (kind == Op::kRead && code == StatusCode::kNotFound) return code;
  return StatusCode::kStorageFailed;
}

TEST_F(FaultBackendTest, WithoutRulesEverythingPassesThrough) {
  ASSERT_OK(WriteNow(fault_, Slot("s"), BytesOf("bytes")));
  EXPECT_EQ(memory_.Peek(Slot("s")), BytesOf("bytes"));
  ASSERT_OK_AND_ASSIGN(Bytes back, ReadNow(fault_, Slot("s")));
  EXPECT_EQ(back, BytesOf("bytes"));
  EXPECT_EQ(fault_.operations(), 2u);
  EXPECT_EQ(fault_.operations(Op::kWrite), 1u);
  EXPECT_TRUE(fault_.can_list());
}

TEST_F(FaultBackendTest, FailsEachOperationOnceWithEachStatus) {
  ASSERT_OK(WriteNow(memory_, Slot("s"), BytesOf("old")));
  const std::vector<Status> statuses = {StorageFailedError("injected io"),
                                        NoSpaceError("injected full"),
                                        SignedOutError("injected sign-out"),
                                        NotFoundError("injected missing")};
  for (Op kind : kAllOps) {
    for (const Status& status : statuses) {
      SCOPED_TRACE(std::string(OpName(kind)) + " " + status.ToString());
      const auto id = fault_.Add(FaultRule::Fail(status).On(kind));
      EXPECT_THAT(Run(kind), StatusIs(Seen(kind, status.code())));
      EXPECT_OK(Run(kind));  // once only
      EXPECT_EQ(fault_.hits(id), 1u);
      fault_.Remove(id);
    }
  }
  // A failed write never reached the wrapped backend.
  fault_.Add(FaultRule::Fail(StorageFailedError("x")).On(Op::kWrite));
  ASSERT_OK(WriteNow(memory_, Slot("s"), BytesOf("old")));
  EXPECT_THAT(Run(Op::kWrite), StatusIs(StatusCode::kStorageFailed));
  EXPECT_EQ(memory_.Peek(Slot("s")), BytesOf("old"));
}

TEST_F(FaultBackendTest, FailsEachOperationFromThenOnWithEachStatus) {
  ASSERT_OK(WriteNow(memory_, Slot("s"), BytesOf("old")));
  for (Op kind : kAllOps) {
    for (StatusCode code : {StatusCode::kStorageFailed, StatusCode::kNoSpace,
                            StatusCode::kSignedOut, StatusCode::kNotFound}) {
      SCOPED_TRACE(std::string(OpName(kind)) + " " + std::string(StatusCodeName(code)));
      const auto id = fault_.Add(FaultRule::Fail(Status(code, "injected")).On(kind).Nth(2).FromThenOn());
      EXPECT_OK(Run(kind));
      for (int i = 0; i < 4; ++i) EXPECT_THAT(Run(kind), StatusIs(Seen(kind, code)));
      EXPECT_EQ(fault_.hits(id), 4u);
      fault_.Remove(id);
      EXPECT_OK(Run(kind));
    }
  }
}

TEST_F(FaultBackendTest, CountsAllOperationsOrOnlyOneKind) {
  const auto any = fault_.Add(FaultRule::Fail(SignedOutError("third of all")).Nth(3));
  EXPECT_OK(Run(Op::kWrite));
  EXPECT_OK(Run(Op::kRead));
  EXPECT_THAT(Run(Op::kExists), StatusIs(StatusCode::kSignedOut));
  EXPECT_OK(Run(Op::kList));
  EXPECT_EQ(fault_.hits(any), 1u);
  fault_.Clear();

  const auto reads = fault_.Add(FaultRule::Fail(NotFoundError("second read")).On(Op::kRead).Nth(2));
  EXPECT_OK(Run(Op::kRead));
  EXPECT_OK(Run(Op::kWrite));
  EXPECT_OK(Run(Op::kList));
  EXPECT_THAT(Run(Op::kRead), StatusIs(StatusCode::kNotFound));
  EXPECT_OK(Run(Op::kRead));
  EXPECT_EQ(fault_.hits(reads), 1u);
  EXPECT_EQ(fault_.hits(12345), 0u);
  EXPECT_EQ(fault_.operations(Op::kRead), 4u);  // one in the first part
}

TEST_F(FaultBackendTest, LostWriteAnswersOkAndKeepsTheOldBytes) {
  ASSERT_OK(WriteNow(memory_, Slot("s"), BytesOf("old")));
  fault_.Add(FaultRule::LoseWrite());
  EXPECT_OK(WriteNow(fault_, Slot("s"), BytesOf("new")));
  EXPECT_EQ(memory_.Peek(Slot("s")), BytesOf("old"));
  EXPECT_OK(WriteNow(fault_, Slot("t"), BytesOf("new")));  // once only: this one is kept
  EXPECT_EQ(memory_.Peek(Slot("t")), BytesOf("new"));
  fault_.Add(FaultRule::LoseWrite());
  EXPECT_OK(WriteNow(fault_, Slot("u"), BytesOf("new")));
  EXPECT_EQ(memory_.Peek(Slot("u")), std::nullopt);
}

TEST_F(FaultBackendTest, CutWriteStoresTheFirstBytesAndFails) {
  for (std::size_t keep : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{9}}) {
    fault_.Add(FaultRule::CutWrite(keep));
    const Bytes bytes = PatternBytes(9, 3);
    EXPECT_THAT(WriteNow(fault_, Slot("s"), bytes),
                StatusIs(StatusCode::kStorageFailed, HasSubstr("cut")));
    EXPECT_EQ(memory_.Peek(Slot("s")), Bytes(bytes.begin(), bytes.begin() + static_cast<long>(keep)));
  }
  // Past the end: every byte stored, and still a failure.
  fault_.Add(FaultRule::CutWrite(100));
  EXPECT_THAT(WriteNow(fault_, Slot("s"), BytesOf("abc")), StatusIs(StatusCode::kStorageFailed));
  EXPECT_EQ(memory_.Peek(Slot("s")), BytesOf("abc"));
  // A cut rule never touches reads.
  fault_.Add(FaultRule::CutWrite(0).On(Op::kRead));
  ASSERT_OK_AND_ASSIGN(Bytes back, ReadNow(fault_, Slot("s")));
  EXPECT_EQ(back, BytesOf("abc"));
}

TEST_F(FaultBackendTest, FlipBitDamagesTheBytesWrittenOrRead) {
  const Bytes bytes = PatternBytes(16, 1);
  fault_.Add(FaultRule::FlipBit(8 * 3 + 5).On(Op::kWrite));
  ASSERT_OK(WriteNow(fault_, Slot("s"), bytes));
  Bytes expected = bytes;
  expected[3] ^= 0x20;
  EXPECT_EQ(memory_.Peek(Slot("s")), expected);

  ASSERT_OK(WriteNow(memory_, Slot("r"), bytes));
  fault_.Add(FaultRule::FlipBit(0).On(Op::kRead));
  ASSERT_OK_AND_ASSIGN(Bytes read, ReadNow(fault_, Slot("r")));
  Bytes flipped = bytes;
  flipped[0] ^= 0x01;
  EXPECT_EQ(read, flipped);
  EXPECT_EQ(memory_.Peek(Slot("r")), bytes);  // stored bytes intact
  ASSERT_OK_AND_ASSIGN(Bytes again, ReadNow(fault_, Slot("r")));
  EXPECT_EQ(again, bytes);

  fault_.Add(FaultRule::FlipBit(16 * 8).On(Op::kRead));  // past the end: nothing changes
  ASSERT_OK_AND_ASSIGN(Bytes past, ReadNow(fault_, Slot("r")));
  EXPECT_EQ(past, bytes);
}

TEST_F(FaultBackendTest, ZeroRangeDamagesTheBytesWrittenOrRead) {
  const Bytes bytes(10, 0xab);
  fault_.Add(FaultRule::ZeroRange(2, 3).On(Op::kWrite));
  ASSERT_OK(WriteNow(fault_, Slot("s"), bytes));
  Bytes expected = bytes;
  std::fill(expected.begin() + 2, expected.begin() + 5, 0);
  EXPECT_EQ(memory_.Peek(Slot("s")), expected);

  ASSERT_OK(WriteNow(memory_, Slot("r"), bytes));
  fault_.Add(FaultRule::ZeroRange(8, 100).On(Op::kRead));  // clipped to the end
  ASSERT_OK_AND_ASSIGN(Bytes read, ReadNow(fault_, Slot("r")));
  Bytes tail = bytes;
  tail[8] = tail[9] = 0;
  EXPECT_EQ(read, tail);
  EXPECT_EQ(memory_.Peek(Slot("r")), bytes);
}

TEST_F(FaultBackendTest, DelayedAnswersComeLateFromAnotherThread) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kDelay = std::chrono::milliseconds(60);
  fault_.Add(FaultRule::Delay(kDelay).On(Op::kWrite));
  std::promise<std::thread::id> answered;
  const auto start = Clock::now();
  fault_.Write(Slot("s"), BytesOf("x"), [&](Status s) {
    EXPECT_OK(s);
    answered.set_value(std::this_thread::get_id());
  });
  // The wrapped backend has the bytes at once; only the answer waits.
  EXPECT_EQ(memory_.Peek(Slot("s")), BytesOf("x"));
  EXPECT_EQ(fault_.in_flight(), 1u);
  fault_.WaitUntilIdle();
  EXPECT_GE(Clock::now() - start, kDelay);
  EXPECT_NE(answered.get_future().get(), std::this_thread::get_id());
  // Delays add up; other operations are not delayed.
  fault_.Add(FaultRule::Delay(kDelay).On(Op::kRead));
  fault_.Add(FaultRule::Delay(kDelay).On(Op::kRead));
  const auto read_start = Clock::now();
  EXPECT_OK(ReadNow(fault_, Slot("s")).status());
  EXPECT_GE(Clock::now() - read_start, 2 * kDelay);
}

TEST_F(FaultBackendTest, AnswerElsewhereUsesTheFaultBackendsThread) {
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id plain;
  fault_.Exists(Slot("s"), [&](Result<bool>) { plain = std::this_thread::get_id(); });
  EXPECT_EQ(plain, caller);  // MemoryBackend answers on the caller's thread

  fault_.Add(FaultRule::AnswerElsewhere().FromThenOn());
  std::vector<std::promise<std::thread::id>> answered(5);
  fault_.Write(Slot("s"), BytesOf("x"), [&](Status) { answered[0].set_value(std::this_thread::get_id()); });
  fault_.Read(Slot("s"), [&](Result<Bytes>) { answered[1].set_value(std::this_thread::get_id()); });
  fault_.Exists(Slot("s"), [&](Result<bool>) { answered[2].set_value(std::this_thread::get_id()); });
  fault_.List([&](Result<std::vector<FileName>>) { answered[3].set_value(std::this_thread::get_id()); });
  fault_.Delete(Slot("s"), [&](Status) { answered[4].set_value(std::this_thread::get_id()); });
  fault_.WaitUntilIdle();
  for (auto& p : answered) EXPECT_NE(p.get_future().get(), caller);
}

TEST_F(FaultBackendTest, FirstFailWinsOverOtherRules) {
  fault_.Add(FaultRule::Fail(NoSpaceError("first")));
  fault_.Add(FaultRule::Fail(SignedOutError("second")));
  fault_.Add(FaultRule::LoseWrite());
  EXPECT_THAT(WriteNow(fault_, Slot("s"), BytesOf("x")), StatusIs(StatusCode::kNoSpace));
  EXPECT_EQ(memory_.Peek(Slot("s")), std::nullopt);
}

TEST_F(FaultBackendTest, WrapsAnAsynchronousBackend) {
  auto sim = std::make_shared<SimulatedFileSystem>();
  FolderBackend folder("/saves", FolderBackendOptions{sim});
  FaultBackend fault(&folder);
  fault.Add(FaultRule::CutWrite(2));
  EXPECT_THAT(WriteNow(fault, Slot("s"), BytesOf("abcdef")), StatusIs(StatusCode::kStorageFailed));
  ASSERT_OK_AND_ASSIGN(Bytes back, ReadNow(fault, Slot("s")));
  EXPECT_EQ(back, BytesOf("ab"));
  fault.Add(FaultRule::Delay(std::chrono::milliseconds(5)).FromThenOn());
  std::atomic<int> answers{0};
  for (int i = 0; i < 10; ++i) fault.Exists(Slot("s"), [&](Result<bool>) { ++answers; });
  fault.WaitUntilIdle();
  EXPECT_EQ(answers.load(), 10);
}

// Throw makes the call itself throw, as an allocation failing inside a backend: the exception
// reaches the caller, the callback never runs, nothing stays counted, and nothing reached the
// wrapped backend. The blocking forms answer StorageFailed instead.
TEST_F(FaultBackendTest, ThrowMakesTheCallThrowAndTheBlockingFormsFail) {
  ASSERT_OK(WriteNow(memory_, Slot("s"), BytesOf("old")));
  std::atomic<int> answered{0};
  const auto count = [&answered](auto) { ++answered; };
  for (Op kind : kAllOps) {
    SCOPED_TRACE(OpName(kind));
    const auto id = fault_.Add(FaultRule::Throw().On(kind).Nth(1));
    const auto call = [&] {
      switch (kind) {
        case Op::kWrite:
          return fault_.Write(Slot("s"), BytesOf("new"), count);
        case Op::kRead:
          return fault_.Read(Slot("s"), count);
        case Op::kExists:
          return fault_.Exists(Slot("s"), count);
        case Op::kDelete:
          return fault_.Delete(Slot("s"), count);
        case Op::kList:
          return fault_.List(count);
      }
    };
    EXPECT_THROW(call(), std::bad_alloc);
    EXPECT_EQ(fault_.hits(id), 1u);
    EXPECT_EQ(fault_.in_flight(), 0u);
    fault_.Remove(id);
    fault_.Add(FaultRule::Throw().On(kind).Nth(1));
    const Status blocking = Run(kind);
    EXPECT_THAT(blocking, StatusIs(StatusCode::kStorageFailed));
    EXPECT_THAT(blocking.message(), HasSubstr("threw"));
    EXPECT_OK(Run(kind == Op::kWrite || kind == Op::kDelete ? Op::kExists : kind));
  }
  EXPECT_EQ(answered.load(), 0);
  EXPECT_EQ(memory_.Peek(Slot("s")), BytesOf("old"));
}

// A write with a late front is matched against the rules when it is asked, as every other
// operation: a Throw reaches the caller, not the thread that sets the front (which has no
// caller to take it), and a rule added between the ask and the front does not apply to it.
TEST_F(FaultBackendTest, AWriteWithALateFrontIsDecidedWhenAsked) {
  auto front = std::make_shared<LateFront>(2);
  std::atomic<int> answered{0};
  fault_.Add(FaultRule::Throw().On(Op::kWrite));
  EXPECT_THROW(fault_.Write(Slot("s"), front, {BytesOf("cd")}, [&](Status) { ++answered; }),
               std::bad_alloc);
  front->Set(BytesOf("ab"));  // the writer sets it whatever the call did
  EXPECT_EQ(fault_.in_flight(), 0u);
  EXPECT_EQ(answered.load(), 0);
  EXPECT_EQ(memory_.Peek(Slot("s")), std::nullopt);

  front = std::make_shared<LateFront>(2);
  std::promise<Status> written;
  fault_.Write(Slot("s"), front, {BytesOf("cd")}, [&](Status s) { written.set_value(s); });
  fault_.Add(FaultRule::Fail(StorageFailedError("added late")).On(Op::kWrite));
  front->Set(BytesOf("ab"));
  EXPECT_OK(written.get_future().get());
  EXPECT_EQ(memory_.Peek(Slot("s")), BytesOf("abcd"));
  EXPECT_EQ(fault_.operations(Op::kWrite), 2u);
}

}  // namespace
}  // namespace rolly::store
