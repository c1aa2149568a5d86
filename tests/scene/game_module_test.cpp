#include <scenert/scene/game_module.hpp>
#include <scenert/scene/module_registry.hpp>
#include <scenert/scene/scene.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "../eventually.hpp"
#include "fixture.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;

module_value value_of(module_value::type kind) {
  module_value v;
  v.kind = kind;
  return v;
}
module_value integer_value(double n) {
  auto v = value_of(module_value::type::number);
  v.number = n, v.integer = true;
  return v;
}
module_value text_value(std::string t) {
  auto v = value_of(module_value::type::string);
  v.text = std::move(t);
  return v;
}

// A scene host that hears line events and module frames.
struct listening_host final : scene_host {
  std::mutex m;
  std::vector<line_event> events;
  std::vector<module_frame> frames;
  std::vector<line_handle> quarantines;
  void scene_empty(line_handle) override {}
  void player_left(line_handle, player_id) override {}
  void scene_quarantined(line_handle l) override {
    std::lock_guard g(m);
    quarantines.push_back(l);
  }
  bool wants_line_events() const override { return true; }
  void line_events(line_handle, phase_id, std::span<const line_event> e) override {
    std::lock_guard g(m);
    events.insert(events.end(), e.begin(), e.end());
  }
  void module_frames(line_handle, std::span<const module_frame> f) override {
    std::lock_guard g(m);
    frames.insert(frames.end(), f.begin(), f.end());
  }
};

// A module whose hooks each run a test's function.
struct scripted_module final : game_module {
  std::function<void(module_context&)> active, ticked;
  std::function<message_answer(module_context&, player_id, module_opcode, std::string_view)> heard;
  std::vector<std::string>* log = nullptr;
  void note(const std::string& what) {
    if (log) log->push_back(what);
  }
  void on_init(module_context&) override { note("init"); }
  void on_active(module_context& c) override {
    note("active");
    if (active) active(c);
  }
  void on_inactive(module_context&) override { note("inactive"); }
  void on_tick(module_context& c, const tick_context&) override {
    if (ticked) ticked(c);
  }
  void on_player_enter(module_context&, player_id p) override { note("enter " + std::to_string(p)); }
  void on_player_leave(module_context&, player_id p) override { note("leave " + std::to_string(p)); }
  message_answer on_message(module_context& c, player_id p, module_opcode op, std::string_view b) override {
    if (heard) return heard(c, p, op, b);
    return game_module::on_message(c, p, op, b);
  }
};

struct game_module_fixture : ::testing::Test {
  scene_table table = test::small_table();
  std::shared_ptr<const grid::map_data> map = make_map_data(table.maps[0]);
  listening_host host;
  time_point now{};
  std::uint64_t ticks = 0;
  std::vector<std::string> log;

  std::shared_ptr<scene> make(scripted_module*& out, scene_id id = test::guild_id, std::uint32_t line = 1) {
    auto s = std::make_shared<scene>(*table.find_scene(id), map, &host);
    s->assign_line({id, line, 1});
    auto m = std::make_unique<scripted_module>();
    m->log = &log;
    out = m.get();
    s->set_game_module(std::move(m), 7);
    return s;
  }
  void tick(scene& s, nanoseconds dt = 100ms) {
    now += dt;
    (void)s.tick(tick_context{dt, now, ticks++}, 3, 1024);
  }
  static roster_change message(player_id p, module_opcode op, std::string bytes) {
    roster_change c{roster_change::kind::message, p, {}};
    c.opcode = op;
    c.bytes = std::move(bytes);
    return c;
  }
};

using GameModule = game_module_fixture;

TEST_F(GameModule, RunsTheLinesLifecycleAndHearsPlayersComeAndGo) {
  scripted_module* m = nullptr;
  auto s = make(m);
  s->activate();
  s->post_enter(5);
  tick(*s);
  s->post_leave(5, false);
  tick(*s);
  s->deactivate();
  s->activate();
  s->deactivate();
  std::vector<std::string> want{"init", "active", "enter 5", "leave 5", "inactive", "active", "inactive"};
  EXPECT_EQ(log, want);
}

TEST_F(GameModule, TimersRunOnTheLinesTickAndAreCancelledWhenItCloses) {
  scripted_module* m = nullptr;
  auto s = make(m);
  std::vector<std::string> fired;
  m->active = [&](module_context& c) {
    (void)c.after(250ms, [&](module_context&) { fired.push_back("after 250"); });
    (void)c.every(200ms, [&](module_context& c2) {
      fired.push_back("every 200 at " + std::to_string((c2.now() - time_point{}) / 1ms));
    });
    (void)c.after(150ms, [&](module_context&) { fired.push_back("after 150"); });
    (void)c.after(10s, [&](module_context&) { fired.push_back("never: the line closes first"); });
  };
  s->activate();
  for (int i = 0; i < 6; ++i) tick(*s);  // 100 ms (timers made in on_active count from here) .. 600 ms
  s->deactivate();
  m->active = nullptr;
  s->activate();
  for (int i = 0; i < 200; ++i) tick(*s);  // 20 s later: the closed line's timers never ran
  s->deactivate();
  std::vector<std::string> want{"after 150", "every 200 at 300", "after 250", "every 200 at 500"};
  EXPECT_EQ(fired, want);
}

TEST_F(GameModule, ACancelledTimerNeverRunsAndALatePeriodicTimerRunsOnce) {
  scripted_module* m = nullptr;
  auto s = make(m);
  int every = 0, after = 0;
  m->active = [&](module_context& c) {
    (void)c.every(100ms, [&](module_context&) { ++every; });
    const timer_id t = c.after(100ms, [&](module_context&) { ++after; });
    EXPECT_TRUE(c.cancel(t));
    EXPECT_FALSE(c.cancel(t));
  };
  s->activate();
  tick(*s);          // arms at 100 ms
  tick(*s, 1000ms);  // 1.1 s: ten periods late, one run
  tick(*s, 100ms);   // 1.2 s: one more
  EXPECT_EQ(every, 2);
  EXPECT_EQ(after, 0);
  s->deactivate();
}

TEST_F(GameModule, EntitiesReachTheLinesEventsWithTheirLookAndLeaveWhenTheLineCloses) {
  scripted_module* m = nullptr;
  auto s = make(m);
  std::optional<monster_id> boss, chest;
  m->active = [&](module_context& c) {
    boss = c.spawn({{10, 10}, {3, 1, 500}, true});
    chest = c.spawn({{12, 12}, {4, 0, 0}, false});
  };
  s->activate();
  ASSERT_TRUE(boss && chest);
  s->post_enter(1);
  tick(*s);
  scripted_module& mod = *m;
  mod.ticked = [&](module_context& c) {
    EXPECT_TRUE(c.set_look(*boss, {3, 2, 250}));
    EXPECT_EQ(c.look(*boss)->health, 250);
    EXPECT_TRUE(c.brain(*boss).has_value());
    EXPECT_FALSE(c.brain(*chest).has_value());
    EXPECT_TRUE(c.move(*chest, {13, 12}));
    EXPECT_FALSE(c.move(*boss, {13, 13})) << "a brain walks its own monster";
    EXPECT_TRUE(c.remove(*chest));
    EXPECT_FALSE(c.remove(*chest));
    c.send_to_viewers(*boss, 2001, "roar");
    mod.ticked = nullptr;
  };
  tick(*s);
  s->deactivate();
  std::vector<std::tuple<line_event::kind, std::uint64_t, std::uint16_t, std::int32_t>> seen;
  for (const auto& e : host.events)
    if (e.monster && (e.player == *boss || e.player == *chest) && e.what != line_event::kind::moved)
      seen.emplace_back(e.what, e.player, e.look.state, e.look.health);
  using k = line_event::kind;
  decltype(seen) want{{k::entered, *boss, 1, 500},
                      {k::entered, *chest, 0, 0},
                      {k::changed, *boss, 2, 250},
                      {k::left, *chest, 0, 0},
                      {k::left, *boss, 0, 0}};
  EXPECT_EQ(seen, want);
  ASSERT_EQ(host.frames.size(), 1u);
  EXPECT_EQ(host.frames[0].to, module_frame::audience::viewers);
  EXPECT_EQ(host.frames[0].bytes, "roar");
}

TEST_F(GameModule, MessagesArriveInOrderAndRefusalsGoBackToTheirSender) {
  scripted_module* m = nullptr;
  auto s = make(m);
  std::vector<std::string> heard;
  m->heard = [&](module_context& c, player_id p, module_opcode op, std::string_view b) -> message_answer {
    if (op == 2001) return heard.push_back(std::to_string(p) + ":" + std::string(b)), message_answer{};
    if (op == 2002) return fail(module_errc::malformed, "2002 takes 4 bytes");
    c.send(p, 2100, "pong");
    return {};
  };
  s->activate();
  s->post_enter(1);
  s->post_enter(2);
  std::vector<roster_change> batch{message(1, 2001, "a"), message(2, 2001, "x"), message(1, 2001, "b"),
                                   message(2, 2002, "??"), message(1, 2003, "")};
  s->post_roster(batch);
  tick(*s);
  s->deactivate();
  EXPECT_EQ(heard, (std::vector<std::string>{"1:a", "2:x", "1:b"}));
  ASSERT_EQ(host.frames.size(), 2u);
  EXPECT_EQ(host.frames[0].who, 2u);
  EXPECT_EQ(host.frames[0].refusal, static_cast<std::uint8_t>(module_errc::malformed));
  EXPECT_EQ(host.frames[0].bytes, "2002 takes 4 bytes");
  EXPECT_EQ(host.frames[1].opcode, 2100u);
  EXPECT_EQ(host.frames[1].refusal, 0);
}

TEST_F(GameModule, ALineWithoutAModuleRefusesMessagesByName) {
  auto s = std::make_shared<scene>(*table.find_scene(test::guild_id), map, &host);
  s->assign_line({test::guild_id, 1, 1});
  s->activate();
  s->post_enter(1);
  s->post_roster(message(1, 2001, "hello"));
  tick(*s);
  ASSERT_EQ(host.frames.size(), 1u);
  EXPECT_EQ(host.frames[0].refusal, static_cast<std::uint8_t>(module_errc::no_module));
  EXPECT_EQ(host.frames[0].opcode, 2001u);
  s->deactivate();
}

TEST_F(GameModule, AThrowingHookFailsItsLineOnly) {
  scripted_module *bad = nullptr, *good = nullptr;
  auto a = make(bad, test::guild_id, 1);
  auto b = make(good, test::guild_id, 2);
  bad->heard = [](module_context&, player_id, module_opcode, std::string_view) -> message_answer {
    throw std::runtime_error("a module bug");
  };
  int good_ticks = 0;
  good->ticked = [&](module_context&) { ++good_ticks; };
  for (auto* s : {a.get(), b.get()}) s->activate();
  a->post_enter(1);
  a->post_roster(message(1, 2001, ""));
  tick(*a);
  tick(*b);
  EXPECT_TRUE(a->broken());
  EXPECT_FALSE(b->broken());
  EXPECT_EQ(host.quarantines, (std::vector<line_handle>{a->line()}));
  tick(*b);
  EXPECT_EQ(good_ticks, 2);
  for (auto* s : {a.get(), b.get()}) s->deactivate();
}

TEST_F(GameModule, TheRandomSourceReplaysPerLineAndDiffersBetweenLines) {
  auto draws = [&](std::uint32_t line) {
    scripted_module* m = nullptr;
    auto s = make(m, test::guild_id, line);
    std::vector<std::uint64_t> out;
    m->active = [&](module_context& c) {
      for (int i = 0; i < 4; ++i) out.push_back(c.random()());
    };
    s->activate();
    s->deactivate();
    s->activate();  // a reopened line draws the same again
    s->deactivate();
    return out;
  };
  auto one = draws(1), again = draws(1), two = draws(2);
  ASSERT_EQ(one.size(), 8u);
  EXPECT_TRUE(std::equal(one.begin(), one.begin() + 4, one.begin() + 4));
  EXPECT_EQ(one, again);
  EXPECT_NE(one, two);
}

// ---- through the world: hooks on the line's thread, messages in order per player ----------

// Records which thread ran each hook; each tick's on_tick closes the list of that tick.
struct thread_probe final : game_module {
  std::mutex m;
  std::vector<std::pair<std::string, std::thread::id>> calls;
  std::map<player_id, std::vector<std::uint32_t>> order;
  std::atomic<int> inside{0};
  bool overlapped = false;
  void note(const char* what) {
    if (inside.fetch_add(1) != 0) overlapped = true;
    std::lock_guard g(m);
    calls.emplace_back(what, std::this_thread::get_id());
    inside.fetch_sub(1);
  }
  void on_player_enter(module_context& c, player_id) override {
    note("enter");
    (void)c.after(1ms, [this](module_context&) { note("timer"); });
  }
  void on_tick(module_context&, const tick_context&) override { note("tick"); }
  message_answer on_message(module_context&, player_id p, module_opcode, std::string_view b) override {
    note("message");
    std::uint32_t seq = 0;
    std::memcpy(&seq, b.data(), std::min(b.size(), sizeof seq));
    std::lock_guard g(m);
    order[p].push_back(seq);
    return {};
  }
};

scene_table table_with_module() {
  auto t = test::small_table();
  for (auto& s : t.scenes)
    if (s.id == test::field_id)
      s.module = module_ref{"probe", value_of(module_value::type::object), "/scenes/3/module"};
  return t;
}

TEST(GameModuleInAWorld, HooksRunOnTheLinesThreadAndMessagesKeepEachPlayersOrder) {
  auto table = table_with_module();
  module_registry registry;
  std::vector<thread_probe*> probes;
  std::mutex probes_m;
  ASSERT_TRUE(registry.add("probe", [&](module_params&) {
    auto p = std::make_unique<thread_probe>();
    std::lock_guard g(probes_m);
    probes.push_back(p.get());
    return p;
  }));
  EXPECT_TRUE(check_modules(table, registry).empty());
  probes.clear();  // the check made one and dropped it
  pool_options po;
  po.workers = 2;
  processor_pool pool(po);
  ASSERT_TRUE(pool.start());
  world_options wo;
  wo.on_new_line = attach_game_modules(table, registry);
  wo.on_line_events = [](line_handle, phase_id, std::span<const line_event>) {};
  auto w = world::create(table, pool, std::move(wo));
  w->start();
  for (player_id p : {1, 2}) ASSERT_TRUE(w->submit(world_request::enter(p, test::field_id)).get());
  auto where = w->locate(1).get();
  constexpr std::uint32_t per_player = 300;
  auto send = [&](player_id p) {
    for (std::uint32_t i = 0; i < per_player; ++i) {
      std::string bytes(sizeof i, '\0');
      std::memcpy(bytes.data(), &i, sizeof i);
      w->submit(world_request::message(p, where.line, 2001, std::move(bytes)), {});
    }
  };
  std::thread one(send, 1), two(send, 2);
  one.join();
  two.join();
  // The last message's answer comes once the world staged it; the line applies it on a later tick.
  (void)w->submit(world_request::move(1, {5, 5})).get();
  thread_probe* probe = nullptr;  // the line's, once every message and its timer reached it
  const bool reached = scenert::test::eventually([&] {
    std::lock_guard g(probes_m);
    for (auto* p : probes) {
      std::lock_guard g2(p->m);
      const bool timed =
          std::any_of(p->calls.begin(), p->calls.end(), [](auto& c) { return c.first == "timer"; });
      if (timed && p->order[1].size() == per_player && p->order[2].size() == per_player) probe = p;
    }
    return probe != nullptr;
  });
  ASSERT_TRUE(reached) << "every message and the timer reach the line within 5 s";
  std::map<player_id, std::vector<std::uint32_t>> order;
  std::vector<std::pair<std::string, std::thread::id>> calls;
  bool overlapped = false;
  {
    std::lock_guard g(probe->m);
    order = probe->order, calls = probe->calls, overlapped = probe->overlapped;
  }
  w->shutdown().wait();  // the line objects and their modules go with the world
  (void)pool.stop();
  for (player_id p : {1, 2}) {
    std::vector<std::uint32_t> want(per_player);
    for (std::uint32_t i = 0; i < per_player; ++i) want[i] = i;
    EXPECT_EQ(order[p], want) << "player " << p;
  }
  EXPECT_FALSE(overlapped);
  // Every hook ran on the thread of the tick it belongs to: the next on_tick's thread.
  std::thread::id tick_thread{};
  for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
    if (it->first == "tick") {
      tick_thread = it->second;
    } else if (tick_thread != std::thread::id{}) {
      EXPECT_EQ(it->second, tick_thread) << it->first;
    }
  }
}

// ---- the registry and the parameters ---------------------------------------------------------

TEST(ModuleRegistry, CheckNamesAnUnknownModuleAndEachWrongParameterByItsPointer) {
  auto table = test::small_table();
  module_value params = value_of(module_value::type::object);
  params.fields.push_back({"boss_health", integer_value(0)});
  params.fields.push_back({"enrage_at", text_value("soon")});
  params.fields.push_back({"bos_name", text_value("Ra")});
  table.scenes[1].module = module_ref{"crypt_boss", params, "/scenes/1/module"};
  table.scenes[3].module = module_ref{"crypt_bos", value_of(module_value::type::object), "/scenes/3/module"};
  module_registry registry;
  ASSERT_TRUE(registry.add("crypt_boss", [](module_params& p) {
    (void)p.integer("boss_health", 1000, 1, 1'000'000);
    (void)p.number("enrage_at", 0.3, 0, 1);
    (void)p.text("boss_name", "Boss");
    return std::make_unique<game_module>();
  }));
  EXPECT_FALSE(registry.add("crypt_boss", [](module_params&) { return std::unique_ptr<game_module>(); }));
  auto problems = check_modules(table, registry);
  std::vector<std::string> got;
  for (const auto& d : problems) got.push_back(format_diagnostic("t.json", d));
  std::vector<std::string> want{
      "t.json:/scenes/1/module/bos_name: unknown parameter of this module",
      "t.json:/scenes/1/module/boss_health: must be in 1..1000000, got 0",
      "t.json:/scenes/1/module/enrage_at: must be a number, got \"soon\"",
      "t.json:/scenes/3/module/name: unknown module \"crypt_bos\" (known: crypt_boss)"};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace scenert

namespace scenert {
namespace {

TEST(GameModuleInAWorld, AMessageForALineThePlayerLeftIsRefusedAsStale) {
  test::manual_world mw;
  ASSERT_TRUE(mw.ask(world_request::enter(1, test::field_id)));
  const auto here = mw.where(1).line;
  auto answer = mw.ask(world_request::message(1, {here.scene, here.line, here.generation + 1}, 2001, "x"));
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.code(), world_errc::stale_line);
  auto nowhere = mw.ask(world_request::message(2, here, 2001, "x"));
  ASSERT_FALSE(nowhere);
  EXPECT_EQ(nowhere.code(), world_errc::stale_line);
  EXPECT_NE(nowhere.error().message.find("on no line"), std::string::npos) << nowhere.error().message;
  EXPECT_TRUE(mw.ask(world_request::message(1, here, 2001, "x")));
}

}  // namespace
}  // namespace scenert
