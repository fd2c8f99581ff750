#include "rolly/core/mailbox.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rolly {
namespace {

TEST(MailboxTest, StepsRunInTheOrderPostedWithTheStepsTheyPost) {
  Mailbox mailbox;
  std::vector<std::string> ran;
  mailbox.Post([&] {
    ran.push_back("a");
    mailbox.Post([&] { ran.push_back("c"); });
  });
  mailbox.Post([&] { ran.push_back("b"); });
  EXPECT_EQ(mailbox.pending(), 2u);
  EXPECT_EQ(mailbox.Drain(), 3u);
  EXPECT_EQ(ran, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(mailbox.Drain(), 0u);
}

// A step that drains (a callback that flushes) runs the steps after it in the order posted.
TEST(MailboxTest, ADrainInsideAStepKeepsTheOrder) {
  Mailbox mailbox;
  std::vector<std::string> ran;
  mailbox.Post([&] {
    ran.push_back("a");
    mailbox.Post([&] { ran.push_back("c"); });
    mailbox.Drain();
  });
  mailbox.Post([&] { ran.push_back("b"); });
  mailbox.Drain();
  EXPECT_EQ(ran, (std::vector<std::string>{"a", "b", "c"}));
}

// A step that throws ends the drain; the steps after it run at the next one, none is lost.
TEST(MailboxTest, AStepThatThrowsLeavesTheRestQueued) {
  Mailbox mailbox;
  std::vector<std::string> ran;
  mailbox.Post([&] { ran.push_back("a"); });
  mailbox.Post([] { throw std::runtime_error("step"); });
  mailbox.Post([&] { ran.push_back("b"); });
  EXPECT_THROW(mailbox.Drain(), std::runtime_error);
  EXPECT_EQ(ran, (std::vector<std::string>{"a"}));
  EXPECT_EQ(mailbox.pending(), 1u);
  EXPECT_EQ(mailbox.Drain(), 1u);
  EXPECT_EQ(ran, (std::vector<std::string>{"a", "b"}));
}

// A step made ahead runs in its place among the others; an empty one (default, moved from or
// posted) posts nothing, and one never posted never runs.
TEST(MailboxTest, AStepMadeAheadRunsWhereItIsPosted) {
  Mailbox mailbox;
  std::vector<std::string> ran;
  Mailbox::Made made([&] { ran.push_back("b"); });
  Mailbox::Made never([&] { ran.push_back("never"); });
  ASSERT_TRUE(made);
  mailbox.Post([&] { ran.push_back("a"); });
  mailbox.Post(std::move(made));
  EXPECT_FALSE(made);  // NOLINT(bugprone-use-after-move): moved from is empty
  mailbox.Post(std::move(made));
  mailbox.Post(Mailbox::Made());
  mailbox.Post([&] { ran.push_back("c"); });
  EXPECT_EQ(mailbox.pending(), 3u);
  EXPECT_EQ(mailbox.Drain(), 3u);
  EXPECT_EQ(ran, (std::vector<std::string>{"a", "b", "c"}));
}

// Steps still queued when the mailbox goes are destroyed without running, however many.
TEST(MailboxTest, StepsLeftQueuedAreDestroyedWithTheMailbox) {
  auto held = std::make_shared<int>(0);
  int ran = 0;
  {
    Mailbox mailbox;
    for (int i = 0; i < 200'000; ++i) mailbox.Post([held, &ran] { ++ran; });
    EXPECT_EQ(held.use_count(), 200'001);
  }
  EXPECT_EQ(held.use_count(), 1);
  EXPECT_EQ(ran, 0);
}

TEST(MailboxTest, DrainUntilRunsStepsPostedFromOtherThreadsUntilDone) {
  Mailbox mailbox;
  int count = 0;
  std::thread poster([&] {
    for (int i = 0; i < 100; ++i) mailbox.Post([&] { ++count; });
  });
  EXPECT_TRUE(mailbox.DrainUntil([&] { return count == 100; },
                                 Mailbox::Clock::now() + std::chrono::seconds(20)));
  poster.join();
  EXPECT_FALSE(mailbox.DrainUntil([] { return false; }, Mailbox::Clock::now()));
}

}  // namespace
}  // namespace rolly
