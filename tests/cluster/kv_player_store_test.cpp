// The cluster's player store against a real nats-server: a grant applied once by its id however often
// and by however many stores (nodes) it is written, what one store granted found through another, a
// stopped store answering closed, bad grants refused.

#include <scenert/cluster/kv_player_store.hpp>

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "../eventually.hpp"
#include "nats_server.hpp"

namespace scenert::cluster {
namespace {

using std::chrono::milliseconds;

// One server for the suite (starting one costs a few hundred ms); a bucket of its own per test.
struct KvPlayerStore : ::testing::Test {
  static inline std::unique_ptr<test::nats_server> server;
  static void SetUpTestSuite() { server = std::make_unique<test::nats_server>(); }
  static void TearDownTestSuite() { server.reset(); }

  static std::string bucket() {
    return fmt::format("players-{}", ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  static kv_store_options options() {
    kv_store_options o;
    o.url = server->url();
    o.bucket = bucket();
    return o;
  }
  // Retried while the server's JetStream comes up (as test::open_bucket does).
  static std::unique_ptr<kv_player_store> open(kv_store_options o = options()) {
    std::string last;
    std::unique_ptr<kv_player_store> opened;
    const bool ok = scenert::test::eventually([&] {
      auto s = kv_player_store::open(o);
      if (!s) last = s.error().message;
      if (s) opened = std::move(*s);
      return opened != nullptr;
    });
    if (!ok) ADD_FAILURE() << last;
    return opened;
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

TEST_F(KvPlayerStore, AppliesEachGrantOnceByItsId) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_TRUE(sign_in(*s, 7, "ann").items.empty());
  auto first = write(*s, {"g-1", 7, 40, 3});
  EXPECT_EQ(first.code, store_errc::ok) << first.reason;
  EXPECT_FALSE(first.repeated);
  for (int i = 0; i < 3; ++i) {
    auto again = write(*s, {"g-1", 7, 40, 3});
    EXPECT_EQ(again.code, store_errc::ok) << again.reason;
    EXPECT_TRUE(again.repeated);
  }
  // A batch with the same id twice applies it once; its answers come in the order of the calls.
  std::vector<grant_receipt> answers;
  std::promise<void> last;
  for (const char* id : {"g-2", "g-2", "g-3"})
    s->write({id, 7, 41, 1}, [&](grant_receipt r) { answers.push_back(std::move(r)); });
  s->read("ann", [&](holdings) { last.set_value(); });
  last.get_future().get();
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(answers[0].what.id, "g-2");
  EXPECT_FALSE(answers[0].repeated);
  EXPECT_TRUE(answers[1].repeated);
  EXPECT_EQ(answers[2].what.id, "g-3");
  EXPECT_EQ(read(*s, "ann").items, (std::vector<holding>{{40, 3}, {41, 2}}));
  const auto st = s->stats();
  EXPECT_EQ(st.grants, 3u);
  EXPECT_EQ(st.repeats, 4u);
}

// Ids past the record's bound leave it for marks of their own: a repeat of one long gone is still
// a repeat, and the record stays small.
TEST_F(KvPlayerStore, GrantsThatLeftTheRecordAreStillRepeats) {
  auto o = options();
  o.recent_grants = 4;
  auto s = open(o);
  ASSERT_TRUE(s);
  (void)sign_in(*s, 1, "ann");
  for (int i = 0; i < 20; ++i) ASSERT_EQ(write(*s, {fmt::format("old-{}", i), 1, 5, 1}).code, store_errc::ok);
  for (int i = 0; i < 20; ++i) {
    auto r = write(*s, {fmt::format("old-{}", i), 1, 5, 1});
    EXPECT_EQ(r.code, store_errc::ok) << r.reason;
    EXPECT_TRUE(r.repeated) << "old-" << i;
  }
  EXPECT_EQ(read(*s, "ann").items, (std::vector<holding>{{5, 20}}));
  EXPECT_GE(s->stats().marks, 15u);
  // New ids: the record's filter of marked ids spares (nearly) every one a read of its mark.
  const auto before = s->stats().spent_reads;
  for (int i = 0; i < 50; ++i) ASSERT_EQ(write(*s, {fmt::format("new-{}", i), 1, 5, 1}).code, store_errc::ok);
  EXPECT_LE(s->stats().spent_reads - before, 2u);
  EXPECT_EQ(read(*s, "ann").items, (std::vector<holding>{{5, 70}}));
}

// A burst to one account: at most 512 new grants a write, so the record stays far below the
// server's largest message whatever the batch.
TEST_F(KvPlayerStore, ABurstToOneAccountIsWrittenInBoundedWrites) {
  auto s = open();
  ASSERT_TRUE(s);
  (void)sign_in(*s, 1, "ann");
  std::atomic<int> ok{0};
  for (int i = 0; i < 1200; ++i)
    s->write({fmt::format("burst-{:0100}", i), 1, 9, 1},
             [&](grant_receipt r) { ok += r.code == store_errc::ok; });
  EXPECT_EQ(read(*s, "ann").items, (std::vector<holding>{{9, 1200}}));
  EXPECT_EQ(ok.load(), 1200);
  EXPECT_GE(s->stats().writes, 3u);
}

TEST_F(KvPlayerStore, AStoreFindsWhatAnotherGranted) {
  auto a = open(), b = open();
  ASSERT_TRUE(a && b);
  (void)sign_in(*a, 1, "ann");
  ASSERT_EQ(write(*a, {"a-1", 1, 10, 4}).code, store_errc::ok);
  // Player 1 signed in through `a` (a gateway); `b` (the node its line moved to) grants to it.
  auto from_b = write(*b, {"b-1", 1, 11, 1});
  EXPECT_EQ(from_b.code, store_errc::ok) << from_b.reason;
  // Ann logs in again elsewhere, as another player id: she holds both.
  EXPECT_EQ(sign_in(*b, 2, "ann").items, (std::vector<holding>{{10, 4}, {11, 1}}));
  EXPECT_EQ(read(*a, "ann").items, (std::vector<holding>{{10, 4}, {11, 1}}));
  // A new store on the same bucket (a restarted process) reads the same.
  a.reset();
  auto c = open();
  EXPECT_EQ(read(*c, "ann").items, (std::vector<holding>{{10, 4}, {11, 1}}));
  EXPECT_TRUE(read(*c, "nobody").items.empty());
}

// Two stores (two nodes) write a random trace of grants, many of them by both at once and some
// several times: each id is applied once and the holdings equal an in-memory oracle's sums exactly.
TEST_F(KvPlayerStore, TwoStoresWritingTheSameGrantsApplyEachOnce) {
  auto o = options();
  o.recent_grants = 16;  // the marks' path too
  auto a = open(o), b = open(o);
  ASSERT_TRUE(a && b);
  const std::vector<std::string> owners{"ann", "bob", "cid"};
  for (player_id p = 1; p <= owners.size(); ++p) (void)sign_in(*a, p, owners[p - 1]);
  std::mt19937 rng(38);
  std::vector<grant> trace;
  std::map<std::pair<std::string, item_id>, std::int64_t> oracle;
  for (int i = 0; i < 300; ++i) {
    grant g{fmt::format("t-{}", i), static_cast<player_id>(1 + rng() % 3), static_cast<item_id>(rng() % 4),
            static_cast<std::int64_t>(1 + rng() % 5)};
    oracle[{owners[g.player - 1], g.item}] += g.count;
    trace.push_back(std::move(g));
  }
  auto writer = [&](player_store& s, unsigned seed, std::atomic<int>& failed) {
    std::mt19937 pick(seed);
    std::vector<std::future<void>> waits;
    auto one = [&](const grant& g) {
      auto done = std::make_shared<std::promise<void>>();
      waits.push_back(done->get_future());
      s.write(g, [&, done](grant_receipt r) {
        failed += r.code != store_errc::ok;
        done->set_value();
      });
    };
    for (std::size_t i = 0; i < trace.size(); ++i) {
      for (auto times = pick() % 3; times > 0; --times) one(trace[i]);  // 0, 1 or 2 times by each store
      if (i % 2 == seed % 2) one(trace[i]);                             // every grant at least once in all
      if (i % 8 == 7)  // small batches, so that the two stores' writes interleave
        for (auto& w : std::exchange(waits, {})) w.get();
    }
    for (auto& w : waits) w.get();
  };
  std::atomic<int> failed{0};
  std::thread ta([&] { writer(*a, 1, failed); });
  std::thread tb([&] { writer(*b, 2, failed); });
  ta.join(), tb.join();
  EXPECT_EQ(failed.load(), 0);
  const auto sa = a->stats(), sb = b->stats();
  EXPECT_EQ(sa.grants + sb.grants, trace.size()) << "applied now, by either store";
  for (const auto& owner : owners)
    for (auto* s : {a.get(), b.get()}) {
      std::vector<holding> want;
      for (const auto& [key, sum] : oracle)
        if (key.first == owner) want.push_back({key.second, sum});
      EXPECT_EQ(read(*s, owner).items, want) << owner;
    }
  std::printf("two stores: %llu + %llu applied, %llu + %llu repeats, %llu + %llu lost races, %llu marks\n",
              static_cast<unsigned long long>(sa.grants), static_cast<unsigned long long>(sb.grants),
              static_cast<unsigned long long>(sa.repeats), static_cast<unsigned long long>(sb.repeats),
              static_cast<unsigned long long>(sa.conflicts), static_cast<unsigned long long>(sb.conflicts),
              static_cast<unsigned long long>(sa.marks + sb.marks));
}

TEST_F(KvPlayerStore, RefusesBadGrantsAndStrangers) {
  auto s = open();
  ASSERT_TRUE(s);
  (void)sign_in(*s, 1, "ann");
  for (grant g : {grant{"z", 1, 1, 0}, grant{"n", 1, 1, -2}, grant{"", 1, 1, 1},
                  grant{std::string(max_grant_id_bytes + 1, 'x'), 1, 1, 1}}) {
    auto r = write(*s, g);
    EXPECT_EQ(r.code, store_errc::bad_grant) << g.id;
    EXPECT_FALSE(r.reason.empty());
  }
  auto stranger = write(*s, {"s-1", 99, 1, 1});
  EXPECT_EQ(stranger.code, store_errc::no_account);
  EXPECT_NE(stranger.reason.find("99"), std::string::npos) << stranger.reason;
  EXPECT_TRUE(read(*s, "ann").items.empty());
  // Names and ids of any bytes: their keys are base64url.
  (void)sign_in(*s, 2, std::string("\0\xff.*> x", 7));
  EXPECT_EQ(write(*s, {std::string("\x01.>*\xfe", 5), 2, 3, 1}).code, store_errc::ok);
  EXPECT_EQ(read(*s, std::string("\0\xff.*> x", 7)).items, (std::vector<holding>{{3, 1}}));
  (void)sign_in(*s, 3, "");
  EXPECT_EQ(write(*s, {"e-1", 3, 3, 2}).code, store_errc::ok);
  EXPECT_EQ(read(*s, "").items, (std::vector<holding>{{3, 2}}));
}

TEST_F(KvPlayerStore, SignedOutPlayersKeepTheirAccountForTheGrace) {
  auto o = options();
  o.account_grace = milliseconds(150);
  o.player_ttl = milliseconds(0);  // read the sign-in each time, as another node would
  auto s = open(o);
  ASSERT_TRUE(s);
  (void)sign_in(*s, 4, "dee");
  s->sign_out(4);
  auto within = write(*s, {"late-1", 4, 1, 1});  // a line granting as its player leaves
  EXPECT_EQ(within.code, store_errc::ok) << within.reason;
  // The grace runs out (the store's own timer): its record goes, and a grant finds no account.
  ASSERT_TRUE(scenert::test::eventually([&] { return s->stats().expired == 1; }));
  auto [link, kv] = test::open_bucket(*server, bucket());
  EXPECT_EQ(kv.get("player.4").code(), cluster_errc::not_found);
  auto after = write(*s, {"late-2", 4, 1, 1});
  EXPECT_EQ(after.code, store_errc::no_account) << after.reason;
  EXPECT_EQ(sign_in(*s, 5, "dee").items, (std::vector<holding>{{1, 1}}));
  EXPECT_TRUE(kv.get("player.5"));  // the signed-in one stays
}

// A player resumed through another gateway signs in there; its old gateway's sign-out, later, leaves
// that sign-in alone (it writes at the revision it read), so the grants after the grace still land.
// The grace is 0: a record the sign-out took would go at the store's first look after it.
TEST_F(KvPlayerStore, ASignOutLeavesASignInMadeElsewhereSince) {
  auto o = options();
  o.account_grace = milliseconds(0);
  o.player_ttl = milliseconds(0);
  auto old_gateway = open(o), new_gateway = open(o);
  ASSERT_TRUE(old_gateway && new_gateway);
  (void)sign_in(*old_gateway, 6, "eve");
  (void)sign_in(*new_gateway, 6, "eve");
  old_gateway->sign_out(6);
  // The store looks for records due after each batch it serves: a second read answered means it
  // has looked after the sign-out's batch.
  (void)read(*old_gateway, "eve");
  (void)read(*old_gateway, "eve");
  auto [link, kv] = test::open_bucket(*server, bucket());
  EXPECT_TRUE(kv.get("player.6"));  // the new gateway's sign-in
  auto r = write(*new_gateway, {"resumed-1", 6, 2, 1});
  EXPECT_EQ(r.code, store_errc::ok) << r.reason;
}

TEST_F(KvPlayerStore, AStoppedStoreAnswersClosed) {
  auto s = open();
  ASSERT_TRUE(s);
  (void)sign_in(*s, 1, "ann");
  std::promise<grant_receipt> queued;
  s->write({"q-1", 1, 2, 1}, [&](grant_receipt r) { queued.set_value(std::move(r)); });
  s->stop();  // what was queued is written first
  EXPECT_EQ(queued.get_future().get().code, store_errc::ok);
  EXPECT_EQ(write(*s, {"q-2", 1, 2, 1}).code, store_errc::closed);
  EXPECT_EQ(read(*s, "ann").code, store_errc::closed);
  EXPECT_EQ(sign_in(*s, 2, "bob").code, store_errc::closed);
  s->sign_out(1);  // nothing to answer, nothing done
}

TEST_F(KvPlayerStore, ABrokenRecordIsAnIoErrorNamingItsKey) {
  auto s = open();
  ASSERT_TRUE(s);
  auto [link, kv] = test::open_bucket(*server, bucket());
  ASSERT_TRUE(kv.put("account.Z2Fs", "{not json"));  // "gal"
  auto r = read(*s, "gal");
  EXPECT_EQ(r.code, store_errc::io);
  EXPECT_NE(r.reason.find("account.Z2Fs"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find(bucket()), std::string::npos) << r.reason;
}

TEST_F(KvPlayerStore, NoServerIsAnIoErrorNamingIt) {
  kv_store_options o;
  o.url = fmt::format("nats://127.0.0.1:{}", test::free_port());
  o.timeout = milliseconds(200);
  auto s = kv_player_store::open(o);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), store_errc::io);
  EXPECT_NE(s.error().message.find(o.url), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace scenert::cluster
