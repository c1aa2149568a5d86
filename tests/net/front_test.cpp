// End to end over real loopback sockets: a world on a real pool, the front on a free port, and the
// project's own client. Every wait is bounded; nothing here sleeps for a fixed time.
#include <scenert/net/client.hpp>
#include <scenert/net/front.hpp>
#include <scenert/net/map_blocks.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "front_fixture.hpp"

namespace scenert::net {
namespace {

using namespace std::chrono_literals;
using namespace test;

TEST(Front, TwoGuestsSeeEachOtherMoveChatAndLeave) {
  server s;
  auto a = s.connect();
  auto b = s.connect();
  ASSERT_TRUE(a && b);
  players_in_view va, vb;
  const auto pa = land(*a, &va);
  const auto pb = land(*b, &vb);
  // Whoever landed second saw the first in its 202; the first saw the second appear.
  const auto seen_by_a = others(va, pa), seen_by_b = others(vb, pb);
  const bool a_first = seen_by_b.size() == 1;
  client& first = a_first ? *a : *b;
  client& second = a_first ? *b : *a;
  const auto p1 = a_first ? pa : pb, p2 = a_first ? pb : pa;
  const auto& seen_by_second = a_first ? seen_by_b : seen_by_a;
  ASSERT_EQ(seen_by_second.size(), 1U);
  EXPECT_EQ(seen_by_second[0].pid, p1);
  // Both stand on the entry point: the first hears the second appear there, where its 202 put the first.
  auto appeared =
      wait_for<broadcast>(first, [&](const broadcast& m) { return is(m, p2, broadcast_type::appeared); });
  EXPECT_EQ(appeared.p, seen_by_second[0].p);

  // A move inside the view: the first hears 200 Tp 4 with the position the second asked for.
  ASSERT_TRUE(second.send(move_to{{18.25F, 1, 18.75F, 90, 0}}));
  auto moved =
      wait_for<broadcast>(first, [&](const broadcast& m) { return is(m, p2, broadcast_type::moved); });
  EXPECT_EQ(moved.p, (position{18.25F, 1, 18.75F, 90, 0}));

  // Out of each other's view (area 0,0 against 2,2 on the 9-grid): 201 both ways.
  ASSERT_TRUE(second.send(move_to{{5.5F, 0, 5.5F, 0, 0}}));
  wait_for<left_view>(first, [&](const left_view& l) { return l.pid == p2; });
  wait_for<left_view>(second, [&](const left_view& l) { return l.pid == p1; });
  // And back: 200 Tp 2 both ways, then the move.
  ASSERT_TRUE(second.send(move_to{{17.5F, 0, 17.5F, 0, 0}}));
  wait_for<broadcast>(second, [&](const broadcast& m) { return is(m, p1, broadcast_type::appeared); });
  wait_for<broadcast>(first, [&](const broadcast& m) { return is(m, p2, broadcast_type::appeared); });
  wait_for<broadcast>(first, [&](const broadcast& m) { return is(m, p2, broadcast_type::moved); });

  // World chat reaches everyone online, the sender too.
  ASSERT_TRUE(second.send(talk{"hello there"}));
  for (client* c : {&first, &second}) {
    auto chat = wait_for<broadcast>(*c, [&](const broadcast& m) { return is(m, p2, broadcast_type::chat); });
    EXPECT_EQ(chat.content, "hello there");
  }

  // A heartbeat comes back with the client's clock; from now on the client speaks scenert's ids
  // too, and gets the geometry of its line at once.
  ASSERT_TRUE(second.send(heartbeat{123456, 0}));
  EXPECT_EQ(wait_for<scene_info>(second).scene, test::town_id);
  EXPECT_EQ(wait_for<heartbeat_echo>(second).client_ns, 123456U);

  // The server decides where a player is: a blocked cell and a cell off the map are refused, and
  // the client gets its position back.
  ASSERT_TRUE(second.send(move_to{{1.5F, 0, 1.5F, 0, 0}}));
  EXPECT_EQ(wait_for<move_refused>(second).reason, "blocked");
  auto back =
      wait_for<broadcast>(second, [&](const broadcast& m) { return is(m, p2, broadcast_type::moved); });
  EXPECT_EQ(back.p.x, 17.5F);
  ASSERT_TRUE(second.send(move_to{{1e9F, 0, 3, 0, 0}}));
  EXPECT_EQ(wait_for<move_refused>(second).reason, "off the map");

  // Closing is a logoff: the viewer hears 201.
  second.close();
  wait_for<left_view>(first, [&](const left_view& l) { return l.pid == p2; });
}

// A client of seed 002's protocol never sees an id it does not know, refused moves included.
TEST(Front, ASeed002ClientGetsOnlySeed002Ids) {
  server s;
  auto c = s.connect();
  ASSERT_TRUE(c);
  land(*c);
  ASSERT_TRUE(c->send(move_to{{1.5F, 0, 1.5F, 0, 0}}));  // blocked
  ASSERT_TRUE(c->send(talk{"hi"}));
  std::vector<message_id> seen;
  for (;;) {
    auto m = c->receive(patience);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    seen.push_back(id_of(m.value()));
    if (auto* b = std::get_if<broadcast>(&m.value()); b && b->type == broadcast_type::chat) break;
  }
  for (message_id id : seen) EXPECT_LT(static_cast<std::uint32_t>(id), 1000U) << name_of(id);
  EXPECT_GE(seen.size(), 2U);  // the position given back, then the chat
  EXPECT_EQ(s.door->stats().moves_refused, 1U);
}

// Positions are world units: the table's cell size and origin, and its max_speed.
TEST(Front, MovesAreInWorldUnitsAndNoFasterThanTheScenesMaxSpeed) {
  server s({}, [](scene_table& t) {
    t.maps.front().cell_size = 2;
    t.maps.front().origin_x = -32;
    t.maps.front().origin_z = -32;  // the 32-cell map spans -32..32 in X and Z
    for (auto& d : t.scenes)
      if (d.id == test::town_id) d.max_speed = 10;
  });
  auto watcher = s.connect();
  land(*watcher);
  auto c = s.connect();
  const auto me = land(*c);
  ASSERT_TRUE(c->send(heartbeat{1, 0}));
  auto info = wait_for<scene_info>(*c);
  EXPECT_EQ(info.cell_size, 2.0F);
  EXPECT_EQ(info.origin_x, -32.0F);
  // A short step (within a cell of where it stands) is taken, and the watcher sees it in world units.
  auto watched =
      wait_for<broadcast>(*watcher, [&](const broadcast& b) { return is(b, me, broadcast_type::appeared); });
  const float x = watched.p.x + 1.5F, z = watched.p.z + 0.5F;
  ASSERT_TRUE(c->send(move_to{{x, 0, z, 0, 0}}));
  auto moved =
      wait_for<broadcast>(*watcher, [&](const broadcast& b) { return is(b, me, broadcast_type::moved); });
  EXPECT_EQ(moved.p.x, x);
  EXPECT_EQ(moved.p.z, z);
  // Across the map at once: too fast; the client gets its position back.
  ASSERT_TRUE(c->send(move_to{{30, 0, 30, 0, 0}}));
  EXPECT_EQ(wait_for<move_refused>(*c).reason, "too fast");
  auto back = wait_for<broadcast>(*c, [&](const broadcast& b) { return is(b, me, broadcast_type::moved); });
  EXPECT_EQ(back.p.x, x);
  // Past the map's edge in world units (cell -4 in X).
  ASSERT_TRUE(c->send(move_to{{-40, 0, 0, 0, 0}}));
  EXPECT_EQ(wait_for<move_refused>(*c).reason, "off the map");
}

// A world port that answers a transfer node_unavailable without doing it, and keeps the line each
// login was placed on: the test plays a cluster's node that placed the player for a hand-over the
// node it stood on gave up, and let it go again.
struct giving_up_port final : world_port {
  world* w = nullptr;
  std::mutex m;
  std::map<player_id, line_handle> placed_on;
  void submit(const world_request& q, world_reply reply) override {
    if (q.what == world_request::kind::transfer) {
      if (reply) reply(fail(world_errc::node_unavailable, "node b did not take it within 1000 ms"));
      return;
    }
    w->submit(q, [this, p = q.player, reply = std::move(reply)](world_result r) mutable {
      if (r) {
        std::lock_guard lock(m);
        placed_on[p] = r->line;
      }
      if (reply) reply(std::move(r));
    });
  }
  line_handle line_of(player_id p) {
    std::lock_guard lock(m);
    return placed_on.at(p);
  }
};

// Such a player never left its line: once the other line let it go, the world says where it stands
// (on_stands_on), and its client hears its own line's view again and walks on it. Said while the
// other line holds the player in the events' eyes, it changes nothing.
TEST(Front, APlayerTheWorldSaysStandsOnTheLineItNeverLeftHearsThatLineAgain) {
  giving_up_port port;
  server s({}, nullptr, [&](world& w) -> world_port& {
    port.w = &w;
    return port;
  });
  auto a = s.connect();
  auto b = s.connect();
  ASSERT_TRUE(a && b);
  const auto pa = land(*a);
  const auto pb = land(*b);
  auto events = s.door->on_line_events();
  auto stands_on = s.door->on_stands_on();
  const line_handle home = port.line_of(static_cast<player_id>(pa));
  const line_handle other{s.door->landing_scene(), 9, 1};  // a line of another node
  const line_event in[] = {{line_event::kind::entered, static_cast<player_id>(pa), {2, 2}, false}};
  const line_event out[] = {{line_event::kind::left, static_cast<player_id>(pa), {}, false}};
  auto sees_b = [&](const players_in_view& v) {
    return std::any_of(v.players.begin(), v.players.end(),
                       [&](const player_in_view& p) { return p.pid == pb; });
  };
  ASSERT_TRUE(a->send(request{1, request_kind::transfer, test::field_id, 0, 0, 0}));
  EXPECT_EQ(wait_for<answer>(*a, [&](const answer& r) { return r.request_id == 1; }).code,
            "node_unavailable");
  events(other, 0, in);
  wait_for<left_view>(*a, [&](const left_view& l) { return l.pid == pb; });  // one view at a time
  stands_on(static_cast<player_id>(pa), home, 0);  // too early: the other line holds it still
  ASSERT_TRUE(a->send(request{2, request_kind::transfer, test::field_id, 0, 0, 0}));
  bool heard_view = false;  // frames up to the second answer, which comes after the early word
  for (;;) {
    auto m = a->receive(patience);
    ASSERT_TRUE(m) << m.error().message;
    if (auto* v = std::get_if<players_in_view>(&m.value()); v && sees_b(*v)) heard_view = true;
    if (auto* r = std::get_if<answer>(&m.value()); r && r->request_id == 2) break;
  }
  EXPECT_FALSE(heard_view) << "shown its old line while the events had it on another";
  events(other, 0, out);
  stands_on(static_cast<player_id>(pa), home, 0);
  EXPECT_EQ(others(wait_for<players_in_view>(*a, sees_b), pa).size(), 1U);
  const position to{19.25F, 1, 18.75F, 90, 0};
  ASSERT_TRUE(a->send(move_to{to}));
  EXPECT_EQ(wait_for<broadcast>(*b, [&](const broadcast& m) { return is(m, pa, broadcast_type::moved); }).p,
            to);
}

// A player that stands on a line and then is heard entering another line and leaving it (a node
// handed it over, then carried out an older placement of it there and let it go at once: each line's
// events are true, their order across nodes is not) stands on its line again: its client hears that
// line's view again, not nothing.
TEST(Front, APlayerHeardLeavingALineItEnteredLateStandsOnItsLineAgain) {
  server s;
  auto a = s.connect();
  auto c = s.connect();
  ASSERT_TRUE(a && c);
  const auto pa = land(*a);
  const auto pc = land(*c);
  auto sees_c = [&](const players_in_view& v) {
    return std::any_of(v.players.begin(), v.players.end(),
                       [&](const player_in_view& p) { return p.pid == pc; });
  };
  ASSERT_TRUE(c->send(request{1, request_kind::transfer, test::field_id, 0, 0, 0}));
  EXPECT_EQ(wait_for<answer>(*c, [](const answer& r) { return r.request_id == 1; }).code, "ok");
  ASSERT_TRUE(a->send(request{1, request_kind::transfer, test::field_id, 0, 0, 0}));
  EXPECT_EQ(wait_for<answer>(*a, [](const answer& r) { return r.request_id == 1; }).code, "ok");
  (void)wait_for<players_in_view>(*a, sees_c);  // a stands on the field with c

  auto events = s.door->on_line_events();
  const line_handle late{s.door->landing_scene(), 9, 1};  // a town line of another node
  const line_event in[] = {{line_event::kind::entered, static_cast<player_id>(pa), {2, 2}, false}};
  const line_event out[] = {{line_event::kind::left, static_cast<player_id>(pa), {}, false}};
  events(late, 0, in);
  (void)wait_for<left_view>(*a, [&](const left_view& l) { return l.pid == pc; });  // one view at a time
  events(late, 0, out);
  const auto again = wait_for<players_in_view>(*a, sees_c);
  (void)own_entry(again, pa);
}

// A move the client sent for its old line but that reached the server after the client's new line
// (here: sent after the new view, as a client that had not read it yet would) is not carried onto
// the new line from the old ground: speed counts from where the new line put the player.
TEST(Front, AMoveSentForTheOldLineIsRefusedOnTheNewOne) {
  server s({}, [](scene_table& t) {
    t.maps.push_back(map_def{2, "wide", 64, 64, 8, 8, 1, 1, {}});
    for (auto& d : t.scenes) {
      if (d.id == test::field_id) d.map = 2;  // its entry, the map's centre, is far from the town's
      if (d.id == test::town_id || d.id == test::field_id) d.max_speed = 4;
    }
  });
  auto c = s.connect();
  const auto me = land(*c);  // on the town's entry cell (16,16)
  ASSERT_TRUE(c->send(move_to{{17.2F, 0, 16.5F, 0, 0}}));
  ASSERT_TRUE(c->send(request{1, request_kind::transfer, test::field_id, 0, 0, 0}));
  const auto landed = view_after_landing(*c, me);          // its own 200 Tp 2 says the same
  EXPECT_EQ(own_entry(landed, me).p.x, 32.5F);             // the field's entry cell (32,32)
  ASSERT_TRUE(c->send(move_to{{17.6F, 0, 16.5F, 0, 0}}));  // a step on the town's ground
  EXPECT_EQ(wait_for<move_refused>(*c).reason, "too fast");
  auto back = wait_for<broadcast>(*c, [&](const broadcast& b) { return is(b, me, broadcast_type::moved); });
  EXPECT_EQ(back.p.x, 32.5F);
  EXPECT_EQ(back.p.z, 32.5F);
}

// A walk (1011) names the view it was made on: one made on the town after the server sent the field's
// view is dropped and counted, whatever its distance; one on the field's view is a move.
TEST(Front, AWalkOnAViewTheServerReplacedIsDropped) {
  server s({}, [](scene_table& t) {
    t.maps.push_back(map_def{2, "wide", 64, 64, 8, 8, 1, 1, {}});
    for (auto& d : t.scenes)
      if (d.id == test::field_id) d.map = 2;
  });
  auto c = s.connect();
  const auto me = land(*c);  // view 1: the town
  ASSERT_TRUE(c->send(request{1, request_kind::transfer, test::field_id, 0, 0, 0}));
  (void)wait_for<players_in_view>(*c);                     // view 2: the field, entry (32,32)
  ASSERT_TRUE(c->send(walk{{32.5F, 0, 33.5F, 0, 0}, 1}));  // made on the town: dropped
  ASSERT_TRUE(c->send(walk{{33.5F, 0, 32.5F, 0, 0}, 2}));  // made on the field: taken
  ASSERT_TRUE(c->send(move_to{{1e9F, 0, 0, 0, 0}}));       // refused: its position comes back
  auto back = wait_for<broadcast>(*c, [&](const broadcast& b) { return is(b, me, broadcast_type::moved); });
  EXPECT_EQ(back.p.x, 33.5F);
  EXPECT_EQ(back.p.z, 32.5F);
  EXPECT_EQ(s.door->stats().moves_stale, 1U);
  EXPECT_EQ(s.door->stats().moves_refused, 1U);
}

TEST(Front, RequestsAreAnsweredByCodeName) {
  server s;
  auto c = s.connect();
  ASSERT_TRUE(c);
  land(*c);
  ASSERT_TRUE(c->send(request{7, request_kind::transfer, test::field_id, 0, 0, 0}));
  // Its first scenert frame brings the town's geometry, then the field's (the same map: no blocks).
  auto town = wait_for<scene_info>(*c, [](const scene_info& i) { return i.scene == test::town_id; });
  auto blocks = decode_blocks(32, 32, town.block_rows, town.blocked);
  ASSERT_TRUE(blocks.has_value()) << blocks.error().message;
  EXPECT_EQ(static_cast<unsigned char>((*blocks)[0]) & 1U, 1U);  // cell (0,0) is blocked
  auto ok = wait_for<answer>(*c, [](const answer& a) { return a.request_id == 7; });
  EXPECT_EQ(ok.code, "ok");
  EXPECT_EQ(ok.scene, test::field_id);
  auto info = wait_for<scene_info>(*c, [](const scene_info& i) { return i.scene == test::field_id; });
  EXPECT_EQ(info.width, 32);
  EXPECT_EQ(info.kind, "field");
  EXPECT_TRUE(info.blocks_omitted);
  EXPECT_EQ(info.map_digest, town.map_digest);
  ASSERT_TRUE(c->send(request{8, request_kind::transfer, 999, 0, 0, 0}));
  EXPECT_EQ(wait_for<answer>(*c, [](const answer& a) { return a.request_id == 8; }).code, "unknown_scene");
}

TEST(Front, BadFramesCloseTheirConnectionNeverTheServer) {
  server s(front_options{.bad_frames_allowed = 3});
  {  // unknown ids (below 2000: from there up they are game modules'): the fourth closes the connection
    auto c = s.connect();
    land(*c);
    std::string junk;
    append_header(junk, 1999, 0);
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(c->send_bytes(junk));
    EXPECT_EQ(wait_for<goodbye>(*c).reason, "bad_frames: the last: frame id 1999 is not a client message");
  }
  {  // a header over the cap: closed at once
    auto c = s.connect();
    land(*c);
    std::string big;
    append_header(big, 2, 10'000'000);
    ASSERT_TRUE(c->send_bytes(big));
    EXPECT_NE(wait_for<goodbye>(*c).reason.find("over the limit"), std::string::npos);
  }
  // A well-behaved client is still served.
  auto good = s.connect();
  land(*good);
  ASSERT_TRUE(good->send(heartbeat{1, 0}));
  EXPECT_EQ(wait_for<heartbeat_echo>(*good).client_ns, 1U);
  EXPECT_GE(s.door->stats().bad_frames, 4U);
  EXPECT_EQ(s.door->stats().oversize, 1U);
  EXPECT_EQ(closed(s, close_reason::bad_frames), 1U);
  EXPECT_EQ(closed(s, close_reason::oversize), 1U);
  // Frames are counted by message id, both ways.
  const auto st = s.door->stats();
  const auto at = [](message_id id) { return static_cast<std::size_t>(index_of(id)); };
  EXPECT_EQ(st.in_by_id[at(message_id::heartbeat)].frames, 1U);
  EXPECT_EQ(st.out_by_id[at(message_id::heartbeat_echo)].frames, 1U);
  EXPECT_EQ(st.out_by_id[at(message_id::sync_pid)].frames, 3U);
  EXPECT_EQ(st.out_by_id[at(message_id::goodbye)].frames, 2U);
  EXPECT_EQ(st.out_by_id[at(message_id::sync_players)].frames, 3U);
  EXPECT_GE(st.out_by_id[at(message_id::sync_players)].bytes, 3 * header_size);
}

TEST(Front, SilentAndHalfSentConnectionsAreClosedWithTheirReason) {
  server s(front_options{.idle_timeout = 600ms, .read_timeout = 300ms});
  auto idle = s.connect();
  land(*idle);
  auto half = s.connect();
  land(*half);
  ASSERT_TRUE(half->send_bytes(std::string("\x04\x00\x00", 3)));  // part of a header, then nothing
  EXPECT_EQ(wait_for<goodbye>(*half).reason, "half_frame: after 300 ms");
  EXPECT_EQ(wait_for<goodbye>(*idle).reason, "idle: after 600 ms");
  EXPECT_EQ(closed(s, close_reason::half_frame) + closed(s, close_reason::idle), 2U);
  // Heartbeats keep a quiet client alive.
  auto beating = s.connect();
  land(*beating);
  const auto until = std::chrono::steady_clock::now() + 1200ms;
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_TRUE(beating->send(heartbeat{1, 0}));
    EXPECT_EQ(wait_for<heartbeat_echo>(*beating).client_ns, 1U);
    std::this_thread::sleep_for(100ms);  // a client's pace between heartbeats
  }
  EXPECT_EQ(closed(s, close_reason::half_frame) + closed(s, close_reason::idle), 2U);
}

// The half-frame timeout is about one frame: a client whose every write ends inside its next frame
// keeps finishing frames, and stays.
TEST(Front, FramesSplitAcrossWritesAreNotHalfFrameTimeouts) {
  server s(front_options{.read_timeout = 300ms});
  auto c = s.connect();
  land(*c);
  std::string beat;
  append_frame(beat, client_message{heartbeat{5, 0}});
  ASSERT_TRUE(c->send_bytes(beat.substr(0, 5)));
  const auto until = std::chrono::steady_clock::now() + 1s;
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_TRUE(c->send_bytes(beat.substr(5) + beat.substr(0, 5)));  // the rest of one, half the next
    EXPECT_EQ(wait_for<heartbeat_echo>(*c).client_ns, 5U);
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(closed(s, close_reason::half_frame), 0U);
}

TEST(Front, AFloodOfChatIsCutToTheRateNotTheConnection) {
  server s(front_options{.chat = {2, 5}});
  auto c = s.connect();
  land(*c);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(c->send(talk{"spam " + std::to_string(i)}));
  ASSERT_TRUE(c->send(heartbeat{9, 0}));
  int chats = 0;
  for (;;) {  // the server handles frames in order: every chat that passed comes before the echo
    auto m = c->receive(patience);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    if (std::holds_alternative<heartbeat_echo>(m.value())) break;
    chats += std::holds_alternative<broadcast>(m.value());
  }
  EXPECT_GE(chats, 5);
  EXPECT_LE(chats, 7);  // the burst, and what refilled while the flood was read
  EXPECT_GE(s.door->stats().rate_limited, 93U);
}

// One that keeps flooding past the rates is cut, with its reason counted; the others stay.
TEST(Front, AClientThatKeepsFloodingIsCut) {
  server s(front_options{.chat = {2, 5}, .flooding = {1, 50}});
  auto calm = s.connect();
  land(*calm);
  auto c = s.connect();
  land(*c);
  for (int i = 0; i < 200; ++i)
    if (!c->send(talk{"spam"})) break;  // cut while it floods: its writes may fail
  EXPECT_EQ(wait_for<goodbye>(*c).reason.substr(0, 9), "flooding:");
  EXPECT_EQ(closed(s, close_reason::flooding), 1U);
  ASSERT_TRUE(calm->send(heartbeat{3, 0}));
  EXPECT_EQ(wait_for<heartbeat_echo>(*calm).client_ns, 3U);
}

// A client that never reads is cut once its frames pile up, and its socket is closed for good.
TEST(Front, ANeverReadingClientIsCutAndClosed) {
  server s(front_options{.max_outbound_bytes = 64 * 1024, .chat = {1e6, 1e6}});
  auto quiet = s.connect();
  land(*quiet);
  auto loud = s.connect();
  land(*loud);
  const std::string text(2000, 'x');
  for (int i = 0; i < 3000 && closed(s, close_reason::slow_reader) == 0; ++i)
    if (!loud->send(talk{text})) break;  // the loud one reads nothing either: it may be cut first
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (closed(s, close_reason::slow_reader) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_GE(closed(s, close_reason::slow_reader), 1U);
  // What the kernel still held arrives, then the end of the stream.
  for (;;) {
    auto m = quiet->receive(patience);
    if (!m) {
      EXPECT_EQ(m.code(), client_errc::closed) << m.error().message;
      break;
    }
  }
  // The flood ends (what the server still reads of it would reach a newcomer too), then a
  // well-behaved client is served.
  loud->close();
  const auto gone = std::chrono::steady_clock::now() + patience;
  while (s.door->stats().connections > 0 && std::chrono::steady_clock::now() < gone)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(s.door->stats().connections, 0U);
  auto good = s.connect();
  land(*good);
}

TEST(Front, OverMaxConnectionsANewClientGetsAGoodbyeNotAHang) {
  server s(front_options{.max_connections = 1});
  auto first = s.connect();
  land(*first);
  auto second = s.connect();
  EXPECT_NE(wait_for<goodbye>(*second).reason.find("server full"), std::string::npos);
  EXPECT_EQ(s.door->stats().refused, 1U);
  EXPECT_EQ(closed(s, close_reason::server_full), 1U);
}

// The fault hook the bots' view check is tested with: viewers never hear the hidden player's moves,
// yet it still appears and vanishes, and everyone else's moves go out as usual.
TEST(Front, AFaultHidesOnePlayersMovesFromItsViewersOnly) {
  front_options fo;
  fo.fault_hide_moves_of = 2;  // guests get pids in landing order: the second to land
  server s(fo);
  auto watcher = s.connect();
  ASSERT_TRUE(watcher);
  const auto pw = land(*watcher);
  auto hidden = s.connect();
  ASSERT_TRUE(hidden);
  const auto ph = land(*hidden);
  auto shown = s.connect();
  ASSERT_TRUE(shown);
  const auto ps = land(*shown);
  ASSERT_EQ(pw, 1);
  ASSERT_EQ(ph, 2);

  // Out of the watcher's view and back (area 0,0 against the landing's 2,2): 201, then 200 Tp 2 at
  // the new cell, and no 200 Tp 4, which would come right behind it.
  ASSERT_TRUE(hidden->send(move_to{{5.5F, 0, 5.5F, 0, 0}}));
  wait_for<left_view>(*watcher, [&](const left_view& l) { return l.pid == ph; });
  ASSERT_TRUE(hidden->send(move_to{{17.5F, 0, 17.5F, 0, 0}}));
  auto back =
      wait_for<broadcast>(*watcher, [&](const broadcast& b) { return is(b, ph, broadcast_type::appeared); });
  EXPECT_EQ(back.p.x, 17.5F);
  // Another player's move, sent after: whatever the watcher reads before it includes anything the
  // hidden player's move made.
  ASSERT_TRUE(shown->send(move_to{{18.5F, 0, 18.5F, 0, 0}}));
  for (;;) {
    auto m = watcher->receive(patience);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    auto* b = std::get_if<broadcast>(&m.value());
    if (b == nullptr) continue;
    EXPECT_FALSE(is(*b, ph, broadcast_type::moved)) << "the watcher heard the hidden player move";
    if (is(*b, ps, broadcast_type::moved)) break;
  }
  // The hidden player is a viewer like any other: it hears the others' moves.
  wait_for<broadcast>(*hidden, [&](const broadcast& b) { return is(b, ps, broadcast_type::moved); });
}

}  // namespace
}  // namespace scenert::net
