// Game modules on the wire: a client's messages from 2000 up reach its line's module in order, the
// module's frames and entities reach the clients, and every message the module or the front does not
// take comes back as 1012 with its reason while the connection and the line go on.
#include <algorithm>
#include <string>

#include "front_fixture.hpp"

namespace scenert::net::test {
namespace {

// Echoes 2001 reversed as 2101 to its sender and to the line as 2102, refuses 2002 as malformed,
// puts a totem (kind 7, state 1, health 90) next to each player who enters.
struct echo_module final : game_module {
  void on_player_enter(module_context& c, player_id p) override {
    const auto at = c.where(p).value_or(grid::cell_point{});
    (void)c.spawn({{at.x + 1, at.y}, {7, 1, 90}, false});
  }
  message_answer on_message(module_context& c, player_id p, module_opcode op, std::string_view b) override {
    if (op == 2002) return fail(module_errc::malformed, "2002 takes no bytes");
    if (op != 2001) return game_module::on_message(c, p, op, b);
    c.send(p, 2101, std::string(b.rbegin(), b.rend()));
    c.send_to_line(2102, b);
    return {};
  }
};

// The echo module that says what a click sends: on a totem (kind 7), 2001 within 3 cells; on kind 9,
// 2005 at any distance.
struct clicky_module final : game_module {
  echo_module echo;
  std::vector<scenert::click_action> click_actions() const override { return {{7, 2001, 3}, {9, 2005, 0}}; }
  void on_player_enter(module_context& c, player_id p) override { echo.on_player_enter(c, p); }
  message_answer on_message(module_context& c, player_id p, module_opcode op, std::string_view b) override {
    return echo.on_message(c, p, op, b);
  }
};

struct with_module {
  module_registry registry;
  std::unique_ptr<server> s;
  explicit with_module(front_options fo = {}, std::string name = "echo") {
    (void)registry.add("echo", [](module_params&) { return std::make_unique<echo_module>(); });
    (void)registry.add("clicky", [](module_params&) { return std::make_unique<clicky_module>(); });
    s = std::make_unique<server>(
        fo,
        [&name](scene_table& t) {
          for (auto& d : t.scenes)
            if (d.id == town_id) {
              module_value params;
              params.kind = module_value::type::object;
              d.module = module_ref{name, params, "/scenes/0/module"};
            }
        },
        nullptr, &registry);
  }
};

// Logs in by name (a scenert client) and waits for its view.
std::int32_t log_in(client& c, const std::string& name) {
  EXPECT_TRUE(c.send(login{name, ""}));
  const auto me = wait_for<login_ok>(c);
  view_after_landing(c, me.pid);
  return me.pid;
}

module_error refusal_of(client& c, std::uint32_t opcode) {
  return wait_for<module_error>(c, [&](const module_error& e) { return e.opcode == opcode; });
}

TEST(FrontModules, MessagesReachTheModuleAndItsFramesAndEntitiesReachTheClients) {
  with_module m;
  auto c = m.s->connect();
  ASSERT_TRUE(c);
  log_in(*c, "ann");
  // The totem the module put beside it, with its look.
  const auto totem = wait_for<monsters_seen>(*c, [](const monsters_seen& v) {
    return std::any_of(v.monsters.begin(), v.monsters.end(),
                       [](const monster_spot& x) { return x.kind == 7; });
  });
  const auto& spot = *std::find_if(totem.monsters.begin(), totem.monsters.end(),
                                   [](const monster_spot& x) { return x.kind == 7; });
  EXPECT_EQ(spot.state, 1U);
  EXPECT_EQ(spot.health, 90);
  for (const char* word : {"abc", "hello", "xyz"}) ASSERT_TRUE(c->send(module_message{2001, word}));
  for (const char* want : {"cba", "olleh", "zyx"}) {
    const auto back =
        wait_for<module_frame_out>(*c, [](const module_frame_out& f) { return f.opcode == 2101; });
    EXPECT_EQ(back.bytes, want) << "a player's messages reach the module in the order sent";
  }
}

TEST(FrontModules, WhatNobodyTakesComesBackAsAnErrorAndDisturbsNothingElse) {
  front_options fo;
  fo.module_message_bytes = 64;
  with_module m(fo);
  auto c = m.s->connect();
  ASSERT_TRUE(c);
  log_in(*c, "ann");
  auto other = m.s->connect();  // after: a connection that waits unheard becomes a guest
  ASSERT_TRUE(other);
  log_in(*other, "bob");
  ASSERT_TRUE(c->send(module_message{2002, "x"}));
  const auto malformed = refusal_of(*c, 2002);
  EXPECT_EQ(malformed.code, "malformed");
  EXPECT_EQ(malformed.reason, "2002 takes no bytes");
  ASSERT_TRUE(c->send(module_message{4000, ""}));
  EXPECT_EQ(refusal_of(*c, 4000).code, "unknown_opcode");
  ASSERT_TRUE(c->send(module_message{2001, std::string(65, 'x')}));
  const auto big = refusal_of(*c, 2001);
  EXPECT_EQ(big.code, "too_large");
  EXPECT_NE(big.reason.find("65 bytes"), std::string::npos) << big.reason;
  // A frame scenert does not know below 2000 is a bad frame, not a module's.
  std::string junk;
  append_header(junk, 1999, 4);
  ASSERT_TRUE(c->send_bytes(junk + "junk"));
  // The connection, the line and the other player go on.
  ASSERT_TRUE(c->send(module_message{2001, "ok"}));
  EXPECT_EQ(wait_for<module_frame_out>(*c, [](const module_frame_out& f) { return f.opcode == 2101; }).bytes,
            "ko");
  EXPECT_EQ(
      wait_for<module_frame_out>(*other, [](const module_frame_out& f) { return f.opcode == 2102; }).bytes,
      "ok");
  EXPECT_EQ(m.s->w->snapshot()->scenes.front().quarantined, 0U);
}

TEST(FrontModules, ModuleMessagesAreRateLimitedWithAnError) {
  front_options fo;
  fo.module_messages = {1, 2};
  with_module m(fo);
  auto c = m.s->connect();
  ASSERT_TRUE(c);
  log_in(*c, "ann");
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(c->send(module_message{2001, "a"}));
  EXPECT_EQ(refusal_of(*c, 2001).code, "rate_limited");
}

// Logs in by name, reads to its view of the town (202), asks the module for an echo and reads to it
// (2101): the click actions (1015) heard on the way, every one of them.
std::vector<click_actions> click_actions_to_an_echo(client& c) {
  std::vector<click_actions> told;
  auto read_until = [&](const std::function<bool(const server_message&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (std::chrono::steady_clock::now() < deadline) {
      auto m = c.receive(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
      if (!m) break;
      if (auto* a = std::get_if<click_actions>(&*m)) told.push_back(*a);
      if (done(*m)) return;
    }
    ADD_FAILURE() << "timed out";
  };
  EXPECT_TRUE(c.send(login{"ann", ""}));
  read_until([](const server_message& m) { return std::holds_alternative<players_in_view>(m); });
  EXPECT_TRUE(c.send(module_message{2001, "hi"}));
  // The line's entry batch (its view, the totem, a 1015) comes before the echo of a later message.
  read_until([](const server_message& m) {
    const auto* f = std::get_if<module_frame_out>(&m);
    return f != nullptr && f->opcode == 2101;
  });
  return told;
}

TEST(FrontModules, EnteringALineWhoseModuleDeclaresClickActionsTellsThemOnce) {
  with_module m({}, "clicky");
  auto c = m.s->connect();
  ASSERT_TRUE(c);
  const auto told = click_actions_to_an_echo(*c);
  ASSERT_EQ(told.size(), 1U);
  EXPECT_EQ(told[0].scene, town_id);
  const std::vector<click_action> want{{7, 2001, 3}, {9, 2005, 0}};
  EXPECT_EQ(told[0].actions, want);
}

TEST(FrontModules, ALineWhoseModuleDeclaresNoClickActionsTellsNone) {
  with_module m;
  auto c = m.s->connect();
  ASSERT_TRUE(c);
  EXPECT_TRUE(click_actions_to_an_echo(*c).empty());
}

TEST(FrontModules, ALineWithoutAModuleSaysSo) {
  server s;
  auto c = s.connect();
  ASSERT_TRUE(c);
  log_in(*c, "ann");
  ASSERT_TRUE(c->send(module_message{2001, "anyone?"}));
  const auto e = refusal_of(*c, 2001);
  EXPECT_EQ(e.code, "no_module");
  EXPECT_NE(e.reason.find("runs no game module"), std::string::npos) << e.reason;
}

}  // namespace
}  // namespace scenert::net::test
