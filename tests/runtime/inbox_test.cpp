#include <scenert/runtime/inbox.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

// Allocations made by this thread, so a test can say "none in steady state". Replacing the global
// operators is the only way to see allocations inside std::vector and the inbox's ring. They pair
// malloc with free, which GCC cannot tell once it inlines them into the inbox.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
thread_local std::uint64_t allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  ++allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  ++allocations;
  const auto align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

using scenert::inbox;

struct event {
  std::uint32_t producer = 0;
  std::uint64_t seq = 0;
};

std::vector<event> drain_all(inbox<event>& box) {
  std::vector<event> out;
  box.drain([&](event& e) { out.push_back(e); });
  return out;
}

TEST(Inbox, OneProducerComesOutInOrderThroughRingAndSpill) {
  inbox<event> box(4);
  for (std::uint64_t i = 0; i < 100; ++i) ASSERT_TRUE(box.post({0, i}));
  EXPECT_EQ(box.depth(), 100U);
  EXPECT_EQ(box.spills(), 96U);  // four fit the ring
  auto got = drain_all(box);
  ASSERT_EQ(got.size(), 100U);
  for (std::uint64_t i = 0; i < 100; ++i) EXPECT_EQ(got[i].seq, i);
  EXPECT_TRUE(box.empty());
}

TEST(Inbox, DrainStopsAtMaxAndResumesInOrder) {
  inbox<event> box(8);
  for (std::uint64_t i = 0; i < 30; ++i) ASSERT_TRUE(box.post({0, i}));
  std::vector<std::uint64_t> seen;
  while (!box.empty()) {
    const std::size_t before = seen.size();
    const std::size_t ran = box.drain([&](event& e) { seen.push_back(e.seq); }, 7);
    ASSERT_EQ(ran, seen.size() - before);
    ASSERT_LE(ran, 7U);
    // Posts between batches land behind what is queued, even while the overflow is in use.
    if (seen.size() < 30) {
      ASSERT_TRUE(box.post({1, seen.size()}));
    }
  }
  std::vector<std::uint64_t> first(seen.begin(), seen.begin() + 30);
  for (std::uint64_t i = 0; i < 30; ++i) EXPECT_EQ(first[i], i);
}

// Many producers, one consumer draining random batches: against the oracle that every event comes
// out once, and each producer's events in the order it posted them. A small ring makes the spill
// and the return to the ring happen many times.
// With one lane all producers share it; with three, producers 0 and 3 share lane 0.
TEST(Inbox, ManyProducersEachInOrderNoneLostNoneTwice) {
  constexpr std::uint32_t producers = 4;
  constexpr std::uint64_t per_producer = 20'000;
  for (std::size_t lanes : {1U, 3U})
    for (std::size_t ring : {2U, 16U, 1024U}) {
      SCOPED_TRACE(testing::Message() << "lanes " << lanes << ", ring " << ring);
      inbox<event> box(ring, lanes);
      std::vector<std::thread> threads;
      for (std::uint32_t p = 0; p < producers; ++p)
        threads.emplace_back([&box, p, lanes] {
          auto lane = box.on_lane(p % lanes);
          for (std::uint64_t i = 0; i < per_producer; ++i) ASSERT_TRUE(lane.post({p, i}));
        });
      std::vector<std::uint64_t> next(producers, 0);
      std::mt19937 rng(static_cast<unsigned>(ring));
      std::uint64_t total = 0;
      while (total < producers * per_producer) {
        total += box.drain(
            [&](event& e) {
              ASSERT_LT(e.producer, producers);
              ASSERT_EQ(e.seq, next[e.producer]) << "producer " << e.producer;
              ++next[e.producer];
            },
            1 + rng() % 64);
      }
      for (auto& t : threads) t.join();
      EXPECT_EQ(total, producers * per_producer);
      for (std::uint32_t p = 0; p < producers; ++p) EXPECT_EQ(next[p], per_producer);
      EXPECT_TRUE(box.empty());
      EXPECT_EQ(drain_all(box).size(), 0U);
    }
}

// Every post that returned true is drained after close(); every one that returned false is counted
// as dropped; nothing is accepted while closed; open() accepts again.
TEST(Inbox, CloseGateLosesNothing) {
  for (std::size_t lanes : {1U, 2U})
    for (std::size_t ring : {2U, 64U}) {
      SCOPED_TRACE(testing::Message() << "lanes " << lanes << ", ring " << ring);
      inbox<event> box(ring, lanes);
      std::atomic<bool> stop{false};
      std::atomic<std::uint64_t> accepted{0}, refused{0};
      std::vector<std::thread> threads;
      for (std::uint32_t p = 0; p < 3; ++p)
        threads.emplace_back([&, p] {
          auto lane = box.on_lane(p % lanes);
          for (std::uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i)
            (lane.post({p, i}) ? accepted : refused).fetch_add(1, std::memory_order_relaxed);
        });
      std::uint64_t drained = 0;
      while (accepted.load() < 5'000) drained += box.drain([](event&) {}, 100);
      box.close();
      drained += drain_all(box).size();
      const std::uint64_t at_close = drained;
      while (refused.load() < 1'000) std::this_thread::yield();  // producers keep knocking
      EXPECT_TRUE(drain_all(box).empty());
      stop = true;
      for (auto& t : threads) t.join();
      EXPECT_EQ(accepted.load(), at_close);
      EXPECT_EQ(box.dropped(), refused.load());
      EXPECT_TRUE(box.closed());
      box.open();
      EXPECT_TRUE(box.post({9, 0}));
      EXPECT_EQ(drain_all(box).size(), 1U);
    }
}

// Batches claim the ring at once, or spill whole; either way they keep their place in the order.
TEST(Inbox, PostAllKeepsOrderWithSinglePostsAcrossRingAndSpill) {
  inbox<event> box(8);
  std::vector<event> batch;
  std::uint64_t seq = 0;
  auto make = [&](std::size_t n) {
    batch.clear();
    for (std::size_t i = 0; i < n; ++i) batch.push_back({0, seq++});
  };
  std::uint64_t expect = 0;
  auto check = [&] {
    box.drain([&](event& e) { ASSERT_EQ(e.seq, expect++); });
    ASSERT_EQ(expect, seq);
  };
  for (std::size_t n : {3U, 8U, 5U, 20U, 1U}) {  // fits, fills, no room left, larger than the ring
    make(n);
    ASSERT_TRUE(box.post_all(batch));
    ASSERT_TRUE(box.post({0, seq++}));
  }
  EXPECT_GT(box.spills(), 20U);
  check();
  make(8);  // an empty ring takes a batch of its size without spilling
  const auto spills = box.spills();
  ASSERT_TRUE(box.post_all(batch));
  EXPECT_EQ(box.spills(), spills);
  check();
  box.close();
  make(4);
  EXPECT_FALSE(box.post_all(batch));
  EXPECT_EQ(box.dropped(), 4U);
}

TEST(Inbox, ManyBatchProducersEachInOrder) {
  constexpr std::uint32_t producers = 3;
  constexpr std::uint64_t batches = 3'000;
  for (std::size_t lanes : {1U, 2U}) {
    SCOPED_TRACE(testing::Message() << "lanes " << lanes);
    inbox<event> box(16, lanes);
    std::vector<std::thread> threads;
    for (std::uint32_t p = 0; p < producers; ++p)
      threads.emplace_back([&box, p, lanes] {
        auto lane = box.on_lane(p % lanes);
        std::vector<event> batch;
        std::uint64_t seq = 0;
        for (std::uint64_t b = 0; b < batches; ++b) {
          batch.clear();
          for (std::uint64_t i = 0; i < 1 + b % 7; ++i) batch.push_back({p, seq++});
          ASSERT_TRUE(lane.post_all(batch));
        }
      });
    std::uint64_t total = 0, want = 0;
    for (std::uint64_t b = 0; b < batches; ++b) want += 1 + b % 7;
    std::vector<std::uint64_t> next(producers, 0);
    while (total < want * producers)
      total += box.drain([&](event& e) { ASSERT_EQ(e.seq, next[e.producer]++); }, 50);
    for (auto& t : threads) t.join();
    for (std::uint32_t p = 0; p < producers; ++p) EXPECT_EQ(next[p], want);
  }
}

// A lane that overflows sends every lane to the spill until the consumer takes it; the spill
// runs after every ring is empty, so each lane keeps its order.
TEST(Inbox, ASpillOnOneLaneKeepsEveryLanesOrder) {
  inbox<event> box(4, 3);
  auto a = box.on_lane(1);
  auto b = box.on_lane(2);
  std::vector<std::uint64_t> sent(3, 0);
  auto post = [&](auto& lane, std::uint32_t id) { ASSERT_TRUE(lane.post({id, sent[id]++})); };
  for (int i = 0; i < 3; ++i) post(b, 2);  // lane 2's ring, not full
  for (int i = 0; i < 6; ++i) post(a, 1);  // lane 1: four in its ring, two spill
  post(b, 2);                              // lane 2 spills too while the spill waits
  ASSERT_TRUE(box.post({0, sent[0]++}));   // and lane 0
  EXPECT_EQ(box.spills(), 4U);
  EXPECT_EQ(box.depth(), 11U);
  std::vector<std::uint64_t> next(3, 0);
  std::vector<std::uint32_t> from;
  const std::size_t ran = box.drain([&](event& e) {
    ASSERT_EQ(e.seq, next[e.producer]++);
    from.push_back(e.producer);
  });
  EXPECT_EQ(ran, 11U);
  EXPECT_EQ(next, sent);
  // The rings first (lane by lane), then the spill in the order it was posted.
  EXPECT_EQ(from, (std::vector<std::uint32_t>{1, 1, 1, 1, 2, 2, 2, 1, 1, 2, 0}));
  for (int i = 0; i < 4; ++i) post(a, 1);  // the rings take posts again
  EXPECT_EQ(box.spills(), 4U);
  EXPECT_EQ(drain_all(box).size(), 4U);
}

TEST(Inbox, AQuietInboxAllocatesNothing) {
  const std::uint64_t before = allocations;
  {
    inbox<event> box(4096);
    EXPECT_TRUE(box.empty());
    box.close();
    box.open();
    EXPECT_EQ(box.drain([](event&) {}), 0U);
  }
  EXPECT_EQ(allocations, before);
}

TEST(Inbox, SteadyStateAllocatesNothingEvenAfterABurst) {
  inbox<event> box(16);
  auto burst = [&](std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) ASSERT_TRUE(box.post({0, i}));
    std::uint64_t expect = 0;
    box.drain([&](event& e) { ASSERT_EQ(e.seq, expect++); });
    ASSERT_EQ(expect, n);
  };
  burst(1'000);  // warms the ring and the spill vector, which the consumer swaps for the other...
  burst(1'000);  // ...so the second burst warms that one
  const std::uint64_t before = allocations;
  for (int round = 0; round < 100; ++round) burst(round % 2 == 0 ? 10 : 1'000);
  EXPECT_EQ(allocations, before);
}

struct fragile {
  explicit fragile(int v) : value(v) {
    if (v < 0) throw std::runtime_error("refused");
  }
  int value;
};

TEST(Inbox, AThrowingConstructorLeavesAHoleTheConsumerSkips) {
  inbox<fragile> box(4);
  ASSERT_TRUE(box.emplace(1));
  EXPECT_THROW((void)box.emplace(-1), std::runtime_error);
  ASSERT_TRUE(box.emplace(2));
  std::vector<int> got;
  box.drain([&](fragile& f) { got.push_back(f.value); });
  EXPECT_EQ(got, (std::vector<int>{1, 2}));
}

TEST(Inbox, AThrowingHandlerLeavesTheRestQueued) {
  inbox<event> box(4);
  for (std::uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(box.post({0, i}));
  std::vector<std::uint64_t> seen;
  auto fn = [&](event& e) {
    seen.push_back(e.seq);
    if (e.seq == 2 || e.seq == 6) throw std::runtime_error("handler");
  };
  EXPECT_THROW(box.drain(fn), std::runtime_error);
  EXPECT_THROW(box.drain(fn), std::runtime_error);
  box.drain(fn);
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(Inbox, DestroysWhatWasNeverDrained) {
  auto alive = std::make_shared<int>(0);
  {
    inbox<std::shared_ptr<int>> box(2, 2);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(box.post(alive));  // lane 0's ring and the spill
    ASSERT_TRUE(box.on_lane(1).post(alive));                   // the spill still waits
    EXPECT_EQ(alive.use_count(), 7);
    box.drain([](auto&) {}, 3);               // the ring's two and one of the spill: three spilled are left
    ASSERT_TRUE(box.on_lane(1).post(alive));  // lane 1's ring
    EXPECT_EQ(alive.use_count(), 6);          // a spilled batch frees its events when it is done
    EXPECT_EQ(box.depth(), 4U);
  }
  EXPECT_EQ(alive.use_count(), 1);
}

}  // namespace
