// The one conformance suite every backend passes, as a test-only header: the TEST_P cases of
// BackendConformanceTest, the BackendUnderTest a case runs on, and the BackendFactory that makes
// one per case. A test binary includes it once and instantiates the suite with its factories:
//
//   INSTANTIATE_TEST_SUITE_P(Mine, BackendConformanceTest, ::testing::ValuesIn(MyFactories()),
//                            BackendFactoryName);
//
// backend_conformance_test.cc runs it against the backends of the library (memory, folder, fault);
// postgres/postgres_backend_conformance_test.cc against PostgresBackend. Include it from exactly one
// file of a binary. Test code only.

#ifndef ROLLY_STORE_BACKEND_CONFORMANCE_H_
#define ROLLY_STORE_BACKEND_CONFORMANCE_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "rolly/core/status_matchers.h"
#include "rolly/store/backend.h"
#include "rolly/store/file_name.h"
#include "rolly/store/store_test_util.h"

namespace rolly::store::conformance {

// A backend made for one test, with whatever it needs kept alive beside it. Each case gets a
// fresh one that sees no file of another case.
class BackendUnderTest {
 public:
  virtual ~BackendUnderTest() = default;
  virtual Backend& backend() = 0;
};

struct BackendFactory {
  std::string name;  // the test name's suffix: letters, digits and '_' only
  std::function<std::unique_ptr<BackendUnderTest>()> make;
};

inline void PrintTo(const BackendFactory& factory, std::ostream* os) { *os << factory.name; }

// The name generator for INSTANTIATE_TEST_SUITE_P.
inline std::string BackendFactoryName(const ::testing::TestParamInfo<BackendFactory>& info) {
  return info.param.name;
}

class BackendConformanceTest : public ::testing::TestWithParam<BackendFactory> {
 protected:
  void SetUp() override {
    under_test_ = GetParam().make();
    ASSERT_NE(under_test_, nullptr) << "the factory could not make a " << GetParam().name;
  }
  void TearDown() override {
    if (under_test_ != nullptr) backend().WaitUntilIdle();
    under_test_.reset();
  }

  Backend& backend() { return under_test_->backend(); }

  static FileName Slot(std::string_view slot, Copy copy = Copy::kA) {
    return FileName::ForSlot("conf", slot, copy).value();
  }

  std::unique_ptr<BackendUnderTest> under_test_;
};

TEST_P(BackendConformanceTest, WriteThenReadGivesTheSameBytes) {
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{1} << 20}) {
    const FileName name = Slot("size" + std::to_string(size));
    const Bytes bytes = PatternBytes(size, 7);
    ASSERT_OK(WriteNow(backend(), name, bytes));
    ASSERT_OK_AND_ASSIGN(Bytes back, ReadNow(backend(), name));
    EXPECT_EQ(back, bytes) << "size " << size;
  }
}

TEST_P(BackendConformanceTest, WriteOfPiecesReadsBackWhole) {
  const Bytes whole = PatternBytes((std::size_t{1} << 20) + 300, 11);
  // Pieces of every shape: a small first one, an empty one, large ones, a one-byte one.
  const std::size_t cuts[] = {0, 100, 100, 4096, 600000, (std::size_t{1} << 20) + 299};
  std::vector<Bytes> pieces;
  std::size_t from = 0;
  for (const std::size_t to : cuts) {
    pieces.emplace_back(whole.begin() + static_cast<std::ptrdiff_t>(from),
                        whole.begin() + static_cast<std::ptrdiff_t>(to));
    from = to;
  }
  pieces.emplace_back(whole.begin() + static_cast<std::ptrdiff_t>(from), whole.end());
  const FileName name = Slot("pieces");
  ASSERT_OK(WriteNow(backend(), name, PatternBytes(5000, 1)));
  ASSERT_OK(WriteNow(backend(), name, std::move(pieces)));
  ASSERT_OK_AND_ASSIGN(Bytes back, ReadNow(backend(), name));
  EXPECT_EQ(back, whole);
  // One piece, and none at all.
  ASSERT_OK(WriteNow(backend(), name, std::vector<Bytes>{PatternBytes(70, 2)}));
  ASSERT_OK_AND_ASSIGN(Bytes one, ReadNow(backend(), name));
  EXPECT_EQ(one, PatternBytes(70, 2));
  ASSERT_OK(WriteNow(backend(), name, std::vector<Bytes>()));
  ASSERT_OK_AND_ASSIGN(Bytes none, ReadNow(backend(), name));
  EXPECT_TRUE(none.empty());
}

// A write whose first piece is set later, from another thread, while the backend may already be
// writing the rest: the file is the front then the rest, over an older file, and no answer comes
// before the front is set.
TEST_P(BackendConformanceTest, WriteWithLateFrontReadsBackWhole) {
  const Bytes whole = PatternBytes((std::size_t{1} << 20) + 777, 13);
  const std::size_t cuts[] = {150, 151, 70000};  // the front, an empty piece, two more
  std::vector<Bytes> rest;
  std::size_t from = cuts[0];
  for (const std::size_t to : {cuts[1], cuts[1], cuts[2], whole.size()}) {
    rest.emplace_back(whole.begin() + static_cast<std::ptrdiff_t>(from),
                      whole.begin() + static_cast<std::ptrdiff_t>(to));
    from = to;
  }
  const FileName name = Slot("late");
  ASSERT_OK(WriteNow(backend(), name, PatternBytes(3 << 20, 1)));
  for (const bool set_first : {false, true}) {
    auto front = std::make_shared<LateFront>(cuts[0]);
    const Bytes front_bytes(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cuts[0]));
    if (set_first) front->Set(front_bytes);
    std::atomic<bool> answered{false};
    std::atomic<bool> front_set{set_first};
    std::atomic<bool> early{false};
    Status written = CancelledError("no answer");
    std::mutex mutex;
    std::condition_variable cv;
    backend().Write(name, front, rest, [&](Status s) {
      if (!front_set.load()) early = true;
      std::lock_guard lock(mutex);
      written = s;
      answered = true;
      cv.notify_all();
    });
    if (!set_first) {
      std::thread setter([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        front_set = true;
        front->Set(front_bytes);
      });
      setter.join();
    }
    {
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return answered.load(); });
    }
    EXPECT_FALSE(early.load()) << "answered before the front was set";
    ASSERT_OK(written);
    ASSERT_OK_AND_ASSIGN(Bytes back, ReadNow(backend(), name));
    EXPECT_EQ(back, whole) << "front set first: " << set_first;
  }
}

TEST_P(BackendConformanceTest, OverwriteReplacesEveryByte) {
  const FileName name = Slot("over");
  ASSERT_OK(WriteNow(backend(), name, PatternBytes(5000, 1)));
  ASSERT_OK(WriteNow(backend(), name, PatternBytes(30, 2)));
  ASSERT_OK_AND_ASSIGN(Bytes back, ReadNow(backend(), name));
  EXPECT_EQ(back, PatternBytes(30, 2));
  ASSERT_OK(WriteNow(backend(), name, PatternBytes(7000, 3)));
  ASSERT_OK_AND_ASSIGN(Bytes longer, ReadNow(backend(), name));
  EXPECT_EQ(longer, PatternBytes(7000, 3));
}

TEST_P(BackendConformanceTest, ReadPrefixGivesAtMostTheBytesAskedFor) {
  const FileName name = Slot("prefix");
  const Bytes bytes = PatternBytes(100, 4);
  ASSERT_OK(WriteNow(backend(), name, bytes));
  ASSERT_OK_AND_ASSIGN(Bytes shorter, ReadPrefixNow(backend(), name, 10));
  EXPECT_EQ(shorter, Bytes(bytes.begin(), bytes.begin() + 10));
  ASSERT_OK_AND_ASSIGN(Bytes exact, ReadPrefixNow(backend(), name, 100));
  EXPECT_EQ(exact, bytes);
  ASSERT_OK_AND_ASSIGN(Bytes longer, ReadPrefixNow(backend(), name, 1000));
  EXPECT_EQ(longer, bytes);
  ASSERT_OK_AND_ASSIGN(Bytes none, ReadPrefixNow(backend(), name, 0));
  EXPECT_TRUE(none.empty());
}

TEST_P(BackendConformanceTest, ReadOfMissingFileIsNotFound) {
  EXPECT_THAT(ReadNow(backend(), Slot("missing")), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(ReadPrefixNow(backend(), Slot("missing"), 16), StatusIs(StatusCode::kNotFound));
  // The other copy of a written file is still missing.
  ASSERT_OK(WriteNow(backend(), Slot("half"), PatternBytes(3, 0)));
  EXPECT_THAT(ReadNow(backend(), Slot("half").Other()), StatusIs(StatusCode::kNotFound));
}

TEST_P(BackendConformanceTest, ExistsFollowsWritesAndDeletes) {
  const FileName name = Slot("exists");
  ASSERT_OK_AND_ASSIGN(bool before, ExistsNow(backend(), name));
  EXPECT_FALSE(before);
  ASSERT_OK(WriteNow(backend(), name, PatternBytes(10, 5)));
  ASSERT_OK_AND_ASSIGN(bool after, ExistsNow(backend(), name));
  EXPECT_TRUE(after);
  ASSERT_OK_AND_ASSIGN(bool other, ExistsNow(backend(), name.Other()));
  EXPECT_FALSE(other);
  ASSERT_OK(DeleteNow(backend(), name));
  ASSERT_OK_AND_ASSIGN(bool deleted, ExistsNow(backend(), name));
  EXPECT_FALSE(deleted);
  EXPECT_THAT(ReadNow(backend(), name), StatusIs(StatusCode::kNotFound));
}

TEST_P(BackendConformanceTest, DeleteOfMissingFileIsOk) {
  EXPECT_OK(DeleteNow(backend(), Slot("never")));
  ASSERT_OK(WriteNow(backend(), Slot("twice"), PatternBytes(1, 1)));
  EXPECT_OK(DeleteNow(backend(), Slot("twice")));
  EXPECT_OK(DeleteNow(backend(), Slot("twice")));
}

TEST_P(BackendConformanceTest, ListGivesEveryFileNameSorted) {
  ASSERT_OK_AND_ASSIGN(std::vector<FileName> empty, ListNow(backend()));
  EXPECT_TRUE(empty.empty());
  std::vector<FileName> names = {
      Slot("zeta"),
      Slot("Alpha", Copy::kB),
      Slot("alpha"),
      Slot("alpha", Copy::kB),
      FileName::ForProfile("conf", "Player", Copy::kA).value(),
      FileName::ForIndex("conf", Copy::kB).value(),
      FileName::ForSlot("another", "x", Copy::kA).value(),
      FileName::ForSlot("conf", std::string(300, 'L'), Copy::kA).value(),
  };
  for (const FileName& n : names) ASSERT_OK(WriteNow(backend(), n, BytesOf(n.str())));
  std::sort(names.begin(), names.end());
  ASSERT_OK_AND_ASSIGN(std::vector<FileName> listed, ListNow(backend()));
  EXPECT_EQ(listed, names);
  ASSERT_OK(DeleteNow(backend(), names.front()));
  ASSERT_OK_AND_ASSIGN(std::vector<FileName> fewer, ListNow(backend()));
  EXPECT_EQ(fewer, std::vector<FileName>(names.begin() + 1, names.end()));
}

TEST_P(BackendConformanceTest, EveryCallbackRunsExactlyOnce) {
  constexpr int kRounds = 20;
  std::vector<std::atomic<int>> calls(kRounds * 6);
  for (int i = 0; i < kRounds; ++i) {
    const FileName name = Slot("once" + std::to_string(i));
    std::atomic<int>* c = &calls[static_cast<std::size_t>(i) * 6];
    backend().Write(name, PatternBytes(64, 1), [c](Status) { ++c[0]; });
    backend().Read(name, [c](Result<Bytes>) { ++c[1]; });
    backend().ReadPrefix(Slot("absent"), 4, [c](Result<Bytes>) { ++c[2]; });
    backend().Exists(name, [c](Result<bool>) { ++c[3]; });
    backend().List([c](Result<std::vector<FileName>>) { ++c[4]; });
    backend().Delete(name, [c](Status) { ++c[5]; });
  }
  backend().WaitUntilIdle();
  // A second call, if any, would come soon after the first.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (std::size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i].load(), 1) << "call " << i;
  EXPECT_EQ(backend().in_flight(), 0u);
}

TEST_P(BackendConformanceTest, WaitUntilIdleWaitsForInFlightOperations) {
  constexpr int kWrites = 40;
  std::atomic<int> done{0};
  std::atomic<int> ok{0};
  for (int i = 0; i < kWrites; ++i) {
    backend().Write(Slot("idle" + std::to_string(i)), PatternBytes(32 * 1024, 9),
                    [&](Status s) {
                      if (s.ok()) ++ok;
                      ++done;
                    });
  }
  backend().WaitUntilIdle();
  EXPECT_EQ(done.load(), kWrites);
  EXPECT_EQ(ok.load(), kWrites);
  EXPECT_EQ(backend().in_flight(), 0u);
}

TEST_P(BackendConformanceTest, ConcurrentWritesToDifferentNamesFromEightThreads) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 8;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const FileName name = Slot("t" + std::to_string(t) + "-" + std::to_string(i));
        if (!WriteNow(backend(), name, PatternBytes(1000 + static_cast<std::size_t>(i),
                                                     static_cast<std::uint8_t>(t)))
                 .ok()) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      const FileName name = Slot("t" + std::to_string(t) + "-" + std::to_string(i));
      ASSERT_OK_AND_ASSIGN(Bytes back, ReadNow(backend(), name));
      EXPECT_EQ(back, PatternBytes(1000 + static_cast<std::size_t>(i), static_cast<std::uint8_t>(t)));
    }
  }
  ASSERT_OK_AND_ASSIGN(std::vector<FileName> listed, ListNow(backend()));
  EXPECT_EQ(listed.size(), static_cast<std::size_t>(kThreads * kPerThread));
}

}  // namespace rolly::store::conformance

#endif  // ROLLY_STORE_BACKEND_CONFORMANCE_H_
