// Admission before overload, end to end: a front told its lines' ticks run late refuses new logins
// (server_busy, with a retry-after), serves the players it has, lets a dropped one resume, and admits
// again once the lateness is gone.
#include <gtest/gtest.h>

#include "../eventually.hpp"
#include "front_fixture.hpp"

namespace scenert::net {
namespace {

using namespace std::chrono_literals;
using namespace test;

// Only the tick lateness the test reports decides: the measured I/O share and write queues never reach
// their lines on a loaded machine.
front_options forced_by_lateness() {
  front_options fo;
  fo.resume = 5s;
  fo.admission.enabled = true;
  fo.admission.max_tick_lateness = 50ms;
  fo.admission.max_io_busy = 1.0;
  fo.admission.max_io_lag = std::chrono::milliseconds(10'000);
  fo.admission.max_write_queue_bytes = std::size_t{1} << 30;
  fo.admission.close_after = 0ms;
  fo.admission.reopen_after = 0ms;
  fo.admission.retry_after = 500ms;
  return fo;
}

login_ok named(client& c, const std::string& name, const std::string& token = "") {
  EXPECT_TRUE(c.send(login{name, token}));
  const auto ok = wait_for<login_ok>(c);
  wait_for<players_in_view>(c);
  return ok;
}

void expect_busy(client& c) {
  const auto bye = wait_for<goodbye>(c);
  EXPECT_EQ(bye.reason.substr(0, bye.reason.find(':')), "server_busy") << bye.reason;
  EXPECT_GE(bye.retry_after_ms, 500u);
  EXPECT_LT(bye.retry_after_ms, 750u);  // the retry-after plus up to half of it
}

TEST(FrontAdmission, ABusyFrontRefusesNewLoginsAndServesThePlayersItHas) {
  server s(forced_by_lateness());
  auto watcher = s.connect();
  const auto w = land(*watcher);
  auto alice = s.connect();
  const auto first = named(*alice, "alice");
  ASSERT_TRUE(s.door->stats().admitting);

  s.door->report_tick_lateness(1s);
  ASSERT_TRUE(eventually([&] { return !s.door->stats().admitting; }));
  EXPECT_EQ(s.door->stats().over, headroom_measure::tick_lateness);
  auto bob = s.connect();
  ASSERT_TRUE(bob->send(login{"bob", ""}));
  expect_busy(*bob);
  auto guest = s.connect();  // seed 002's client sends nothing: a guest, refused all the same
  expect_busy(*guest);

  // The players in are served: alice's move reaches the watcher.
  ASSERT_TRUE(alice->send(move_to{{18.5F, 0, 18.5F, 0, 0}}));
  wait_for<broadcast>(*watcher, [&](const broadcast& b) { return is(b, first.pid, broadcast_type::moved); });
  // A dropped player resumes: never refused.
  alice->close();
  ASSERT_TRUE(eventually([&] { return s.door->stats().detached == 1; }));
  auto again = s.connect();
  const auto back = named(*again, "ignored", first.resume_token);
  EXPECT_TRUE(back.resumed);
  EXPECT_EQ(back.pid, first.pid);
  EXPECT_EQ(s.door->stats().busy_refused, 2u);
  EXPECT_EQ(closed(s, close_reason::server_busy), 2u);
  EXPECT_GE(s.door->stats().admission_closings, 1u);
  (void)w;

  s.door->report_tick_lateness(0us);
  ASSERT_TRUE(eventually([&] { return s.door->stats().admitting; }));
  auto carol = s.connect();
  EXPECT_FALSE(named(*carol, "carol").resumed);
}

}  // namespace
}  // namespace scenert::net
