// The lines' events: each line's mirror says who must hear what; each event's frame is encoded once
// for all its viewers, and a player's moves before its last one in a drain are not sent at all
// (its viewers get the latest position once), so a burst of ticks costs one frame per mover.
#include "front_impl.hpp"

#include <algorithm>

namespace scenert::net {

namespace {

struct fan_out {
  front_shard& f;
  view_key key;
  view_mirror& mirror;
  const map_def& units;
  bool quiet_moves = false;  // this event's move is superseded by a later one in the drain
  std::string frame;
  player_id frame_who = 0;
  int frame_kind = -1;

  const std::string& encoded(int kind, player_id who) {
    if (kind == frame_kind && who == frame_who) return frame;
    frame.clear();
    frame_kind = kind, frame_who = who;
    const auto pid = static_cast<std::int32_t>(who);
    if (kind == 201) {
      append_frame(frame, server_message{left_view{pid}});
    } else if (kind == 1010) {
      append_frame(frame, server_message{monsters_gone{{static_cast<std::uint32_t>(who)}}});
    } else if (kind == 1009) {
      append_frame(frame, server_message{monsters_seen{{spot_of(who)}, false}});
    } else {
      const auto at = mirror.where(who);
      const auto card = f.hub.book.card_of(who);
      append_frame(
          frame, server_message{broadcast{pid, kind == 2 ? broadcast_type::appeared : broadcast_type::moved,
                                          card ? card->name : std::string{}, "",
                                          at ? front_shard::position_of(card, *at, units) : position{}, 0}});
    }
    return frame;
  }
  // A player hears a view's events only while it stands in that view: one that went on to another
  // line is done with this one, though this line may not have said so yet.
  void to(player_id viewer, int kind, player_id who) {
    auto it = f.sessions.find(viewer);
    if (it != f.sessions.end() && f.stands_in(viewer, key)) f.push(it->second, encoded(kind, who));
  }
  void appeared(player_id viewer, player_id who) { to(viewer, 2, who); }
  void moved(player_id viewer, player_id who) {
    if (!quiet_moves && !hidden(who)) to(viewer, 4, who);
  }
  // front_options::fault_hide_moves_of: a fault injected by tests.
  bool hidden(player_id who) const {
    return f.opt.fault_hide_moves_of != 0 && who == static_cast<player_id>(f.opt.fault_hide_moves_of);
  }
  void vanished(player_id viewer, player_id who) { to(viewer, 201, who); }
  // Monsters are scenert's own frames: a client of seed 002's protocol never hears of them.
  void monster_at(player_id viewer, player_id m) { to_scenert(viewer, 1009, m); }
  void monster_gone(player_id viewer, player_id m) { to_scenert(viewer, 1010, m); }
  void to_scenert(player_id viewer, int kind, player_id m) {
    auto it = f.sessions.find(viewer);
    if (it != f.sessions.end() && it->second->speaks_scenert && f.stands_in(viewer, key))
      f.push(it->second, encoded(kind, m));
  }
  monster_spot spot_of(player_id m) const {
    const position p = front_shard::centre(mirror.where_monster(m).value_or(grid::cell_point{}), units);
    return {static_cast<std::uint32_t>(m), p.x, p.z};
  }
  // Every monster an entering player sees, replacing what its client had.
  void monster_view(player_id p, std::span<const player_id> all) {
    auto it = f.sessions.find(p);
    if (it == f.sessions.end() || !it->second->speaks_scenert) return;
    monsters_seen v{{}, true};
    v.monsters.reserve(all.size());
    for (player_id m : all) v.monsters.push_back(spot_of(m));
    f.send(*it->second, server_message{std::move(v)});
  }
  // An entering player's own 200 Tp 2, then its 202 with everyone it sees.
  void view(player_id p, std::span<const player_id> all) {
    auto it = f.sessions.find(p);
    if (it == f.sessions.end()) return;
    session& s = *it->second;
    const auto at = mirror.where(p);
    f.send(s, server_message{broadcast{static_cast<std::int32_t>(p), broadcast_type::appeared, s.name, "",
                                       at ? f.position_of(s, *at, units) : position{}, 0}});
    players_in_view v;
    v.players.reserve(all.size());
    for (player_id q : all) {
      const auto qa = mirror.where(q);
      const auto card = f.hub.book.card_of(q);
      v.players.push_back({static_cast<std::int32_t>(q),
                           qa ? front_shard::position_of(card, *qa, units) : position{},
                           card ? card->name : std::string{}});
    }
    f.send(s, server_message{std::move(v)});
    ++s.views;
  }
};

}  // namespace

void front_shard::drain_lines() {
  (void)feed->batches.drain([this](line_batch& b) { drained.push_back(std::move(b)); });
  mark_superseded_moves();
  std::size_t index = 0;  // of the drain's moves
  for (auto& b : drained) {
    const scene_def* def = def_of(b.line.scene);
    if (def == nullptr) continue;
    const view_key key = key_of(b.line, b.phase);
    auto [it, fresh] = mirrors.try_emplace(key, map_of(*def));
    fan_out out{*this, key, it->second, units_of(*def), false, {}, 0, -1};
    for (const auto& e : b.events) {
      out.frame_kind = -1;  // a new event: its frames are new
      if (e.monster) {      // seen by the players around it; never coalesced (one step per AI turn)
        (void)it->second.apply(e, out);
        continue;
      }
      out.quiet_moves = e.what == line_event::kind::moved && superseded[index++];
      if (e.what == line_event::kind::entered) entering(e.player, key);
      if (e.what == line_event::kind::left && stands_in(e.player, key)) forget_view(it->second, e.player);
      if (!it->second.apply(e, out)) continue;
      if (e.what == line_event::kind::moved && !out.quiet_moves) own_move(e.player, key, e.at, *def);
      if (e.what == line_event::kind::entered) line_of[e.player] = {b.line, b.phase};
      if (e.what == line_event::kind::left) {
        if (auto l = line_of.find(e.player); l != line_of.end() && l->second.key() == key) {
          line_of.erase(l);
          if (auto s = sessions.find(e.player); s != sessions.end() && s->second->unsure)
            stepping_back.push_back(e.player);
        } else if (auto was = left_behind.find(e.player);
                   was != left_behind.end() && was->second.key() == key) {
          left_behind.erase(was);  // the line it came from let it go: its journey ended
        }
      }
    }
  }
  drained.clear();
  for (player_id p : stepping_back) step_back(p);
  stepping_back.clear();
  flush();
}

// A player whose request failed as node_unavailable, standing on no line now, while the line it
// stood on before never said it left: a cluster's node placed it for a hand-over the other node gave
// up, and let it go again. It stands on its old line still: its client hears that line's scene and
// view again. (Only then: in a move that went well the old line's leaving may come a while after
// the new line's, and the player may have moved on since.)
void front_shard::step_back(player_id p) {
  auto b = left_behind.find(p);
  auto s = sessions.find(p);
  if (b == left_behind.end() || line_of.contains(p) || s == sessions.end() || !s->second->unsure) return;
  const standing_line back = b->second;
  left_behind.erase(b);
  auto m = mirrors.find(back.key());
  if (m == mirrors.end() || !m->second.where(p)) return;
  line_of[p] = back;
  correct_place(*s->second);
  send_view(*s->second, true);
}

// superseded[i]: the drain's i-th player move is followed by a later move of the same player.
void front_shard::mark_superseded_moves() {
  move_order.clear();
  for (const auto& b : drained)
    for (const auto& e : b.events)
      if (e.what == line_event::kind::moved && !e.monster)
        move_order.emplace_back(e.player, static_cast<std::uint32_t>(move_order.size()));
  superseded.assign(move_order.size(), false);
  std::sort(move_order.begin(), move_order.end());
  for (std::size_t i = 0; i + 1 < move_order.size(); ++i)
    if (move_order[i].first == move_order[i + 1].first) superseded[move_order[i].second] = true;
}

// A player hears its own moves only when it did not ask for them: no claim since it entered this
// view (a player placed again where it stood, after its node died). Its own walks it knows already.
void front_shard::own_move(player_id p, const view_key& key, grid::cell_point at, const scene_def& def) {
  auto it = sessions.find(p);
  if (it == sessions.end() || it->second->has_claim || !stands_in(p, key)) return;
  session& s = *it->second;
  send(s, server_message{broadcast{static_cast<std::int32_t>(p), broadcast_type::moved, s.name, "",
                                   centre(at, units_of(def)), 0}});
}

bool front_shard::stands_in(player_id p, const view_key& key) const {
  auto l = line_of.find(p);
  return l != line_of.end() && l->second.key() == key;
}

// A player entering a view. Its old one may not have said it left (another line's batch may come
// later): it hears 201 for everyone it saw there first, so its client never holds two views at once.
// Its own client's moves count from its new place from now on: one it sent for its old ground is
// refused as too far, not carried onto the new one from a claim made there.
void front_shard::entering(player_id p, const view_key& key) {
  if (auto it = sessions.find(p); it != sessions.end()) {
    it->second->moved_at = clock::now();
    unclaim(*it->second);
  }
  auto l = line_of.find(p);
  if (l == line_of.end() || l->second.key() == key) return;
  if (auto m = mirrors.find(l->second.key()); m != mirrors.end()) forget_view(m->second, p);
  left_behind.insert_or_assign(p, l->second);
  line_of.erase(l);
}

// A player leaving a view (another line, a phase, the world) hears 201 for everyone it saw there.
void front_shard::forget_view(const view_mirror& mirror, player_id p) {
  auto it = sessions.find(p);
  if (it == sessions.end()) return;
  std::string frame;
  for (player_id q : mirror.view_of(p)) {
    frame.clear();
    append_frame(frame, server_message{left_view{static_cast<std::int32_t>(q)}});
    push(it->second, frame);
  }
}

// A client whose answer was lost (a node's link dropped it, the request timed out) may stand
// elsewhere than it was told: the lines' events say where, and it hears that scene's 1006.
void front_shard::correct_place(session& s) {
  auto l = line_of.find(s.pid);
  if (!s.placed || l == line_of.end() || (l->second.line == s.place.line && l->second.phase == s.place.phase))
    return;
  s.place = placement{l->second.line, l->second.phase == s.place.phase ? s.place.space : 0, l->second.phase};
  if (const scene_def* def = def_of(s.place.line.scene); def != nullptr && s.speaks_scenert)
    send(s, info_of(*def, s.place));
}

// The view of a player already standing somewhere: 200 Tp 2 for itself and its 202 (`players`),
// then the monsters it sees.
void front_shard::send_view(session& s, bool players) {
  auto l = line_of.find(s.pid);
  if (l == line_of.end()) return;
  auto m = mirrors.find(l->second.key());
  const scene_def* def = def_of(l->second.line.scene);
  if (m == mirrors.end() || def == nullptr) return;
  fan_out out{*this, l->second.key(), m->second, units_of(*def), false, {}, 0, -1};
  if (players) out.view(s.pid, m->second.view_of(s.pid));
  out.monster_view(s.pid, m->second.monsters_seen_by(s.pid));
}

}  // namespace scenert::net
