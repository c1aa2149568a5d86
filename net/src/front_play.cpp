// A client's messages: chat, moves checked against the map, requests to the world, heartbeats.
#include "front_impl.hpp"

#include <cmath>

namespace scenert::net {

void front_shard::on_frame(const std::shared_ptr<session>& s, std::uint32_t id, std::string_view payload) {
  if (s->closing) return;
  count_in(id, payload.size());
  auto m = decode_client(id, payload);
  if (!m) return bad_frame(s, m.error().message);
  if (s->at != session::stage::in) {
    if (s->claiming) return;  // logging in already: the claim's answer decides
    if (auto* l = std::get_if<login>(&m.value())) return log_in(s, *l);
    if (s->login_required) return bad_frame(s, "log in (1000) first");
    log_in_guest(s);
  }
  // Seed 002's clients know ids 1-202 only: scenert's own frames go to clients that speak them.
  if (id >= 1000 && !s->speaks_scenert) {
    s->speaks_scenert = true;
    if (s->placed)
      if (const scene_def* def = def_of(s->place.line.scene)) send(*s, info_of(*def, s->place));
    send_view(*s, false);  // the monsters it sees: its players came with seed 002's frames
  }
  std::visit([&](auto& msg) { handle(s, msg); }, m.value());
}

void front_shard::bad_frame(const std::shared_ptr<session>& s, const std::string& why) {
  add(n.bad_frames);
  if (++s->bad > opt.bad_frames_allowed) close(s, close_reason::bad_frames, "the last: " + why);
}

bool front_shard::allowed(bucket& b, const front_options::rate& r) {
  if (b.take(r, clock::now())) return true;
  add(n.rate_limited);
  return false;
}

void front_shard::handle(const std::shared_ptr<session>& s, const talk& t) {
  if (!allowed(s->chat, opt.chat)) return;
  std::string frame;
  append_frame(frame,
               server_message{broadcast{
                   static_cast<std::int32_t>(s->pid), broadcast_type::chat, s->name, t.content, {}, 0}});
  chat_to_all(frame);
}

// World chat reaches every player online when it was said: this shard's at once, the others' through
// their threads (a player that logged in there meanwhile does not get it).
void front_shard::chat_to_all(const std::string& frame) {
  for (auto& [pid, other] : sessions) push(other, frame);
  const auto said = clock::now();
  for (auto& sh : hub.shards)
    if (sh.get() != this)
      asio::post(*sh->io, [&there = *sh, frame, said] {
        for (auto& [pid, other] : there.sessions)
          if (other->admitted <= said) there.push(other, frame);
        there.flush();
      });
}

void front_shard::handle(const std::shared_ptr<session>& s, const move_to& m) {
  if (!allowed(s->moves, opt.moves)) return;
  const auto at = where(s->pid);
  const scene_def* def = at ? def_of(at->scene) : nullptr;
  const auto now = clock::now();
  grid::cell_point cell{};
  const char* why = nullptr;
  if (!s->placed || def == nullptr) {
    why = "not in a scene";
  } else {
    const map_def& units = units_of(*def);
    const auto& map = map_of(*def);
    const double fx = (double{m.to.x} - units.origin_x) / units.cell_size;
    const double fz = (double{m.to.z} - units.origin_z) / units.cell_size;
    if (!std::isfinite(fx) || !std::isfinite(fz) || fx < 0 || fz < 0 || fx >= map->width() ||
        fz >= map->height()) {
      why = "off the map";
    } else {
      cell = {static_cast<std::uint32_t>(fx), static_cast<std::uint32_t>(fz)};
      if (map->is_block(cell)) {
        why = "blocked";
      } else if (def->max_speed > 0) {
        // From where it stands, as far as max_speed allows since its last accepted move, with a
        // cell of slack for rounding.
        const position from = last_accepted(*s, at->cell, units);
        const double dist = std::hypot(double{m.to.x} - from.x, double{m.to.z} - from.z);
        const double seconds = std::chrono::duration<double>(now - s->moved_at).count();
        if (dist > def->max_speed * seconds + units.cell_size) why = "too fast";
      }
    }
  }
  if (why != nullptr) {
    add(n.moves_refused);
    if (s->speaks_scenert) send(*s, server_message{move_refused{why}});
    if (at)
      send(*s, server_message{broadcast{static_cast<std::int32_t>(s->pid), broadcast_type::moved, s->name, "",
                                        last_accepted(*s, at->cell, units_of(*def)), 0}});
    return;
  }
  s->moved_at = now;
  claim(*s, cell, m.to);
  // Meant for the line and phase the client stands on as far as it was told: a move still on its
  // way when the player went elsewhere must not walk it there.
  const standing_line& on = line_of.at(s->pid);
  w->submit(world_request::move_on(s->pid, on.line, on.phase, cell), {});
}

// A walk names the view it was made on: one made before its client read its newest view is dropped
// (that 202 already told the client where it stands); the others are moves.
void front_shard::handle(const std::shared_ptr<session>& s, const walk& step) {
  if (step.view != s->views) return add(n.moves_stale);
  handle(s, move_to{step.to});
}

namespace {
world_request to_world(player_id pid, const request& r) {
  switch (r.kind) {
    case request_kind::enter:
      return world_request::enter(pid, r.scene);
    case request_kind::enter_instance:
      return world_request::enter_instance(pid, r.scene, r.party);
    case request_kind::join_team:
      return world_request::join_team(pid, static_cast<player_id>(r.mate));
    case request_kind::transfer:
      return world_request::transfer(pid, r.scene);
    case request_kind::enter_phase:
      return world_request::enter_phase(pid, r.scene);
    case request_kind::leave_phase:
      return world_request::leave_phase(pid);
    case request_kind::leave:
    case request_kind::count_:
      break;
    case request_kind::leave_party:
      return world_request::leave_party(pid);
  }
  return world_request::leave(pid);
}
}  // namespace

void front_shard::handle(const std::shared_ptr<session>& s, const request& r) {
  if (!allowed(s->requests, opt.requests)) {
    send(*s,
         server_message{answer{r.request_id, "rate_limited", "too many requests per second", r.scene, 0, 0}});
    return;
  }
  if (r.line == 0) return enter_world(s, to_world(s->pid, r), r.request_id);
  // A given line (a client's line picker): entering it from a line is a transfer to it.
  const line_handle given{r.scene, r.line};
  if (r.kind == request_kind::transfer || (r.kind == request_kind::enter && s->placed))
    return enter_world(s, world_request::transfer_line(s->pid, given), r.request_id);
  if (r.kind == request_kind::enter)
    return enter_world(s, world_request::enter_line(s->pid, given), r.request_id);
  send(*s, server_message{answer{r.request_id, "unsupported", "a line is given only to enter or transfer",
                                 r.scene, r.line, 0}});
}

void front_shard::handle(const std::shared_ptr<session>& s, const heartbeat& h) {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  send(*s, server_message{heartbeat_echo{h.client_ns,
                                         static_cast<std::uint64_t>(std::chrono::nanoseconds(now).count())}});
}

void front_shard::handle(const std::shared_ptr<session>& s, const login&) {
  bad_frame(s, "already logged in");
}

// Sends a request to the world; the answer comes back on the I/O thread.
void front_shard::enter_world(const std::shared_ptr<session>& asking, const world_request& q,
                              std::uint32_t request_id, std::optional<grid::cell_point> then_to) {
  std::weak_ptr<session> weak = asking;
  const bool leaving = q.what == world_request::kind::leave;
  w->submit(q, [this, io_alive = io, weak, request_id, leaving, then_to, pid = q.player](world_result r) {
    if (r && then_to) w->submit(world_request::move(pid, *then_to), {});
    asio::post(*io_alive, [this, weak, request_id, leaving, r = std::move(r)]() mutable {
      auto s = weak.lock();
      if (!s || s->closing) return;
      // The answer first, then the geometry of the line it put the player on.
      answer a{request_id, to_string(r.code()), r ? "" : r.error().message, 0, 0, 0};
      if (r) a.scene = r->line.scene, a.line = r->line.line, a.phase = r->phase;
      if (!r && request_id == 0) {  // a login (or a player placed again) that found no place
        close(s, close_reason::no_place, r.error().message);
        return flush();
      }
      if (request_id != 0) send(*s, server_message{std::move(a)});
      s->unsure = !r && r.code() == world_errc::node_unavailable;
      if (s->unsure) {  // done all the same? Or placed elsewhere and let go again?
        step_back(s->pid);
        correct_place(*s);
      }
      if (r) {  // its claim and speed start again when the shard hears it entered its new view
        s->placed = !leaving;
        s->place = *r;
        const scene_def* def = def_of(r->line.scene);
        if (!leaving && def != nullptr && s->speaks_scenert) send(*s, info_of(*def, *r));
      }
      flush();
    });
  });
}

server_message front_shard::info_of(const scene_def& def, const placement& p) {
  const auto& map = *map_of(def);
  scene_info i;
  i.scene = def.id, i.name = def.name,
  i.kind = std::string(scene_kind_names[static_cast<std::size_t>(def.kind)]);
  i.line = p.line.line, i.phase = p.phase;
  i.width = static_cast<std::int32_t>(map.width()), i.height = static_cast<std::int32_t>(map.height());
  i.area_size = static_cast<std::int32_t>(map.area_width());
  i.eyesight_x = static_cast<std::int32_t>(map.eyesight_x());
  i.eyesight_z = static_cast<std::int32_t>(map.eyesight_y());
  const map_def& u = units_of(def);
  i.cell_size = static_cast<float>(u.cell_size), i.origin_x = static_cast<float>(u.origin_x),
  i.origin_z = static_cast<float>(u.origin_z);
  i.blocked = blocked_bits_of(def);
  return server_message{std::move(i)};
}

// A map's blocked cells, one bit each: built once per map (a 512 x 512 map walks 262,144 cells), then
// copied into each 1006.
const std::string& front_shard::blocked_bits_of(const scene_def& def) {
  auto [it, fresh] = blocked_bits.try_emplace(def.map);
  if (!fresh) return it->second;
  const auto& map = *map_of(def);
  std::string& bits = it->second;
  bits.assign((map.cell_count() + 7) / 8, '\0');
  for (std::uint32_t y = 0; y < map.height(); ++y)
    for (std::uint32_t x = 0; x < map.width(); ++x)
      if (map.is_block({x, y})) {
        const std::uint32_t bit = map.cell_index({x, y});
        bits[bit / 8] = static_cast<char>(bits[bit / 8] | (1 << (bit % 8)));
      }
  return bits;
}

// ---- geometry ---------------------------------------------------------------------------------

std::optional<front_shard::standing_at> front_shard::where(player_id p) const {
  auto l = line_of.find(p);
  if (l == line_of.end()) return std::nullopt;
  auto m = mirrors.find(l->second.key());
  if (m == mirrors.end()) return std::nullopt;
  if (auto c = m->second.where(p)) return standing_at{l->second.line.scene, *c};
  return std::nullopt;
}

const std::shared_ptr<const grid::map_data>& front_shard::map_of(const scene_def& s) {
  auto& m = maps[s.map];
  if (!m)
    if (const map_def* md = table.find_map(s.map)) m = make_map_data(*md);
  return m;
}

const map_def& front_shard::units_of(const scene_def& d) const {
  if (const map_def* m = table.find_map(d.map)) return *m;
  static const map_def unit{};  // the loader guarantees every scene's map exists
  return unit;
}

// The centre of a cell, in world units.
position front_shard::centre(grid::cell_point c, const map_def& u) {
  return {static_cast<float>(u.origin_x + (c.x + 0.5) * u.cell_size), 0,
          static_cast<float>(u.origin_z + (c.y + 0.5) * u.cell_size), 0, 0};
}

// Where a player stands: the position its client asked for when the server put it in that cell.
position front_shard::position_of(const session& s, grid::cell_point c, const map_def& u) {
  if (s.has_claim && s.claimed_cell == c) return s.claimed;
  return centre(c, u);
}

// Where a player will stand once the world applied its moves: the last move the front accepted (its
// line may not have applied it yet), or where its line holds it. Speed and refusals count from here.
position front_shard::last_accepted(const session& s, grid::cell_point c, const map_def& u) {
  return s.has_claim ? s.claimed : position_of(s, c, u);
}

// Another player's position, whichever shard holds its connection.
position front_shard::position_of(const std::optional<player_book::card>& card, grid::cell_point c,
                                  const map_def& u) {
  if (card && card->has_claim && card->claimed_cell == c) return card->claimed;
  return centre(c, u);
}

void front_shard::claim(session& s, grid::cell_point cell, const position& at) {
  s.claimed = at, s.claimed_cell = cell, s.has_claim = true;
  hub.book.claim(s.pid, cell, at);
}

void front_shard::unclaim(session& s) {
  s.has_claim = false;
  hub.book.unclaim(s.pid);
}

}  // namespace scenert::net
