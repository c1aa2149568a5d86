// The bots in-process against a real world and front on loopback, with the admin endpoint as the
// truth: their views agree with it, and a front that hides a player's moves is caught.
#include <scenert/admin/world_admin.hpp>
#include <scenert/bots/engine.hpp>

#include <scenert/net/front.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/space/space_module.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "../eventually.hpp"

#include "../scene/fixture.hpp"

namespace scenert::bots {
namespace {

using namespace scenert::admin;

// A world on a real pool with its front and its admin endpoint on free loopback ports.
struct hosted {
  scene_table table = test::small_table();
  std::unique_ptr<processor_pool> pool;
  std::unique_ptr<net::front> door;
  std::shared_ptr<world> w;
  std::atomic<bool> stopping{false};
  std::unique_ptr<admin_server> admin;

  explicit hosted(net::front_options fo) {
    // One town line that holds every bot, on areas so large that each bot sees all the others.
    for (auto& m : table.maps) m.area_width = m.area_height = 16;
    for (auto& d : table.scenes)
      if (d.kind == scene_kind::town) d.capacity = 20, d.hard_capacity = 24;
    pool_options po;
    po.workers = 2;
    po.log = [](log_level, std::string_view) {};
    pool = std::make_unique<processor_pool>(std::move(po));
    EXPECT_TRUE(pool->start().has_value());
    door = net::front::create(table, fo);
    world_options wo;
    wo.on_line_events = door->on_line_events();
    wo.on_new_line = attach_space_modules(table);
    w = world::create(table, *pool, std::move(wo));
    w->start();
    auto started = door->start(*w);
    EXPECT_TRUE(started.has_value()) << started.error().message;
    auto a =
        admin_server::start({"127.0.0.1", 0}, world_admin_handlers(table, *pool, *w, stopping, door.get()));
    EXPECT_TRUE(a.has_value());
    if (a) admin = std::move(a).value();
  }
  ~hosted() {
    admin.reset();
    door->stop();
    w->shutdown().wait_for(std::chrono::seconds(5));
    (void)pool->stop();
  }

  bots_report play(std::uint32_t clients, std::chrono::milliseconds login_timeout = std::chrono::seconds(10),
                   double seconds = 2.5) {
    bots_options o;
    o.login_timeout = login_timeout;
    o.targets = {{"127.0.0.1", door->tcp_port()}};
    o.admins = {endpoint{"127.0.0.1", admin->port()}};
    o.settle = std::chrono::milliseconds(300);
    o.progress = false;
    bots_plan_options po;
    po.clients = clients;
    po.seconds = seconds;
    po.rate = 40;
    po.act_every = 0;  // walking and chat: this test is about views, not travel
    po.chat_every = 1;
    return run_bots(o, make_bots_plan(po));
  }
};

TEST(BotsWorld, EveryBotsViewIsTheTruth) {
  hosted h({});
  const auto r = h.play(12);
  EXPECT_EQ(r.logged_in, 12u);
  EXPECT_EQ(r.errors, 0u) << (r.error_examples.empty() ? "" : r.error_examples.front());
  ASSERT_TRUE(r.views_verified);
  EXPECT_EQ(r.views.bots, 12u);
  EXPECT_EQ(r.views.pairs, 12u * 11u);
  EXPECT_EQ(r.views.mismatches(), 0u) << (r.views.examples.empty() ? "" : r.views.examples.front());
  EXPECT_GT(r.moves_sent, 0u);
  EXPECT_GT(r.move_to_viewer.total(), 0u);
}

TEST(BotsWorld, AFrontThatHidesAPlayersMovesIsCaught) {
  net::front_options fo;
  fo.fault_hide_moves_of = 1;  // the first player to log in: its viewers never hear it move
  hosted h(fo);
  const auto r = h.play(12);
  ASSERT_TRUE(r.views_verified);
  EXPECT_GT(r.views.wrong_position, 0u);
  EXPECT_EQ(r.views.missing + r.views.extra + r.views.misplaced, 0u);
  EXPECT_GT(r.view_mismatches(), 0u);
}

// A front whose admission is closed (the lines' ticks said to run late) and opens at once when they
// are not: what decides is the lateness the test reports.
net::front_options closed_by_lateness() {
  net::front_options fo;
  fo.admission.enabled = true;
  fo.admission.max_io_busy = 1.0;
  fo.admission.max_io_lag = std::chrono::milliseconds(10'000);
  fo.admission.max_write_queue_bytes = std::size_t{1} << 30;
  fo.admission.close_after = fo.admission.reopen_after = std::chrono::milliseconds(0);
  fo.admission.retry_after = std::chrono::milliseconds(200);
  return fo;
}

TEST(BotsWorld, ALoginRefusedAsServerBusyIsTriedAgainAfterItsRetryAfterAndCounted) {
  hosted h(closed_by_lateness());
  h.door->report_tick_lateness(std::chrono::seconds(1));
  ASSERT_TRUE(test::eventually([&] { return !h.door->stats().admitting; }));
  std::thread opener([&] {  // once every bot was refused, the lines catch up
    (void)test::eventually([&] { return h.door->stats().busy_refused >= 4; });
    h.door->report_tick_lateness(std::chrono::microseconds(0));
  });
  const auto r = h.play(4, std::chrono::seconds(10), 1.5);
  opener.join();
  EXPECT_GE(r.server_busy, 4u);
  EXPECT_EQ(r.server_busy, h.door->stats().busy_refused);
  EXPECT_EQ(r.logged_in, 4u);
  EXPECT_EQ(r.errors, 0u) << (r.error_examples.empty() ? "" : r.error_examples.front());
  EXPECT_EQ(r.disconnects.count("server_busy"), 0u);
}

TEST(BotsWorld, ABotStillRefusedAtItsLoginTimeoutGivesUpCountedNotAnError) {
  hosted h(closed_by_lateness());
  h.door->report_tick_lateness(std::chrono::seconds(1));
  ASSERT_TRUE(test::eventually([&] { return !h.door->stats().admitting; }));
  const auto r = h.play(2, std::chrono::milliseconds(500), 1.0);
  EXPECT_EQ(r.logged_in, 0u);
  EXPECT_GE(r.server_busy, 2u);
  EXPECT_EQ(r.busy_gave_up, 2u);
  EXPECT_EQ(r.errors, 0u) << (r.error_examples.empty() ? "" : r.error_examples.front());
  EXPECT_EQ(r.disconnects.at("server_busy"), 2u);
}

}  // namespace
}  // namespace scenert::bots
