#include <scenert/admin/store_metrics.hpp>

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace scenert::admin {
namespace {

// A store that keeps each grant's answer until the test gives it, as a store's thread would later.
class held_store final : public player_store {
 public:
  void sign_in(player_id, std::string owner, holdings_done done) override { done(held_by(owner)); }
  void sign_out(player_id) override { ++signed_out; }
  void write(grant g, grant_done done) override { held.emplace_back(std::move(g), std::move(done)); }
  void read(std::string owner, holdings_done done) override { done(held_by(owner)); }
  static holdings held_by(std::string owner) {
    holdings h;
    h.owner = std::move(owner);
    return h;
  }

  void answer(std::size_t i, store_errc code, bool repeated = false) {
    grant_receipt r;
    r.what = held[i].first;
    r.code = code;
    r.repeated = repeated;
    held[i].second(std::move(r));
  }

  std::vector<std::pair<grant, grant_done>> held;
  int signed_out = 0;
};

TEST(MeasuredStore, CountsGrantsByOutcomeAndTimesEachFromItsWriteToItsAnswer) {
  held_store inner;
  std::uint64_t commits = 7;
  measured_store store(inner, [&commits] { return commits; });
  std::vector<grant_receipt> heard;
  for (int i = 0; i < 4; ++i)
    store.write(grant{"g" + std::to_string(i), 1, 5, 1},
                [&heard](grant_receipt r) { heard.push_back(std::move(r)); });
  ASSERT_EQ(inner.held.size(), 4u);
  EXPECT_EQ(store.measures().grant_latency.count, 0u) << "nothing answered yet";
  inner.answer(0, store_errc::ok);
  inner.answer(1, store_errc::ok);
  inner.answer(2, store_errc::ok, true);
  inner.answer(3, store_errc::no_account);
  ASSERT_EQ(heard.size(), 4u);
  EXPECT_EQ(heard[2].what.id, "g2");
  EXPECT_TRUE(heard[2].repeated);
  EXPECT_EQ(heard[3].code, store_errc::no_account);

  const auto m = store.measures();
  EXPECT_EQ(m.written, 2u);
  EXPECT_EQ(m.repeats, 1u);
  EXPECT_EQ(m.failed, 1u);
  EXPECT_EQ(m.commits, 7u);
  EXPECT_EQ(m.grant_latency.count, 4u);
  EXPECT_EQ(m.grant_latency.counts.size(), m.grant_latency.upper_bounds.size() + 1);
  EXPECT_LE(m.grant_latency.p50, m.grant_latency.p99);
  EXPECT_LE(m.grant_latency.p99, m.grant_latency.max);
  store.sign_out(3);
  EXPECT_EQ(inner.signed_out, 1) << "the other calls pass through";
}

TEST(MeasuredStore, RendersItsFamilies) {
  held_store inner;
  measured_store store(inner);
  store.write(grant{"a", 1, 5, 1}, [](grant_receipt) {});
  inner.answer(0, store_errc::ok);
  prometheus_text out;
  render_store_metrics(out, store.measures());
  const std::string& t = out.text();
  EXPECT_NE(t.find("scenert_store_grants_total{outcome=\"written\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("scenert_store_grants_total{outcome=\"failed\"} 0\n"), std::string::npos) << t;
  EXPECT_NE(t.find("scenert_store_commits_total 0\n"), std::string::npos) << t;
  EXPECT_NE(t.find("scenert_store_grant_seconds_count 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("scenert_store_grant_seconds_bucket{le=\"+Inf\"} 1\n"), std::string::npos) << t;
}

}  // namespace
}  // namespace scenert::admin
