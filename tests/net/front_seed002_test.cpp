// Seed 002's sequences against the front, frame by frame: players log in, see their neighbours
// appear, move inside an area (the seed's grid), across one and out of view and back, chat and log
// off. What each connection reads is compared, id, order and every field, with what seed 002's
// GameRole would send in the same game; `seed_game` below is that expectation, one function per
// GameRole handler. Where scenert differs on purpose, the test says so at the one place it does:
// - a mover does not hear its own move back (without_own_echo);
// - scenert's own frames (ids from 1000 up) go besides, to clients that speak them (scenert_own);
// - where a player lands and its name are scenert's (the scene's entry cell, guest-N or its login;
//   the seed draws both at random): the expectation takes them from the player's 1 and 202;
// - a 202 lists its players in no promised order (text_of).
#include <scenert/net/client.hpp>
#include <scenert/net/front.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "front_fixture.hpp"

namespace scenert::net {
namespace {

using namespace test;

std::string text_of(const position& p) {
  std::ostringstream o;
  o << "P(" << p.x << ',' << p.y << ',' << p.z << ',' << p.v << " blood " << p.blood << ')';
  return o.str();
}

// One frame as the test compares it: its id and every field of its message, on one line. A 202's
// players are listed by pid: the seed's order is its lists' (areas last to first, arrivals within
// an area), which no client can rely on.
std::string text_of(const server_message& m) {
  std::ostringstream o;
  if (const auto* y = std::get_if<you_are>(&m)) {
    o << "1 SyncPid " << y->pid << " '" << y->name << "'";
  } else if (const auto* b = std::get_if<broadcast>(&m)) {
    o << "200 BroadCast Tp " << static_cast<int>(b->type) << " of " << b->pid << " '" << b->name
      << "' content '" << b->content << "' " << text_of(b->p) << " action " << b->action;
  } else if (const auto* l = std::get_if<left_view>(&m)) {
    o << "201 SyncPid " << l->pid << " '" << l->name << "'";
  } else if (const auto* v = std::get_if<players_in_view>(&m)) {
    auto ps = v->players;
    std::sort(ps.begin(), ps.end(), [](const auto& one, const auto& two) { return one.pid < two.pid; });
    o << "202 SyncPlayers";
    for (const auto& p : ps) o << " [" << p.pid << " '" << p.name << "' " << text_of(p.p) << ']';
  } else {
    o << static_cast<std::uint32_t>(id_of(m)) << " (scenert's own)";
  }
  return o.str();
}

// What one connection must read after a step: groups, in order. The frames inside a group are sent
// by one loop of the seed over one of its lists (its AOIWorld's grids, last to first, arrivals
// within a grid): their order among themselves is that list's, so a group is compared as a set.
using groups = std::vector<std::vector<std::string>>;
using expected = std::map<std::int32_t, groups>;  // by the receiving player

// Seed 002's game as far as the frames its GameRole sends: the roles in its AOIWorld and, for each
// handler, what every connection gets. The seed's grids (20x20 of 20 units over 0..400) are the
// table's areas here, and its 9 around a grid the table's eyesight.
class seed_game {
 public:
  explicit seed_game(const map_def& m) : map_(m) {}

  // GameRole::Init: AddPlayer first; then to itself 1 (id and name) and 202 built from
  // GetSrdPlayers, itself among them; then 200 Tp 2 with its place to everyone GetSrdPlayers
  // returns, itself included.
  expected init(std::int32_t pid, const std::string& name, const position& at) {
    roles_[pid] = {name, at};
    expected e;
    players_in_view view;
    for (std::int32_t q : around(pid)) view.players.push_back({q, roles_[q].at, roles_[q].name});
    e[pid].push_back({text_of(server_message{you_are{pid, name}})});
    e[pid].push_back({text_of(server_message{std::move(view)})});
    for (std::int32_t q : around(pid)) e[q].push_back({appeared(pid)});
    return e;
  }

  // GameRole::ProcMoveMsg: s1 = GetSrdPlayers before, s2 after. ViewAppear for each of s2 not in
  // s1 (200 Tp 2 of the other to the mover, of the mover to the other), then ViewLost for each of
  // s1 not in s2 (201 both ways), then 200 Tp 4 with the position asked to everyone in s2, the
  // mover included.
  expected move(std::int32_t pid, const position& to) {
    const auto s1 = around(pid);
    roles_[pid].at = to;
    const auto s2 = around(pid);
    expected e;
    groups& mine = e[pid];
    mine.emplace_back();
    for (std::int32_t q : s2)
      if (!contains(s1, q)) mine.back().push_back(appeared(q)), e[q].push_back({appeared(pid)});
    mine.emplace_back();
    for (std::int32_t q : s1)
      if (!contains(s2, q)) mine.back().push_back(left(q)), e[q].push_back({left(pid)});
    const std::string moved =
        text_of(server_message{broadcast{pid, broadcast_type::moved, roles_[pid].name, "", to, 0}});
    for (std::int32_t q : s2) e[q].push_back({moved});
    std::erase_if(mine, [](const auto& g) { return g.empty(); });
    return e;
  }

  // GameRole::ProcTalkMsg: 200 Tp 1 with the content to every role of the game, the talker too.
  expected talk(std::int32_t pid, const std::string& content) {
    expected e;
    const std::string said =
        text_of(server_message{broadcast{pid, broadcast_type::chat, roles_[pid].name, content, {}, 0}});
    for (const auto& [q, r] : roles_) e[q].push_back({said});
    return e;
  }

  // GameRole::Fini: 201 (CreateIDNameLogoff: its id and name) to everyone GetSrdPlayers returns,
  // then DelPlayer. Its own copy goes to a connection that is closing: nobody reads it.
  expected fini(std::int32_t pid) {
    expected e;
    for (std::int32_t q : around(pid))
      if (q != pid) e[q].push_back({left(pid)});
    roles_.erase(pid);
    return e;
  }

 private:
  struct role {
    std::string name;
    position at;
  };
  std::string appeared(std::int32_t q) {
    return text_of(
        server_message{broadcast{q, broadcast_type::appeared, roles_[q].name, "", roles_[q].at, 0}});
  }
  std::string left(std::int32_t q) { return text_of(server_message{left_view{q, roles_[q].name}}); }
  static bool contains(const std::vector<std::int32_t>& s, std::int32_t q) {
    return std::find(s.begin(), s.end(), q) != s.end();
  }
  // The area of a world position along one axis.
  std::int64_t area(float world, double origin, std::uint32_t area_cells) const {
    return static_cast<std::int64_t>(std::floor((world - origin) / map_.cell_size)) / area_cells;
  }
  // AOIWorld::GetSrdPlayers: the roles of the areas around this one's, itself included.
  std::vector<std::int32_t> around(std::int32_t pid) const {
    const position& me = roles_.at(pid).at;
    std::vector<std::int32_t> out;
    for (const auto& [q, r] : roles_)
      if (std::abs(area(r.at.x, map_.origin_x, map_.area_width) -
                   area(me.x, map_.origin_x, map_.area_width)) <= map_.eyesight_x &&
          std::abs(area(r.at.z, map_.origin_z, map_.area_height) -
                   area(me.z, map_.origin_z, map_.area_height)) <= map_.eyesight_y)
        out.push_back(q);
    return out;
  }

  map_def map_;
  std::map<std::int32_t, role> roles_;
};

// scenert does not echo a move to the client that asked for it (the seed does: ProcMoveMsg's last
// loop runs over s2, the mover in it). The client made that move; an echo reaching it after its
// next step would pull it back along its path. scenert sends a player its own 200 Tp 4 only for a
// move it refused or one the client did not ask for.
expected without_own_echo(expected e, std::int32_t mover) {
  for (auto& g : e[mover])
    std::erase_if(g, [&](const std::string& f) {
      return f.starts_with("200 BroadCast Tp 4 of " + std::to_string(mover) + " ");
    });
  std::erase_if(e[mover], [](const auto& g) { return g.empty(); });
  return e;
}

struct player {
  std::unique_ptr<client> c;
  std::int32_t pid = 0;
};

// scenert's own frames (ids from 1000 up: 1001 LoginOk, 1006 SceneInfo, 1009/1010 monsters, 1003
// answers) go, besides the seed's, to a client that speaks them; a seed 002 client never gets one.
bool scenert_own(const server_message& m) { return static_cast<std::uint32_t>(id_of(m)) >= 1000; }

// The next of the seed's frames `p` reads, scenert's own skipped; none when nothing came in time.
std::optional<server_message> next_seed_frame(player& p, bool speaks_scenert) {
  for (;;) {
    auto m = p.c->receive(patience);
    if (!m) {
      ADD_FAILURE() << "player " << p.pid << ": " << m.error().message;
      return std::nullopt;
    }
    if (!scenert_own(m.value())) return std::move(m).value();
    EXPECT_TRUE(speaks_scenert) << "player " << p.pid << ", a seed 002 client: " << text_of(m.value());
  }
}

// Reads what a step sent `p`: as many of the seed's frames as expected, compared group by group.
// A frame too many shows up at the start of the next step's (the last step is a chat to all).
void expect_frames(player& p, const groups& want, bool speaks_scenert) {
  std::size_t count = 0;
  for (const auto& g : want) count += g.size();
  std::vector<std::string> got;
  while (got.size() < count) {
    auto m = next_seed_frame(p, speaks_scenert);
    if (!m) return;
    got.push_back(text_of(*m));
  }
  auto at = got.begin();
  for (auto g : want) {
    std::vector<std::string> part(at, at + static_cast<std::ptrdiff_t>(g.size()));
    at += static_cast<std::ptrdiff_t>(g.size());
    std::sort(g.begin(), g.end());
    std::sort(part.begin(), part.end());
    EXPECT_EQ(part, g) << "player " << p.pid;
  }
}

class FrontSeed002 : public testing::TestWithParam<bool> {
 protected:
  bool logs_in() const { return GetParam(); }  // else a guest, as seed 002's clients are

  // A client that lands beside the others; returns its name (the seed's GameRole names its roles
  // itself; scenert names a guest guest-N) and its landing, from its 1 and its 202.
  player connect(const std::string& name, std::string& named, position& landing) {
    player p{s.connect(), 0};
    if (logs_in()) {
      EXPECT_TRUE(p.c->send(login{name, ""}));
    }
    const auto first = next_seed_frame(p, logs_in());
    const auto* me = first ? std::get_if<you_are>(&*first) : nullptr;
    EXPECT_NE(me, nullptr) << "the first of the seed's frames is 1";
    if (me != nullptr) p.pid = me->pid, named = me->name;
    const auto second = next_seed_frame(p, logs_in());
    const auto* view = second ? std::get_if<players_in_view>(&*second) : nullptr;
    EXPECT_NE(view, nullptr) << "the second of the seed's frames is 202";
    if (view != nullptr) landing = own_entry(*view, p.pid).p;
    return p;
  }

  // Logs a player in and checks every connection against GameRole::Init.
  player log_in(const std::string& name, std::map<std::int32_t, player*> others) {
    SCOPED_TRACE(name + " logs in");
    // The landing comes from scenert (the scene's entry cell; the seed picks a random spot): the 1 and
    // the 202 are read once to learn it, then compared in full with the seed's.
    std::string named;
    position landing;
    player p = connect(name, named, landing);
    if (!logs_in()) {
      EXPECT_EQ(named, "guest-" + std::to_string(p.pid));
    }
    auto e = game.init(p.pid, named, landing);
    e[p.pid].erase(e[p.pid].begin(), e[p.pid].begin() + 2);  // the 1 and the 202 already read
    others[p.pid] = &p;
    check(e, others, "its login: GameRole::Init");
    return p;
  }

  // Every connection reads what the step sent it, and only that.
  void check(const expected& e, const std::map<std::int32_t, player*>& on, const std::string& step) {
    SCOPED_TRACE(step);
    for (const auto& [pid, g] : e) EXPECT_TRUE(on.contains(pid)) << "frames for player " << pid << ", not on";
    for (const auto& [pid, p] : on) {
      auto it = e.find(pid);
      expect_frames(*p, it == e.end() ? groups{} : it->second, logs_in());
    }
  }

  server s{front_options{.resume = std::chrono::milliseconds{0}}};  // a close is a logoff
  seed_game game{s.table.maps.front()};
};

TEST_P(FrontSeed002, EveryFrameOfLoginMoveChatAndLogoffIsTheSeeds) {
  // The town's map: 32x32 cells of 1 world unit, areas of 8x8, the 9-grid; the entry at (16,16), area (2,2).
  player a = log_in("ann", {});  // alone: its 202 holds itself only
  player b = log_in("bob", {{a.pid, &a}});
  const std::map<std::int32_t, player*> ab{{a.pid, &a}, {b.pid, &b}};

  // Inside its area (another cell of area (2,2)): 200 Tp 4 to the one who sees it.
  const position a_to{18.25F, 1, 17.75F, 90, 0};
  ASSERT_TRUE(a.c->send(move_to{a_to}));
  check(without_own_echo(game.move(a.pid, a_to), a.pid), ab, "a move inside an area");

  // Across an area, into (1,2), still in view of (2,2): nobody appears or leaves, only 200 Tp 4.
  const position b_near{15.5F, 0, 16.5F, 0, 0};
  ASSERT_TRUE(b.c->send(move_to{b_near}));
  check(without_own_echo(game.move(b.pid, b_near), b.pid), ab, "a move across an area, in view");

  // Out of view, into (0,0): 201 both ways.
  const position b_far{5.5F, 0, 5.5F, 0, 0};
  ASSERT_TRUE(b.c->send(move_to{b_far}));
  check(without_own_echo(game.move(b.pid, b_far), b.pid), ab, "a move out of view");

  // A third lands: its 202 holds those around the entry, not the one far off.
  player c = log_in("cat", ab);
  const std::map<std::int32_t, player*> abc{{a.pid, &a}, {b.pid, &b}, {c.pid, &c}};

  // From (2,2) to (0,1): the third comes to see the far one and stops seeing the first, in the
  // seed's order: 200 Tp 2 both ways first, then 201 both ways, then the move to those who see it.
  const position c_aside{5.5F, 0, 12.5F, 0, 0};
  ASSERT_TRUE(c.c->send(move_to{c_aside}));
  check(without_own_echo(game.move(c.pid, c_aside), c.pid), abc, "a move that gains one and loses one");

  // The far one back to (2,2): it sees the first again and loses the third.
  const position b_back{17.5F, 0, 17.5F, 0, 0};
  ASSERT_TRUE(b.c->send(move_to{b_back}));
  check(without_own_echo(game.move(b.pid, b_back), b.pid), abc, "back into view");

  // The third back too: two players appear to it at once.
  const position c_back{17.25F, 0, 16.25F, 45, 0};
  ASSERT_TRUE(c.c->send(move_to{c_back}));
  check(without_own_echo(game.move(c.pid, c_back), c.pid), abc, "two appear at once");

  // World chat: 200 Tp 1 to everyone, the talker too.
  ASSERT_TRUE(c.c->send(talk{"hello seed"}));
  check(game.talk(c.pid, "hello seed"), abc, "world chat");

  // A logoff: 201 with its id and name to those who saw it.
  a.c->close();
  const std::map<std::int32_t, player*> bc{{b.pid, &b}, {c.pid, &c}};
  check(game.fini(a.pid), bc, "a logoff");

  // A last chat: nothing else came after the logoff's frames.
  ASSERT_TRUE(b.c->send(talk{"bye"}));
  check(game.talk(b.pid, "bye"), bc, "the last chat");
}

INSTANTIATE_TEST_SUITE_P(Clients, FrontSeed002, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& i) {
                           return i.param ? std::string("LoggedIn") : std::string("Guests");
                         });

}  // namespace
}  // namespace scenert::net
