// Logins, resumes and WebSocket clients, end to end over real loopback sockets.
#include <gtest/gtest.h>

#include <algorithm>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <variant>

#include "../eventually.hpp"
#include "front_fixture.hpp"

namespace scenert::net {
namespace {

using namespace std::chrono_literals;
using namespace test;

// Logs in by name; returns what the server said (login_ok), after the landing's view (202) and the
// line's geometry, which come in either order.
login_ok log_in(client& c, const std::string& name, const std::string& token = "",
                players_in_view* view = nullptr, scene_info* info = nullptr) {
  EXPECT_TRUE(c.send(login{name, token}));
  auto ok = wait_for<login_ok>(c);
  EXPECT_EQ(wait_for<you_are>(c).pid, ok.pid);
  bool seen_view = false, seen_info = false;
  while (!seen_view || !seen_info) {
    auto m = c.receive(patience);
    if (!m) {
      ADD_FAILURE() << "logging in " << name << ": " << m.error().message;
      break;
    }
    if (auto* v = std::get_if<players_in_view>(&m.value())) {
      seen_view = true;
      (void)others(*v, ok.pid);  // it names the player itself
      if (view) *view = *v;
    }
    if (auto* i = std::get_if<scene_info>(&m.value())) {
      seen_info = true;
      if (info) *info = *i;
    }
  }
  return ok;
}

// The watcher's next word of player `pid` is a move: it never heard it leave.
void expect_moved_never_left(client& watcher, std::int32_t pid) {
  for (;;) {
    auto m = watcher.receive(patience);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    if (auto* l = std::get_if<left_view>(&m.value())) {
      EXPECT_NE(l->pid, pid);
    }
    if (auto* b = std::get_if<broadcast>(&m.value()); b && b->pid == pid) {
      EXPECT_EQ(b->type, broadcast_type::moved);
      return;
    }
  }
}

TEST(FrontLogin, AnExplicitLoginGetsItsNameATokenAndTheGeometry) {
  server s;
  auto c = s.connect();
  scene_info info;
  const auto ok = log_in(*c, "alice", "", nullptr, &info);
  EXPECT_EQ(ok.name, "alice");
  EXPECT_FALSE(ok.resumed);
  EXPECT_EQ(ok.resume_token.size(), 32U);  // 128 random bits in hex
  EXPECT_EQ(info.scene, town_id);
  auto other = s.connect();
  EXPECT_NE(log_in(*other, "bob").resume_token, ok.resume_token);
  EXPECT_EQ(s.door->stats().logins, 2U);
  EXPECT_EQ(s.door->stats().guests, 0U);
}

TEST(FrontLogin, ANameWithAControlCharacterIsRefusedWithItsReason) {
  server s;
  auto c = s.connect();
  ASSERT_TRUE(c->send(login{"eve\x01", ""}));
  EXPECT_EQ(wait_for<goodbye>(*c).reason, "bad_login: name holds the control character 0x01");
  auto long_name = s.connect();
  ASSERT_TRUE(long_name->send(login{std::string(33, 'n'), ""}));
  EXPECT_EQ(wait_for<goodbye>(*long_name).reason, "bad_login: name of 33 bytes: at most 32 allowed");
  EXPECT_EQ(closed(s, close_reason::bad_login), 2U);
}

// Inside resume_ms a dropped player stays in the world (its viewers see no 201) and a login with its
// token gets it back on its line with a fresh 202.
TEST(FrontLogin, AResumeInsideResumeMsGetsTheSamePlayerAndAFreshView) {
  server s(front_options{.resume = 5s});
  auto watcher = s.connect();
  const auto w = land(*watcher);
  auto c = s.connect();
  const auto first = log_in(*c, "alice");
  wait_for<broadcast>(*watcher,
                      [&](const broadcast& b) { return is(b, first.pid, broadcast_type::appeared); });
  c->close();
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (s.door->stats().detached == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(s.door->stats().detached, 1U);

  auto again = s.connect();
  players_in_view view;
  const auto back = log_in(*again, "ignored", first.resume_token, &view);
  EXPECT_TRUE(back.resumed);
  EXPECT_EQ(back.pid, first.pid);
  EXPECT_EQ(back.name, "alice");
  const auto seen = others(view, back.pid);
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0].pid, w);
  // The watcher never heard it leave: the next thing about it is its move.
  ASSERT_TRUE(again->send(move_to{{18.5F, 0, 18.5F, 0, 0}}));
  expect_moved_never_left(*watcher, first.pid);
  EXPECT_EQ(s.door->stats().resumed, 1U);
  EXPECT_EQ(s.door->stats().detached, 0U);
}

// A player placed again while its client was away (in a cluster: its node died, its gateway placed it
// on another node's line) resumes where it was placed, not where it left: its scene (1006) names the
// new place, whether the placement came before the resume or after it.
TEST(FrontLogin, APlayerPlacedAgainWhileAwayResumesWhereItWasPlaced) {
  server s(front_options{.resume = 5s});
  auto c = s.connect();
  scene_info left_from;
  const auto first = log_in(*c, "alice", "", nullptr, &left_from);
  ASSERT_EQ(left_from.scene, town_id);
  c->close();
  ASSERT_TRUE(scenert::test::eventually([&] { return s.door->stats().detached == 1; }));
  // The world lets it go, as a dead node's lines do, and the front places it again in the field.
  ASSERT_TRUE(s.w->submit(world_request::leave(static_cast<player_id>(first.pid))).get());
  s.door->place_again(static_cast<player_id>(first.pid), field_id, std::nullopt);
  auto again = s.connect();
  const auto back = log_in(*again, "ignored", first.resume_token);
  EXPECT_TRUE(back.resumed);
  const auto now = wait_for<scene_info>(*again, [](const scene_info& i) { return i.scene == field_id; });
  EXPECT_EQ(now.scene, field_id);
}

// A named player beside a watcher; its connection drops, and the watcher sees it leave.
login_ok drop_and_watch_it_leave(server& s) {
  auto watcher = s.connect();
  land(*watcher);
  auto c = s.connect();
  const auto first = log_in(*c, "alice");
  c->close();
  wait_for<left_view>(*watcher, [&](const left_view& l) { return l.pid == first.pid; });
  return first;
}

// After resume_ms the player leaves (its viewers get 201) and its token is void.
TEST(FrontLogin, AfterResumeMsThePlayerLeavesAndItsTokenIsVoid) {
  server s(front_options{.resume = 300ms});
  const auto first = drop_and_watch_it_leave(s);
  auto again = s.connect();
  const auto fresh = log_in(*again, "alice2", first.resume_token);
  EXPECT_FALSE(fresh.resumed);
  EXPECT_NE(fresh.pid, first.pid);
  EXPECT_EQ(s.door->stats().resumed, 0U);
}

// A player logged in again elsewhere goes on there; the first connection is told why and closed.
TEST(FrontLogin, ALoginWithTheTokenOnAnotherConnectionReplacesTheFirst) {
  server s(front_options{.resume = 5s});
  auto c = s.connect();
  const auto first = log_in(*c, "alice");
  auto second = s.connect();
  const auto back = log_in(*second, "", first.resume_token);
  EXPECT_TRUE(back.resumed);
  EXPECT_EQ(back.pid, first.pid);
  EXPECT_EQ(wait_for<goodbye>(*c).reason, "replaced: logged in from another connection");
  ASSERT_TRUE(second->send(heartbeat{3, 0}));
  EXPECT_EQ(wait_for<heartbeat_echo>(*second).client_ns, 3U);
  EXPECT_EQ(closed(s, close_reason::replaced), 1U);
}

// Without resume_ms a dropped player leaves at once, whatever its token.
TEST(FrontLogin, WithoutResumeMsADroppedPlayerLeavesAtOnce) {
  server s;
  drop_and_watch_it_leave(s);
  EXPECT_EQ(s.door->stats().detached, 0U);
}

// Two fronts over one world, as two gateways of a cluster over its nodes; their port shares the
// resume tokens between them (as the cluster's sessions bucket does) and claims where the world has
// the player.
struct two_fronts {
  struct port final : world_port {
    two_fronts& both;
    front* self = nullptr;
    explicit port(two_fronts& b) : both(b) {}
    void submit(const world_request& q, world_reply reply) override { both.w->submit(q, std::move(reply)); }
    void remember(std::string_view token, player_id p, std::string_view name,
                  unique_function<void()> shared) override {
      {
        std::lock_guard lock(both.m);
        both.tokens[std::string(token)] = {p, std::string(name), self};
      }
      if (shared) shared();
    }
    void forget(std::string_view token) override {
      std::lock_guard lock(both.m);
      both.tokens.erase(std::string(token));
    }
    void claim(std::string_view token, claim_reply reply) override {
      std::unique_lock lock(both.m);
      auto t = both.tokens.find(std::string(token));
      if (t == both.tokens.end()) return reply(fail(world_errc::not_in_scene, "resume token unknown"));
      const auto [p, name, was] = t->second;
      t->second.holder = self;
      lock.unlock();
      if (was != self) was->let_go(p);
      const location at = both.w->locate(p).get();
      reply(claimed_player{p, name, at.line, at.space, at.phase});
    }
  };
  struct token_record {
    player_id player;
    std::string name;
    front* holder;
  };

  scene_table table = small_table();
  std::unique_ptr<processor_pool> pool;
  std::unique_ptr<front> a, b;
  std::shared_ptr<world> w;
  port to_a{*this}, to_b{*this};
  std::mutex m;
  std::map<std::string, token_record> tokens;

  two_fronts() {
    pool_options po;
    po.workers = 2;
    po.log = [](log_level, std::string_view) {};
    pool = std::make_unique<processor_pool>(std::move(po));
    EXPECT_TRUE(pool->start().has_value());
    a = front::create(table, front_options{.resume = 5s});
    b = front::create(table, front_options{.resume = 5s, .first_player_id = 1'000'000});
    to_a.self = a.get(), to_b.self = b.get();
    world_options wo;
    wo.on_line_events = [ea = a->on_line_events(), eb = b->on_line_events()](line_handle l, phase_id p,
                                                                             std::span<const line_event> e) {
      ea(l, p, e);
      eb(l, p, e);
    };
    w = world::create(table, *pool, std::move(wo));
    w->start();
    EXPECT_TRUE(a->start(to_a).has_value());
    EXPECT_TRUE(b->start(to_b).has_value());
  }
  ~two_fronts() {
    a->stop();
    b->stop();
    w->shutdown().wait_for(patience);
    (void)pool->stop();
  }
  static std::unique_ptr<client> connect(front& f) {
    auto c = client::connect("127.0.0.1", f.tcp_port());
    EXPECT_TRUE(c.has_value()) << c.error().message;
    return c ? std::move(c).value() : nullptr;
  }
};

using scenert::test::eventually;

// A client resumes on another front with its token: that front claims the player (same id, same
// place, a fresh 202), the first lets it go (its connection closed as replaced, or its wait for a
// resume over) and nobody saw the player leave.
TEST(FrontLogin, ATokenThatAnotherFrontHoldsIsClaimedThereAndTheFirstLetsItGo) {
  two_fronts f;
  auto watcher = two_fronts::connect(*f.b);
  const auto w = land(*watcher);
  auto on_a = two_fronts::connect(*f.a);
  const auto first = log_in(*on_a, "alice");
  wait_for<broadcast>(*watcher,
                      [&](const broadcast& m) { return is(m, first.pid, broadcast_type::appeared); });

  auto on_b = two_fronts::connect(*f.b);
  players_in_view view;
  const auto back = log_in(*on_b, "ignored", first.resume_token, &view);
  EXPECT_TRUE(back.resumed);
  EXPECT_EQ(back.pid, first.pid);
  EXPECT_EQ(back.name, "alice");
  EXPECT_EQ(back.resume_token, first.resume_token);
  const auto seen = others(view, back.pid);
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0].pid, w);
  EXPECT_EQ(wait_for<goodbye>(*on_a).reason, "replaced: resumed on another gateway");
  // It walks through its new front; the watcher hears the move and never a 201 for it.
  ASSERT_TRUE(on_b->send(move_to{{18.5F, 0, 18.5F, 0, 0}}));
  expect_moved_never_left(*watcher, first.pid);
  EXPECT_EQ(f.b->stats().claimed, 1U);
  EXPECT_EQ(f.b->stats().resumed, 1U);
  EXPECT_EQ(f.a->stats().closed_by[static_cast<std::size_t>(close_reason::replaced)], 1U);

  // Dropped from b, it waits there for its resume; claimed back by a, b waits no more.
  on_b->close();
  ASSERT_TRUE(eventually([&] { return f.b->stats().detached == 1; }));
  auto again = two_fronts::connect(*f.a);
  EXPECT_EQ(log_in(*again, "", first.resume_token).pid, first.pid);
  EXPECT_TRUE(eventually([&] { return f.b->stats().detached == 0; }));
  EXPECT_EQ(f.a->stats().claimed, 1U);

  // A token no front gave out logs in afresh.
  auto stranger = two_fronts::connect(*f.b);
  const auto fresh = log_in(*stranger, "carol", std::string(32, 'f'));
  EXPECT_FALSE(fresh.resumed);
  EXPECT_NE(fresh.pid, first.pid);
}

// WebSocket: the same frames, one per binary message; TCP and WebSocket clients see each other.
TEST(FrontWebSocket, WebSocketAndTcpClientsSeeEachOtherMoveChatAndLeave) {
  server s;
  auto web = s.connect_ws();
  ASSERT_TRUE(web);
  const auto pw = land(*web);
  auto tcp = s.connect();
  const auto pt = land(*tcp);
  wait_for<broadcast>(*web, [&](const broadcast& b) { return is(b, pt, broadcast_type::appeared); });
  ASSERT_TRUE(web->send(move_to{{18.25F, 0, 18.75F, 0, 0}}));
  auto moved =
      wait_for<broadcast>(*tcp, [&](const broadcast& b) { return is(b, pw, broadcast_type::moved); });
  EXPECT_EQ(moved.p.x, 18.25F);
  ASSERT_TRUE(tcp->send(talk{"hi web"}));
  EXPECT_EQ(
      wait_for<broadcast>(*web, [&](const broadcast& b) { return is(b, pt, broadcast_type::chat); }).content,
      "hi web");
  web->close();
  wait_for<left_view>(*tcp, [&](const left_view& l) { return l.pid == pw; });
}

// A WebSocket client that asks for the "scenert" subprotocol is never a guest: it logs in, or is
// closed at login_timeout.
TEST(FrontWebSocket, AScenertWebSocketClientLogsInOrIsClosedInTime) {
  server s(front_options{.login_timeout = 400ms});
  auto c = s.connect_ws("scenert");
  ASSERT_TRUE(c);
  const auto ok = log_in(*c, "carol");
  EXPECT_EQ(ok.name, "carol");
  auto silent = s.connect_ws("scenert");
  EXPECT_EQ(wait_for<goodbye>(*silent).reason, "login_timeout: after 400 ms");
  EXPECT_EQ(s.door->stats().guests, 0U);
}

// A WebSocket message must hold whole frames, and one over the size limit closes the connection.
TEST(FrontWebSocket, AMessageWithHalfAFrameOrOverTheLimitClosesItsConnection) {
  server s(front_options{.max_payload = 1024});
  auto half = s.connect_ws();
  land(*half);
  ASSERT_TRUE(half->send_bytes(std::string("\x04\x00\x00", 3)));
  EXPECT_EQ(wait_for<goodbye>(*half).reason, "bad_frames: a WebSocket message must hold whole frames");
  auto big = s.connect_ws();
  land(*big);
  std::string frame;
  append_frame(frame, client_message{talk{std::string(4096, 'x')}});
  ASSERT_TRUE(big->send_bytes(frame));
  EXPECT_EQ(wait_for<goodbye>(*big).reason,
            "oversize: a frame of 4099 bytes is over the limit of 1024 bytes");
  auto good = s.connect_ws();
  land(*good);
}

// A world port that counts the players taken off and the tokens voided, passing everything on.
struct counting_port final : world_port {
  world* w = nullptr;
  std::atomic<int> leaves{0}, forgotten{0};
  void submit(const world_request& q, world_reply reply) override {
    if (q.what == world_request::kind::leave) ++leaves;
    w->submit(q, std::move(reply));
  }
  void forget(std::string_view) override { ++forgotten; }
};

// A front that hands its players off as it stops (a cluster's gateway in a rolling restart) leaves
// them in the world with their tokens good, a dropped one waiting for its resume too, and tells its
// clients to log in again; one that does not takes them off.
TEST(FrontLogin, AFrontHandingOffAsItStopsLeavesItsPlayersInTheWorld) {
  for (const bool hand_off : {true, false}) {
    SCOPED_TRACE(hand_off ? "hand off" : "take off");
    counting_port port;
    server s({.resume = 5s, .hand_off_on_stop = hand_off}, nullptr, [&](world& w) -> world_port& {
      port.w = &w;
      return port;
    });
    auto c = s.connect();
    ASSERT_TRUE(c);
    (void)log_in(*c, "alice");
    auto dropped = s.connect();  // after alice's login: not a guest meanwhile
    ASSERT_TRUE(dropped);
    (void)log_in(*dropped, "bob");
    dropped->close();  // bob waits for his resume
    for (int i = 0; i < 200 && s.door->stats().detached == 0; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_EQ(s.door->stats().detached, 1U);
    std::thread stopping([&] { s.door->stop(); });
    const auto bye = wait_for<goodbye>(*c);
    stopping.join();
    EXPECT_EQ(bye.reason.find("shutting_down"), 0U) << bye.reason;
    EXPECT_EQ(bye.reason.find("resume token") != std::string::npos, hand_off) << bye.reason;
    EXPECT_EQ(port.leaves.load(), hand_off ? 0 : 2);
    EXPECT_EQ(port.forgotten.load(), hand_off ? 0 : 2);
  }
}

// A world port that loses the answers to transfers, as a gateway whose node's answer timed out: the
// world moves the player all the same.
struct losing_port final : world_port {
  world* w = nullptr;
  void submit(const world_request& q, world_reply reply) override {
    if (q.what != world_request::kind::transfer) return w->submit(q, std::move(reply));
    w->submit(q, {});
    if (reply) reply(fail(world_errc::node_unavailable, "node x did not answer within 5000 ms"));
  }
};

// A client whose answer was lost stands elsewhere than it was told: once its view is sent again (a
// gateway's link came back), it hears the scene it stands on (1006) as well.
TEST(FrontLogin, AClientWhoseAnswerWasLostHearsWhereItStandsWithItsViewSentAgain) {
  losing_port port;
  server s({}, nullptr, [&](world& w) -> world_port& {
    port.w = &w;
    return port;
  });
  auto c = s.connect();
  ASSERT_TRUE(c);
  const auto me = log_in(*c, "alice");
  ASSERT_TRUE(c->send(request{1, request_kind::transfer, test::field_id, 0, 0, 0}));
  EXPECT_EQ(wait_for<answer>(*c, [](const answer& a) { return a.request_id == 1; }).code, "node_unavailable");
  // The field's view comes from its events; the client was told nothing of the field yet.
  (void)view_after_landing(*c, me.pid);
  s.door->resync_views();
  EXPECT_EQ(wait_for<scene_info>(*c).scene, test::field_id);
  (void)wait_for<players_in_view>(*c);
}

// An answer can reach the front before its line's events (on a gateway they come on other
// subjects): a view sent again meanwhile (a gateway's link came back) keeps the place the client was
// told, and the events, once they come, give it its new view. The client never hears the scene it
// left as where it stands. (bob stays in the town: its view is not the field's.)
TEST(FrontLogin, AnAnswerAheadOfItsLinesEventsIsNotUndoneByAViewSentAgain) {
  server s;
  auto stays = s.connect();
  ASSERT_TRUE(stays);
  (void)log_in(*stays, "bob");
  auto c = s.connect();
  ASSERT_TRUE(c);
  players_in_view town;
  const auto me = log_in(*c, "alice", "", &town);
  ASSERT_EQ(others(town, me.pid).size(), 1U);  // bob, in the town with her
  s.events->hold();
  ASSERT_TRUE(c->send(request{1, request_kind::transfer, test::field_id, 0, 0, 0}));
  EXPECT_EQ(wait_for<answer>(*c, [](const answer& a) { return a.request_id == 1; }).code, "ok");
  EXPECT_EQ(wait_for<scene_info>(*c).scene, test::field_id);
  s.door->resync_views();
  // A heartbeat after it: its echo comes once the view was sent again. Nothing up to it may name the
  // town (a 1006 of it, or its 202 with bob in it).
  ASSERT_TRUE(c->send(heartbeat{7, 0}));
  for (bool echoed = false; !echoed;) {
    auto m = c->receive(std::chrono::duration_cast<std::chrono::milliseconds>(patience));
    ASSERT_TRUE(m) << m.error().message;
    if (const auto* info = std::get_if<scene_info>(&m.value())) {
      EXPECT_EQ(info->scene, test::field_id);
    }
    EXPECT_FALSE(std::holds_alternative<players_in_view>(m.value())) << "the town's view, sent again";
    echoed = std::holds_alternative<heartbeat_echo>(m.value());
  }
  s.events->release();
  const auto field = wait_for<players_in_view>(*c);
  EXPECT_TRUE(others(field, me.pid).empty());
  EXPECT_EQ(s.door->stats().closed_by[static_cast<std::size_t>(close_reason::no_place)], 0U);
}

// A world port that counts the entries the world answered, after their answers went to the front.
struct entry_watch_port final : world_port {
  world* w = nullptr;
  std::atomic<int> entries_answered{0};
  void submit(const world_request& q, world_reply reply) override {
    if (q.what != world_request::kind::enter) return w->submit(q, std::move(reply));
    w->submit(q, [this, reply = std::move(reply)](world_result r) mutable {
      if (reply) reply(std::move(r));
      ++entries_answered;
    });
  }
};

// A player placed again (its node died) that stands somewhere already (a request of its own, taken
// over by a live node, placed it first) keeps its place and its client: the world's already_in_scene
// is no reason to close it.
TEST(FrontLogin, APlayerPlacedAgainThatStandsSomewhereAlreadyKeepsItsPlace) {
  entry_watch_port port;
  server s({}, nullptr, [&](world& w) -> world_port& {
    port.w = &w;
    return port;
  });
  auto c = s.connect();
  ASSERT_TRUE(c);
  const auto me = log_in(*c, "alice");
  const int before = port.entries_answered.load();
  s.door->place_again(static_cast<player_id>(me.pid), test::field_id, std::nullopt);
  ASSERT_TRUE(eventually([&] { return port.entries_answered.load() > before; }));
  // Its answer went to the connection's I/O thread before this heartbeat's frame arrived there.
  ASSERT_TRUE(c->send(heartbeat{9, 0}));
  for (bool echoed = false; !echoed;) {
    auto m = c->receive(std::chrono::duration_cast<std::chrono::milliseconds>(patience));
    ASSERT_TRUE(m) << m.error().message;
    ASSERT_FALSE(std::holds_alternative<goodbye>(m.value())) << std::get<goodbye>(m.value()).reason;
    echoed = std::holds_alternative<heartbeat_echo>(m.value());
  }
  EXPECT_EQ(closed(s, close_reason::no_place), 0U);
}

// A world port whose scene has no place at first for one player's entries (a cluster whose dead
// node's lines have not opened again elsewhere yet): `full` of them are answered line_full.
struct full_at_first_port final : world_port {
  world* w = nullptr;
  std::atomic<player_id> who{0};
  std::atomic<int> full{0};
  void submit(const world_request& q, world_reply reply) override {
    if (q.what == world_request::kind::enter && q.player == who.load() && full.fetch_sub(1) > 0) {
      if (reply) reply(fail(world_errc::line_full, "scene 1: all 3 lines are full"));
      return;
    }
    w->submit(q, std::move(reply));
  }
};

// A player placed again whose scene has no place yet is asked for again until it has one (within
// place_again_within): its client is placed, not closed no_place; past that bound it is closed.
TEST(FrontLogin, APlayerPlacedAgainWaitsForAPlaceWithinItsBound) {
  for (const bool in_time : {true, false}) {
    SCOPED_TRACE(in_time ? "a place within the bound" : "none within it");
    full_at_first_port port;
    server s({.place_again_within = in_time ? 5'000ms : 300ms}, nullptr, [&](world& w) -> world_port& {
      port.w = &w;
      return port;
    });
    auto c = s.connect();
    ASSERT_TRUE(c);
    const auto me = log_in(*c, "alice");
    const auto pid = static_cast<player_id>(me.pid);
    ASSERT_TRUE(s.w->submit(world_request::leave(pid)).get());  // its line is gone, as a dead node's
    port.who = pid;
    port.full = in_time ? 3 : 1'000;  // three refusals take 750 ms of retries
    s.door->place_again(pid, test::town_id, std::nullopt);
    if (in_time) {
      EXPECT_EQ(wait_for<scene_info>(*c).scene, test::town_id);
      (void)own_entry(wait_for<players_in_view>(*c), me.pid);
      EXPECT_EQ(closed(s, close_reason::no_place), 0U);
    } else {
      EXPECT_EQ(wait_for<goodbye>(*c).reason.rfind("no_place", 0), 0U);
    }
  }
}

// The same for a player placed again while its client is away: its scene is asked for again until
// it has a place, and its client, resuming, hears that place.
TEST(FrontLogin, APlayerPlacedAgainWhileAwayWaitsForAPlaceWithinItsBound) {
  full_at_first_port port;
  server s({.resume = 5s, .place_again_within = 5'000ms}, nullptr, [&](world& w) -> world_port& {
    port.w = &w;
    return port;
  });
  auto c = s.connect();
  ASSERT_TRUE(c);
  const auto first = log_in(*c, "alice");
  const auto pid = static_cast<player_id>(first.pid);
  c->close();
  ASSERT_TRUE(eventually([&] { return s.door->stats().detached == 1; }));
  ASSERT_TRUE(s.w->submit(world_request::leave(pid)).get());  // its line is gone, as a dead node's
  port.who = pid;
  port.full = 3;
  s.door->place_again(pid, test::field_id, std::nullopt);
  ASSERT_TRUE(eventually([&] { return port.full.load() < 0; }));  // refused three times, then let through
  auto again = s.connect();
  ASSERT_TRUE(again);
  scene_info now;  // the resume's own 1006, or the placement's when the resume came first
  EXPECT_TRUE(log_in(*again, "ignored", first.resume_token, nullptr, &now).resumed);
  if (now.scene != test::field_id)
    now = wait_for<scene_info>(*again, [](const scene_info& i) { return i.scene == test::field_id; });
  EXPECT_EQ(now.scene, test::field_id);
}

}  // namespace
}  // namespace scenert::net
