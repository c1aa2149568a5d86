// The lines' events: each line's mirror says who must hear what; each event's frame is encoded once
// for all its viewers, and a player's moves before its last one in a drain are not sent at all
// (its viewers get the latest position once), so a burst of ticks costs one frame per mover.
#include "front_impl.hpp"

#include <algorithm>

namespace scenert::net {

namespace {

// What one view's events say to its viewers: the mirror's `Out`.
struct view_writer {
  front_shard& f;
  view_key key;
  view_mirror& mirror;
  const map_def& units;
  bool quiet_moves = false;  // this event's move is superseded by a later one in the drain
  std::string frame;
  std::uint64_t frame_who = 0;
  int frame_kind = -1;

  const std::string& encoded(int kind, std::uint64_t who) {
    if (kind == frame_kind && who == frame_who) return frame;
    frame.clear();
    frame_kind = kind, frame_who = who;
    const auto pid = static_cast<std::int32_t>(who);
    if (kind == 201) {
      const auto card = f.hub.book.card_of(who);
      append_frame(frame, server_message{left_view{pid, card ? card->name : std::string{}}});
    } else if (kind == 1010) {
      append_frame(frame, server_message{monsters_gone{{static_cast<std::uint32_t>(who)}}});
    } else if (kind == 1009) {
      append_frame(frame, server_message{monsters_seen{{spot_of(who)}, false}});
    } else {
      const auto at = mirror.where(who);
      const auto card = f.hub.book.card_of(who);
      append_frame(frame, server_message{
                              broadcast{pid, kind == 2 ? broadcast_type::appeared : broadcast_type::moved,
                                        card ? card->name : std::string{}, "",
                                        at ? scene_geometry::position_of(card, *at, units) : position{}, 0}});
    }
    return frame;
  }
  // A player hears a view's events only while it stands in that view: one that went on to another
  // line is done with this one, though this line may not have said so yet.
  void to(player_id viewer, int kind, player_id who) {
    session* s = f.session_of(viewer);
    if (s != nullptr && f.stands_in(viewer, key)) s->push(encoded(kind, who));
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
  void monster_at(player_id viewer, monster_id m) { to_scenert(viewer, 1009, m); }
  void monster_gone(player_id viewer, monster_id m) { to_scenert(viewer, 1010, m); }
  void to_scenert(player_id viewer, int kind, monster_id m) {
    session* s = f.session_of(viewer);
    if (s != nullptr && s->player().speaks_scenert && f.stands_in(viewer, key)) s->push(encoded(kind, m));
  }
  monster_spot spot_of(monster_id m) const {
    const position p = scene_geometry::centre(mirror.where_monster(m).value_or(grid::cell_point{}), units);
    const entity_look look = mirror.look_of(m).value_or(entity_look{});
    return {static_cast<std::uint32_t>(m), p.x, p.z, look.kind, look.state, look.health};
  }
  // Every monster an entering player sees, replacing what its client had.
  void monster_view(player_id p, std::span<const monster_id> all) {
    session* s = f.session_of(p);
    if (s == nullptr || !s->player().speaks_scenert) return;
    monsters_seen v{{}, true};
    v.monsters.reserve(all.size());
    for (monster_id m : all) v.monsters.push_back(spot_of(m));
    s->send(server_message{std::move(v)});
  }
  // An entering player's 202 with everyone it sees and itself, then its own 200 Tp 2: seed 002's
  // GameRole::Init adds the player to the world before it builds the 202 of the players around it,
  // then sends its 200 Tp 2 to everyone around it, itself included (its viewers got theirs already).
  void view(player_id p, std::span<const player_id> all) {
    session* s = f.session_of(p);
    if (s == nullptr) return;
    player_state& me = s->player();
    const auto at = mirror.where(p);
    const position here = at ? scene_geometry::position_of(me, *at, units) : position{};
    const auto pid = static_cast<std::int32_t>(p);
    players_in_view v;
    v.players.reserve(all.size() + 1);
    for (player_id q : all) {
      const auto qa = mirror.where(q);
      const auto card = f.hub.book.card_of(q);
      v.players.push_back({static_cast<std::int32_t>(q),
                           qa ? scene_geometry::position_of(card, *qa, units) : position{},
                           card ? card->name : std::string{}});
    }
    v.players.push_back({pid, here, me.name});
    s->send(server_message{std::move(v)});
    s->send(server_message{broadcast{pid, broadcast_type::appeared, me.name, "", here, 0}});
    ++me.views;
  }
};

}  // namespace

void fan_out::drain_lines() {
  (void)shard_.feed->batches.drain([this](line_batch& b) { drained.batches.push_back(std::move(b)); });
  drained.mark_superseded_moves();
  std::size_t index = 0;  // of the drain's moves
  for (auto& b : drained.batches) {
    if (shard_.geo.def_of(b.line.scene) == nullptr) continue;
    if (b.stands != 0) {
      stands_again(b);
    } else {
      apply(b, index);
    }
  }
  drained.batches.clear();
  shard_.flush();
}

// One batch through its view's mirror.
void fan_out::apply(const line_batch& b, std::size_t& move_index) {
  const scene_def& def = *shard_.geo.def_of(b.line.scene);
  const view_key key = view_key::of(b.line, b.phase);
  auto [it, fresh] = shard_.mirrors.try_emplace(key, shard_.geo.map_of(def));
  view_writer out{shard_, key, it->second, shard_.geo.units_of(def), false, {}, 0, -1};
  for (const auto& e : b.events) {
    out.frame_kind = -1;  // a new event: its frames are new
    if (e.monster) {      // seen by the players around it; never coalesced (one step per AI turn)
      (void)it->second.apply(e, out);
      continue;
    }
    out.quiet_moves = e.what == line_event::kind::moved && drained.superseded[move_index++];
    if (e.what == line_event::kind::entered) entering(e.player, key);
    if (e.what == line_event::kind::left && shard_.stands_in(e.player, key))
      forget_view(it->second, e.player);
    if (!it->second.apply(e, out)) continue;
    if (e.what == line_event::kind::moved && !out.quiet_moves) own_move(e.player, key, e.at, def);
    followed(b, e, key);
  }
  for (const auto& f : b.frames) send_module_frame(it->second, key, f);
}

namespace {

// The line's click actions frame: three little-endian u32 an action (kind, opcode, range).
click_actions click_actions_of(scene_id scene, std::string_view bytes) {
  click_actions out{scene, {}};
  auto u32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
      v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
    return v;
  };
  for (std::size_t at = 0; at + 12 <= bytes.size(); at += 12)
    out.actions.push_back({u32(at), u32(at + 4), u32(at + 8)});
  return out;
}

}  // namespace

// A module's frame to its audience among this shard's sessions (each shard sends to its own), encoded
// once. A refusal goes to the player that sent the message, wherever it stands now.
void fan_out::send_module_frame(const view_mirror& mirror, const view_key& key, const module_frame& f) {
  std::string frame;
  if (f.granted) {  // the store has it: its player hears of it wherever it stands
    session* s = shard_.session_of(static_cast<player_id>(f.who));
    if (s == nullptr || !s->player().speaks_scenert) return;
    append_frame(frame, server_message{granted{f.bytes, f.item, f.count}});
    return s->push(frame);
  }
  if (f.refusal != 0) {
    const auto code = f.refusal < std::size(module_errc_names) ? module_errc_names[f.refusal] : "refused";
    append_frame(frame, server_message{module_error{f.opcode, code, f.bytes}});
    if (session* s = shard_.session_of(static_cast<player_id>(f.who))) s->push(frame);
    return;
  }
  if (f.opcode == click_actions_opcode)  // the line's own: its module's click actions, for its scene
    append_frame(frame, server_message{click_actions_of(key.scene, f.bytes)});
  else
    append_frame(frame, server_message{module_frame_out{f.opcode, f.bytes}});
  auto deliver = [&](player_id p) {
    session* s = shard_.session_of(p);
    if (s != nullptr && s->player().speaks_scenert && shard_.stands_in(p, key)) s->push(frame);
  };
  switch (f.to) {
    case module_frame::audience::player:
      return deliver(static_cast<player_id>(f.who));
    case module_frame::audience::viewers:
      for (player_id p : mirror.viewers_of(f.who)) deliver(p);
      return;
    case module_frame::audience::line:
      for (player_id p : mirror.players()) deliver(p);
      return;
  }
}

// The view each player stands in follows its line's entered and left. Either, on the place its
// client was told last, says the events have caught up with that answer (a move cannot come first:
// its line's entered comes before it, and the answer reads line_of). Moves, the most of the events,
// look nothing up here.
void fan_out::followed(const line_batch& b, const line_event& e, const view_key& key) {
  if (e.what == line_event::kind::moved) return;
  if (session* s = shard_.session_of(e.player);
      s != nullptr && s->player().place.line == b.line && s->player().place.phase == b.phase)
    s->player().place_heard = true;
  if (e.what == line_event::kind::entered) shard_.line_of[e.player] = {b.line, b.phase};
  if (e.what != line_event::kind::left) return;
  if (auto l = shard_.line_of.find(e.player); l != shard_.line_of.end() && l->second.key() == key) {
    shard_.line_of.erase(l);
    back_to_where_it_stood(e.player);
  } else if (auto was = shard_.stood_in.find(e.player);
             was != shard_.stood_in.end() && was->second.key() == key) {
    shard_.stood_in.erase(was);  // the usual order: the view it stood in before let it go
  }
}

// A player whose current view let it go while the view it stood in before still holds it (a node
// handed it over, then carried out its own older placement of it on a line it left at once: both
// lines' events true, their order across nodes not). It stands there again, and its client hears
// so, unless its last answer is ahead of its line's events (they will come).
void fan_out::back_to_where_it_stood(player_id p) {
  auto was = shard_.stood_in.find(p);
  if (was == shard_.stood_in.end()) return;
  const standing_line back = was->second;
  shard_.stood_in.erase(was);
  auto m = shard_.mirrors.find(back.key());
  if (m == shard_.mirrors.end() || !m->second.where(p)) return;
  shard_.line_of[p] = back;
  session* s = shard_.session_of(p);
  if (s == nullptr) return;
  player_state& me = s->player();
  if (me.place.line != back.line || me.place.phase != back.phase) {
    if (!me.place_heard) return;
    correct_place(*s);
  }
  me.place_heard = true;
  send_view(*s, true);
}

// The world says a player stands on this view still, though its events last showed it entering
// another view, which has let it go since (a cluster's hand-over given up after its target placed
// the player). Standing on no view now, and held by this view's mirror, it stands here again: its
// client hears this view's scene and players again. Otherwise the events said more since: ignored.
void fan_out::stands_again(const line_batch& b) {
  const standing_line back{b.line, b.phase};
  auto m = shard_.mirrors.find(back.key());
  if (shard_.line_of.contains(b.stands) || m == shard_.mirrors.end() || !m->second.where(b.stands)) return;
  shard_.line_of[b.stands] = back;
  if (session* s = shard_.session_of(b.stands)) {
    s->player().place_heard = true;  // the world says where it stands: newer than any answer
    correct_place(*s);
    send_view(*s, true);
  }
}

void drained_batches::mark_superseded_moves() {
  move_order_.clear();
  for (const auto& b : batches)
    for (const auto& e : b.events)
      if (e.what == line_event::kind::moved && !e.monster)
        move_order_.emplace_back(e.player, static_cast<std::uint32_t>(move_order_.size()));
  superseded.assign(move_order_.size(), false);
  std::sort(move_order_.begin(), move_order_.end());
  for (std::size_t i = 0; i + 1 < move_order_.size(); ++i)
    if (move_order_[i].first == move_order_[i + 1].first) superseded[move_order_[i].second] = true;
}

// A player hears its own moves only when it did not ask for them: no move asked since it entered
// this view (a player placed again where it stood, after its node died). Its own walks it knows.
void fan_out::own_move(player_id p, const view_key& key, grid::cell_point at, const scene_def& def) {
  session* s = shard_.session_of(p);
  if (s == nullptr || s->player().asked || !shard_.stands_in(p, key)) return;
  s->send(server_message{broadcast{static_cast<std::int32_t>(p), broadcast_type::moved, s->player().name, "",
                                   scene_geometry::centre(at, shard_.geo.units_of(def)), 0}});
}

// A player entering a view. Its old one may not have said it left (another line's batch may come
// later): it hears 201 for everyone it saw there first, so its client never holds two views at once.
// Its own client's moves count from its new place from now on: one it sent for its old ground is
// refused as too far, not carried onto the new one from a position asked there.
void fan_out::entering(player_id p, const view_key& key) {
  if (session* s = shard_.session_of(p)) {
    s->player().moved_at = clock::now();
    shard_.play.forget_asked(*s);
  }
  auto l = shard_.line_of.find(p);
  if (l == shard_.line_of.end() || l->second.key() == key) return;
  if (auto m = shard_.mirrors.find(l->second.key()); m != shard_.mirrors.end()) {
    forget_view(m->second, p);
    if (m->second.where(p)) shard_.stood_in[p] = l->second;
  }
  shard_.line_of.erase(l);
}

// A player leaving a view (another line, a phase, the world) hears 201 for everyone it saw there.
void fan_out::forget_view(const view_mirror& mirror, player_id p) {
  session* s = shard_.session_of(p);
  if (s == nullptr) return;
  std::string frame;
  for (player_id q : mirror.view_of(p)) {
    frame.clear();
    const auto card = shard_.hub.book.card_of(q);
    append_frame(frame, server_message{left_view{static_cast<std::int32_t>(q), card ? card->name : ""}});
    s->push(frame);
  }
}

// A client whose answer was lost (a node's link dropped it, the request timed out) may stand
// elsewhere than it was told: the lines' events say where, unless they have not caught up with the
// last answer yet (they show where it stood before).
void fan_out::correct_place(session& s) {
  player_state& p = s.player();
  auto l = shard_.line_of.find(p.pid);
  if (!p.placed || !p.place_heard || l == shard_.line_of.end() ||
      (l->second.line == p.place.line && l->second.phase == p.place.phase))
    return;
  p.place = placement{l->second.line, l->second.phase == p.place.phase ? p.place.space : 0, l->second.phase};
  if (const scene_def* def = shard_.geo.def_of(p.place.line.scene); def != nullptr && p.speaks_scenert)
    s.send(shard_.geo.info_of(*def, p.place, p));
}

void fan_out::send_view(session& s, bool players) {
  const player_id pid = s.player().pid;
  auto l = shard_.line_of.find(pid);
  if (l == shard_.line_of.end()) return;
  auto m = shard_.mirrors.find(l->second.key());
  const scene_def* def = shard_.geo.def_of(l->second.line.scene);
  if (m == shard_.mirrors.end() || def == nullptr) return;
  view_writer out{shard_, l->second.key(), m->second, shard_.geo.units_of(*def), false, {}, 0, -1};
  if (players) out.view(pid, m->second.view_of(pid));
  out.monster_view(pid, m->second.monsters_seen_by(pid));
}

}  // namespace scenert::net
