// Logins, resumes and WebSocket clients, end to end over real loopback sockets.
#include <gtest/gtest.h>

#include <thread>
#include <variant>

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
      if (view) *view = *v;
    }
    if (auto* i = std::get_if<scene_info>(&m.value())) {
      seen_info = true;
      if (info) *info = *i;
    }
  }
  return ok;
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
  ASSERT_EQ(view.players.size(), 1U);
  EXPECT_EQ(view.players[0].pid, w);
  // The watcher never heard it leave: the next thing about it is its move.
  ASSERT_TRUE(again->send(move_to{{18.5F, 0, 18.5F, 0, 0}}));
  for (;;) {
    auto m = watcher->receive(patience);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    if (auto* l = std::get_if<left_view>(&m.value())) {
      EXPECT_NE(l->pid, first.pid);
    }
    if (auto* b = std::get_if<broadcast>(&m.value()); b && b->pid == first.pid) {
      EXPECT_EQ(b->type, broadcast_type::moved);
      break;
    }
  }
  EXPECT_EQ(s.door->stats().resumed, 1U);
  EXPECT_EQ(s.door->stats().detached, 0U);
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

}  // namespace
}  // namespace scenert::net
