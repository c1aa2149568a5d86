#include <scenert/store/sqlite_store.hpp>

#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace scenert::store {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed after it.
struct StoreTest : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = fs::temp_directory_path() / ("scenert-store-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string file() const { return (dir / "players.store.sqlite").string(); }

  static std::unique_ptr<sqlite_store> open(const std::string& path) {
    auto s = sqlite_store::open(path);
    EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().message);
    return s ? std::move(*s) : nullptr;
  }
  // The answers come on the store's thread: the test waits for each through a future.
  static holdings sign_in(player_store& s, player_id p, std::string owner) {
    std::promise<holdings> done;
    auto f = done.get_future();
    s.sign_in(p, std::move(owner), [&](holdings h) { done.set_value(std::move(h)); });
    return f.get();
  }
  static grant_receipt write(player_store& s, grant g) {
    std::promise<grant_receipt> done;
    auto f = done.get_future();
    s.write(std::move(g), [&](grant_receipt r) { done.set_value(std::move(r)); });
    return f.get();
  }
  static holdings read(player_store& s, std::string owner) {
    std::promise<holdings> done;
    auto f = done.get_future();
    s.read(std::move(owner), [&](holdings h) { done.set_value(std::move(h)); });
    return f.get();
  }
};

TEST_F(StoreTest, AppliesEachGrantOnceByItsId) {
  auto s = open(file());
  ASSERT_TRUE(s);
  EXPECT_TRUE(sign_in(*s, 7, "ann").items.empty());
  auto first = write(*s, {"g-1", 7, 40, 3});
  EXPECT_EQ(first.code, store_errc::ok);
  EXPECT_FALSE(first.repeated);
  auto again = write(*s, {"g-1", 7, 40, 3});
  EXPECT_EQ(again.code, store_errc::ok);
  EXPECT_TRUE(again.repeated) << "the same id is not applied twice";
  EXPECT_EQ(write(*s, {"g-2", 7, 40, 2}).code, store_errc::ok);
  EXPECT_EQ(write(*s, {"g-3", 7, 5, 1}).code, store_errc::ok);
  EXPECT_EQ(read(*s, "ann").items, (std::vector<holding>{{5, 1}, {40, 5}}));
  const auto n = s->stats();
  EXPECT_EQ(n.grants, 3u);
  EXPECT_EQ(n.repeats, 1u);
}

TEST_F(StoreTest, AReopenedStoreHoldsWhatWasWrittenAndStillRefusesRepeats) {
  {
    auto s = open(file());
    ASSERT_TRUE(s);
    (void)sign_in(*s, 1, "ann");
    (void)sign_in(*s, 2, "bob");
    EXPECT_EQ(write(*s, {"a", 1, 10, 4}).code, store_errc::ok);
    EXPECT_EQ(write(*s, {"b", 2, 11, 1}).code, store_errc::ok);
  }
  auto s = open(file());
  ASSERT_TRUE(s);
  // Another run gives out player ids afresh: accounts go by name.
  EXPECT_EQ(sign_in(*s, 1, "bob").items, (std::vector<holding>{{11, 1}}));
  EXPECT_EQ(sign_in(*s, 2, "ann").items, (std::vector<holding>{{10, 4}}));
  EXPECT_TRUE(write(*s, {"a", 2, 10, 4}).repeated) << "a grant applied in an earlier run";
  EXPECT_EQ(read(*s, "ann").items, (std::vector<holding>{{10, 4}}));
}

TEST_F(StoreTest, AGrantToAPlayerWithoutAnAccountFailsWithItsReason) {
  auto s = open(file());
  ASSERT_TRUE(s);
  auto r = write(*s, {"g", 99, 1, 1});
  EXPECT_EQ(r.code, store_errc::no_account);
  EXPECT_NE(r.reason.find("player 99"), std::string::npos) << r.reason;
  EXPECT_EQ(s->stats().failed, 1u);
}

TEST_F(StoreTest, ASignedOutPlayerKeepsItsAccountForTheGraceOnly) {
  sqlite_options o;
  o.account_grace = std::chrono::milliseconds(0);
  auto opened = sqlite_store::open(file(), o);
  ASSERT_TRUE(opened.has_value());
  auto& s = **opened;
  (void)sign_in(s, 3, "cid");
  s.sign_out(3);
  // The scenario: time passes beyond a grace of 0 (the store reads the steady clock, not a test clock).
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(write(s, {"late", 3, 1, 1}).code, store_errc::no_account);
}

TEST_F(StoreTest, ABadPathIsAnErrorNamingIt) {
  const std::string missing = (dir / "no" / "such" / "folder" / "x.sqlite").string();
  auto r = sqlite_store::open(missing);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, store_errc::io);
  EXPECT_NE(r.error().message.find(missing), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("cannot open"), std::string::npos) << r.error().message;

  const std::string junk = (dir / "junk.sqlite").string();
  std::ofstream(junk) << "this is no database, only some text that is long enough to be read as a header";
  auto j = sqlite_store::open(junk);
  ASSERT_FALSE(j.has_value());
  EXPECT_NE(j.error().message.find(junk), std::string::npos) << j.error().message;
}

// Many writers at once while the writer thread is busy (held in the first grant's answer): every
// grant is answered once, after its commit, and what queued meanwhile goes in one transaction.
TEST_F(StoreTest, GrantsThatQueueUpAreCommittedInOneGroup) {
  auto s = open(file());
  ASSERT_TRUE(s);
  (void)sign_in(*s, 1, "ann");
  std::promise<void> gate;
  auto opened = gate.get_future().share();
  s->write({"gate", 1, 9, 1}, [opened](grant_receipt) { opened.wait(); });
  constexpr int threads = 4, each = 250;
  std::mutex m;
  std::condition_variable cv;
  int answered = 0, ok = 0;
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < each; ++i)
        s->write({std::to_string(t) + "-" + std::to_string(i), 1, 9, 1}, [&](grant_receipt r) {
          std::lock_guard lock(m);
          ++answered;
          ok += r.code == store_errc::ok && !r.repeated;
          cv.notify_one();
        });
    });
  for (auto& w : writers) w.join();
  gate.set_value();
  std::unique_lock lock(m);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return answered == threads * each; }));
  EXPECT_EQ(ok, threads * each);
  lock.unlock();
  EXPECT_EQ(read(*s, "ann").items, (std::vector<holding>{{9, 1 + threads * each}}));
  // The sign-in's, the gate's (with whatever had queued by then), the rest's, and the read's.
  EXPECT_GE(s->stats().commits, 3u);
  EXPECT_LE(s->stats().commits, 4u);
}

TEST_F(StoreTest, AStoppedStoreAnswersClosedAtOnce) {
  auto s = open(file());
  ASSERT_TRUE(s);
  s->stop();
  bool heard = false;
  s->write({"g", 1, 1, 1}, [&](grant_receipt r) { heard = r.code == store_errc::closed; });
  EXPECT_TRUE(heard);
}

TEST(StorePath, SitsBesideTheTable) {
  EXPECT_EQ(default_store_path("examples/crypt.json"), "examples/crypt.store.sqlite");
  EXPECT_EQ(default_store_path("table"), "table.store.sqlite");
}

}  // namespace
}  // namespace scenert::store
