// The bucket's compare-and-set against a real server: a lost race is `conflict`, never an overwrite.

#include <scenert/cluster/kv_bucket.hpp>

#include <gtest/gtest.h>

#include <algorithm>

#include "nats_server.hpp"

namespace scenert::cluster {
namespace {

TEST(KvBucket, CreateAndUpdateAreCompareAndSet) {
  test::nats_server server;
  auto [link, kv] = test::open_bucket(server, "kvtest");
  auto first = kv.create("a.b", "one");
  ASSERT_TRUE(first) << first.error().message;
  auto again = kv.create("a.b", "two");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.code(), cluster_errc::conflict);
  EXPECT_NE(again.error().message.find("'a.b'"), std::string::npos) << again.error().message;

  auto second = kv.update("a.b", "three", *first);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_GT(*second, *first);
  auto stale = kv.update("a.b", "four", *first);  // a writer that read before "three"
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.code(), cluster_errc::conflict);

  auto got = kv.get("a.b");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->value, "three");
  EXPECT_EQ(got->revision, *second);
  EXPECT_EQ(kv.get("nothing.here").code(), cluster_errc::not_found);

  ASSERT_TRUE(kv.create("c", ""));
  auto keys = kv.keys();
  ASSERT_TRUE(keys);
  std::sort(keys->begin(), keys->end());
  EXPECT_EQ(*keys, (std::vector<std::string>{"a.b", "c"}));
}

// Eight writers race to bump one counter by read-then-update: every bump lands exactly once.
TEST(KvBucket, RacingWritersLoseNoUpdate) {
  test::nats_server server;
  auto [link, kv] = test::open_bucket(server, "race");
  ASSERT_TRUE(kv.create("n", "0"));
  constexpr int writers = 8, bumps = 10;
  std::vector<std::thread> threads;
  std::atomic<int> conflicts{0}, failures{0};
  for (int w = 0; w < writers; ++w)
    threads.emplace_back([&, bucket = kv]() mutable {
      for (int b = 0; b < bumps; ++b)
        for (;;) {
          auto now = bucket.get("n");
          if (!now) {
            ++failures;
            return;
          }
          auto next = std::to_string(std::stoi(now->value) + 1);
          auto rev = bucket.update("n", next, now->revision);
          if (rev) break;
          if (rev.code() != cluster_errc::conflict) {
            ++failures;
            return;
          }
          ++conflicts;
        }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(kv.get("n")->value, std::to_string(writers * bumps));
  EXPECT_GT(conflicts.load(), 0);  // the race was real
}

}  // namespace
}  // namespace scenert::cluster
