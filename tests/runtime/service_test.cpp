#include <scenert/runtime/service.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace scenert {
namespace {

struct recorder final : service {
  recorder() : service("recorder") {}
  std::vector<std::string> calls;
  bool throw_in_tick = false;
  int quarantines = 0;
  void on_init() override { calls.push_back("init"); }
  void on_active() override { calls.push_back("active"); }
  void on_inactive() override { calls.push_back("inactive"); }
  void on_quarantine() override { ++quarantines; }
  void on_tick(const tick_context&) override {
    calls.push_back("tick");
    if (throw_in_tick) throw std::runtime_error("boom");
  }
};

TEST(Service, InitsOnceAndActivatesEachRound) {
  recorder r;
  r.activate();
  r.deactivate();
  r.activate();
  r.deactivate();
  EXPECT_EQ(r.calls, (std::vector<std::string>{"init", "active", "inactive", "active", "inactive"}));
  EXPECT_TRUE(r.initialized());
  EXPECT_FALSE(r.active());
}

TEST(Service, RunsMessagesBeforeTheTickInPostOrder) {
  recorder r;
  r.activate();
  ASSERT_TRUE(r.post([&] { r.calls.push_back("m1"); }));
  ASSERT_TRUE(r.post([&] { r.calls.push_back("m2"); }));
  EXPECT_EQ(r.mailbox_depth(), 2u);
  EXPECT_EQ(r.tick({}, 0, 1024), tick_outcome::ok);
  EXPECT_EQ(r.calls, (std::vector<std::string>{"init", "active", "m1", "m2", "tick"}));
  EXPECT_EQ(r.mailbox_depth(), 0u);
}

TEST(Service, RunsAtMostABatchOfMessagesPerTick) {
  recorder r;
  r.activate();
  int ran = 0;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(r.post([&] { ++ran; }));
  (void)r.tick({}, 0, 4);
  EXPECT_EQ(ran, 4);
  EXPECT_EQ(r.mailbox_depth(), 6u);
}

TEST(Service, DeactivateRunsQueuedMessagesAndLaterPostsAreDropped) {
  recorder r;
  r.activate();
  int ran = 0;
  ASSERT_TRUE(r.post([&] { ++ran; }));
  r.deactivate();
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(r.post([&] { ++ran; }));
  EXPECT_EQ(r.dropped_messages(), 1u);
  r.activate();
  EXPECT_TRUE(r.post([&] { ++ran; }));
}

TEST(Service, CatchesATickExceptionAndReportsIt) {
  recorder r;
  r.activate();
  r.throw_in_tick = true;
  std::string failure;
  EXPECT_EQ(r.tick({}, 3, 16, &failure), tick_outcome::failed);
  EXPECT_NE(failure.find("recorder"), std::string::npos);
  EXPECT_NE(failure.find("boom"), std::string::npos);
  EXPECT_EQ(r.failures(), 1u);
}

TEST(Service, QuarantinesAfterConsecutiveFailuresOnly) {
  recorder r;
  r.activate();
  r.throw_in_tick = true;
  EXPECT_EQ(r.tick({}, 3, 16), tick_outcome::failed);
  EXPECT_EQ(r.tick({}, 3, 16), tick_outcome::failed);
  r.throw_in_tick = false;
  EXPECT_EQ(r.tick({}, 3, 16), tick_outcome::ok);  // resets the streak
  r.throw_in_tick = true;
  EXPECT_EQ(r.tick({}, 3, 16), tick_outcome::failed);
  EXPECT_EQ(r.tick({}, 3, 16), tick_outcome::failed);
  EXPECT_EQ(r.tick({}, 3, 16), tick_outcome::quarantined);
  EXPECT_TRUE(r.quarantined());
  EXPECT_EQ(r.quarantines, 1);
  auto ticks_before = r.calls.size();
  EXPECT_EQ(r.tick({}, 3, 16), tick_outcome::quarantined);
  EXPECT_EQ(r.calls.size(), ticks_before);  // nothing ran
  r.deactivate();
  r.activate();  // a re-activated service starts clean
  EXPECT_FALSE(r.quarantined());
}

TEST(Service, AMessageThatThrowsCountsAsAFailedTick) {
  recorder r;
  r.activate();
  ASSERT_TRUE(r.post([] { throw std::logic_error("bad message"); }));
  std::string failure;
  EXPECT_EQ(r.tick({}, 0, 16, &failure), tick_outcome::failed);
  EXPECT_NE(failure.find("bad message"), std::string::npos);
}

// A post racing with deactivate() is either run by deactivate's drain or reported false.
TEST(ServiceInbox, APostRacingWithCloseIsRunOrReportedNeverLost) {
  for (int round = 0; round < 50; ++round) {
    recorder r;
    r.activate();
    std::atomic<int> accepted{0}, rejected{0}, ran{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> producers;
    for (int t = 0; t < 3; ++t) {
      producers.emplace_back([&] {
        while (!go.load()) std::this_thread::yield();
        for (int i = 0; i < 200; ++i) {
          if (r.post([&] { ran.fetch_add(1); }))
            accepted.fetch_add(1);
          else
            rejected.fetch_add(1);
        }
      });
    }
    go.store(true);
    (void)r.tick({}, 0, 50);
    r.deactivate();
    for (auto& p : producers) p.join();
    EXPECT_EQ(ran.load(), accepted.load());
    EXPECT_EQ(accepted.load() + rejected.load(), 600);
    EXPECT_EQ(r.dropped_messages(), static_cast<std::uint64_t>(rejected.load()));
  }
}

}  // namespace
}  // namespace scenert
