#pragma once
// What the front's end-to-end tests share: a world on a real pool with the front on free ports, and
// bounded waits for the frames a client expects. Nothing here sleeps for a fixed time.
#include <scenert/net/client.hpp>
#include <scenert/net/front.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <scenert/scene/module_registry.hpp>
#include <scenert/space/space_module.hpp>

#include "../scene/fixture.hpp"

namespace scenert::net::test {

using namespace scenert::test;
inline constexpr auto patience = std::chrono::seconds(5);

// Between the world's lines and the front: passes their events on, or holds them (in order) until
// released, so a test can make a world's answer reach the front before its line's events do.
struct event_gate {
  using sink = std::function<void(line_handle, phase_id, std::span<const line_event>)>;
  sink to;
  std::mutex m;
  bool holding = false;
  std::vector<std::tuple<line_handle, phase_id, std::vector<line_event>>> held;

  void pass(line_handle l, phase_id ph, std::span<const line_event> events) {
    std::lock_guard lock(m);  // held while passing on: released batches keep their place
    if (holding)
      held.emplace_back(l, ph, std::vector<line_event>(events.begin(), events.end()));
    else
      to(l, ph, events);
  }
  void hold() {
    std::lock_guard lock(m);
    holding = true;
  }
  void release() {
    std::lock_guard lock(m);
    holding = false;
    for (const auto& [l, ph, events] : held) to(l, ph, events);
    held.clear();
  }
};

struct server {
  scene_table table = small_table();
  std::unique_ptr<processor_pool> pool;
  std::unique_ptr<front> door;
  std::shared_ptr<world> w;
  std::shared_ptr<event_gate> events = std::make_shared<event_gate>();

  // `port`, when given, is what the front talks to instead of the world (a test's port passing
  // requests on to it); `modules`, the game modules the table's scenes name (it must outlive the server).
  explicit server(front_options fo = {}, const std::function<void(scene_table&)>& tweak = nullptr,
                  const std::function<world_port&(world&)>& port = nullptr,
                  const module_registry* modules = nullptr) {
    if (tweak) tweak(table);
    fo.ws = true;
    // ctest runs the front's suites twice: once as written, once over three I/O threads.
    if (const char* threads = std::getenv("SCENERT_TEST_IO_THREADS");
        threads != nullptr && fo.io_threads == 1)
      fo.io_threads = std::strtoul(threads, nullptr, 10);
    pool_options po;
    po.workers = 2;
    po.log = [](log_level, std::string_view) {};
    pool = std::make_unique<processor_pool>(std::move(po));
    EXPECT_TRUE(pool->start().has_value());
    door = front::create(table, fo);
    world_options wo;
    events->to = door->on_line_events();
    wo.on_line_events = [gate = events](line_handle l, phase_id ph, std::span<const line_event> e) {
      gate->pass(l, ph, e);
    };
    wo.on_module_frames = door->on_module_frames();
    wo.on_new_line = attach_space_modules(table);  // town lines get their phases, as in scenert run
    if (modules != nullptr)
      wo.on_new_line = [phases = std::move(wo.on_new_line),
                        games = attach_game_modules(table, *modules)](scene& l) {
        phases(l);
        games(l);
      };
    w = world::create(table, *pool, std::move(wo));
    w->start();
    auto started = door->start(port ? port(*w) : static_cast<world_port&>(*w));
    EXPECT_TRUE(started.has_value()) << started.error().message;
  }
  ~server() {
    door->stop();
    w->shutdown().wait_for(patience);
    (void)pool->stop();
  }
  std::unique_ptr<client> connect() {
    auto c = client::connect("127.0.0.1", door->tcp_port());
    EXPECT_TRUE(c.has_value()) << c.error().message;
    return c ? std::move(c).value() : nullptr;
  }
  std::unique_ptr<client> connect_ws(const std::string& subprotocol = "") {
    auto c = client::connect_ws("127.0.0.1", door->ws_port(), subprotocol);
    EXPECT_TRUE(c.has_value()) << c.error().message;
    return c ? std::move(c).value() : nullptr;
  }
};

inline std::uint64_t closed(const server& s, close_reason why) {
  return s.door->stats().closed_by[static_cast<std::size_t>(why)];
}

// Reads until a message of type M for which `pred` holds; fails the test on a timeout.
template <class M>
M wait_for(client& c, std::function<bool(const M&)> pred = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (std::chrono::steady_clock::now() < deadline) {
    auto m = c.receive(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
    if (!m) {
      ADD_FAILURE() << "waiting for frame " << name_of(id_of(server_message{M{}})) << ": "
                    << m.error().message;
      return M{};
    }
    if (auto* got = std::get_if<M>(&m.value()); got && (!pred || pred(*got))) return *got;
  }
  ADD_FAILURE() << "timed out waiting for frame " << name_of(id_of(server_message{M{}}));
  return M{};
}

inline bool is(const broadcast& b, std::int32_t pid, broadcast_type t) { return b.pid == pid && b.type == t; }

// The players of a 202 but `me`, the ones it sees; a 202 names its receiver too, once (seed 002's
// GameRole::Init adds the player to the world before it builds the 202).
inline std::vector<player_in_view> others(const players_in_view& v, std::int32_t me) {
  std::vector<player_in_view> out;
  int itself = 0;
  for (const auto& p : v.players) {
    if (p.pid == me)
      ++itself;
    else
      out.push_back(p);
  }
  EXPECT_EQ(itself, 1) << "player " << me << " in its own 202";
  return out;
}

// The 202's entry for `me` (a default one, and a failure, when it has none).
inline player_in_view own_entry(const players_in_view& v, std::int32_t me) {
  for (const auto& p : v.players)
    if (p.pid == me) return p;
  ADD_FAILURE() << "player " << me << " not in its own 202";
  return {};
}

// Waits for a landing's view: 202 with the player itself, then 200 Tp 2 for itself, at the place
// the 202 gave it.
inline players_in_view view_after_landing(client& c, std::int32_t pid) {
  auto v = wait_for<players_in_view>(c);
  (void)others(v, pid);
  const auto own =
      wait_for<broadcast>(c, [&](const broadcast& b) { return is(b, pid, broadcast_type::appeared); });
  EXPECT_EQ(own.p, own_entry(v, pid).p) << "player " << pid << ": its 200 Tp 2 and its 202 disagree";
  return v;
}

// Logs in as a guest and waits for its view: 1, then 202 (itself in it), then 200 Tp 2 for itself.
inline std::int32_t land(client& c, players_in_view* view = nullptr) {
  const auto me = wait_for<you_are>(c);
  EXPECT_GT(me.pid, 0);
  EXPECT_EQ(me.name, "guest-" + std::to_string(me.pid));
  auto v = view_after_landing(c, me.pid);
  if (view) *view = v;
  return me.pid;
}

}  // namespace scenert::net::test
