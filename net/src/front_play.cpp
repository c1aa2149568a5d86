// A client's messages: chat, moves checked against the map, requests to the world, heartbeats.
#include "front_impl.hpp"

#include <cmath>

#include <fmt/format.h>

namespace scenert::net {

namespace {

void add(std::atomic<std::uint64_t>& c) { front_counters::add(c); }

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

void play_desk::on_frame(const std::shared_ptr<session>& s, std::uint32_t id, std::string_view payload) {
  if (s->closing()) return;
  shard_.n.count_in(id, payload.size());
  auto m = decode_client(id, payload);
  if (!m) return bad_frame(s, m.error().message);
  player_state& p = s->player();
  if (s->at() != session::stage::in) {
    if (p.claiming) return;  // logging in already: the claim's answer decides
    if (auto* l = std::get_if<login>(&m.value())) {
      p.maps_held = l->known_maps;  // decoded: at most max_known_maps
      return shard_.logins.log_in(s, *l);
    }
    if (s->login_required()) return bad_frame(s, "log in (1000) first");
    shard_.logins.log_in_guest(s);
  }
  // Seed 002's clients know ids 1-202 only: scenert's own frames go to clients that speak them.
  if (id >= 1000 && !p.speaks_scenert) {
    p.speaks_scenert = true;
    if (p.placed)
      if (const scene_def* def = shard_.geo.def_of(p.place.line.scene))
        s->send(shard_.geo.info_of(*def, p.place, p));
    shard_.fan.send_view(*s, false);  // the monsters it sees: its players came with seed 002's frames
  }
  std::visit([&](auto& msg) { handle(s, msg); }, m.value());
}

void play_desk::bad_frame(const std::shared_ptr<session>& s, const std::string& why) {
  add(shard_.n.bad_frames);
  if (++s->player().bad_frames > shard_.opt.bad_frames_allowed)
    s->close(close_reason::bad_frames, "the last: " + why);
}

bool play_desk::allowed(session& s, bucket& b, const front_options::rate& r) {
  const auto& cut = shard_.opt.flooding;
  const metered m = meter(b, r, s.player().flooding, cut, clock::now());
  if (m == metered::allowed) return true;
  add(shard_.n.rate_limited);
  if (m == metered::cut && !s.closing())
    s.close(close_reason::flooding,
            fmt::format("over the message rates by more than {} at once or {} a second", cut.burst,
                        cut.per_second));
  return false;
}

void play_desk::handle(const std::shared_ptr<session>& s, const talk& t) {
  const player_state& p = s->player();
  if (!allowed(*s, s->player().chat, shard_.opt.chat)) return;
  std::string frame;
  append_frame(frame, server_message{broadcast{
                          static_cast<std::int32_t>(p.pid), broadcast_type::chat, p.name, t.content, {}, 0}});
  chat_to_all(frame);
}

// World chat reaches every player online when it was said: this shard's at once, the others' through
// their threads (a player that logged in there meanwhile does not get it).
void play_desk::chat_to_all(const std::string& frame) {
  for (auto& [pid, other] : shard_.sessions) other->push(frame);
  const auto said = clock::now();
  for (auto& sh : shard_.hub.shards)
    if (sh.get() != &shard_)
      asio::post(*sh->io, [&there = *sh, frame, said] {
        for (auto& [pid, other] : there.sessions)
          if (other->player().admitted <= said) other->push(frame);
        there.flush();
      });
}

void play_desk::handle(const std::shared_ptr<session>& s, const move_to& m) {
  player_state& p = s->player();
  if (!allowed(*s, p.moves, shard_.opt.moves)) return;
  const auto now = clock::now();
  grid::cell_point cell{};
  if (const char* why = refusal(*s, m.to, cell, now)) return refuse_move(*s, why);
  p.moved_at = now;
  ask(*s, {cell, m.to});
  // Straight to the line and phase the client stands on as far as it was told (no world tick on the
  // way): the line drops a move still on its way when the player went elsewhere, never walks it there.
  const standing_line& on = shard_.line_of.at(p.pid);
  shard_.world().to_line(world_request::move_on(p.pid, on.line, on.phase, cell), {});
}

const char* play_desk::refusal(const session& s, const position& to, grid::cell_point& cell,
                               clock::time_point now) {
  const player_state& p = s.player();
  const auto at = shard_.where(p.pid);
  const scene_def* def = at ? shard_.geo.def_of(at->scene) : nullptr;
  if (!p.placed || def == nullptr) return "not in a scene";
  const map_def& units = shard_.geo.units_of(*def);
  const auto& map = shard_.geo.map_of(*def);
  const double fx = (double{to.x} - units.origin_x) / units.cell_size;
  const double fz = (double{to.z} - units.origin_z) / units.cell_size;
  if (!std::isfinite(fx) || !std::isfinite(fz) || fx < 0 || fz < 0 || fx >= map->width() ||
      fz >= map->height())
    return "off the map";
  cell = {static_cast<std::uint32_t>(fx), static_cast<std::uint32_t>(fz)};
  if (map->is_block(cell)) return "blocked";
  if (def->max_speed <= 0) return nullptr;
  // From where it stands, as far as max_speed allows since its last accepted move, with a cell of
  // slack for rounding.
  const position from = scene_geometry::last_accepted(p, at->cell, units);
  const double dist = std::hypot(double{to.x} - from.x, double{to.z} - from.z);
  const double seconds = std::chrono::duration<double>(now - p.moved_at).count();
  return dist > def->max_speed * seconds + units.cell_size ? "too fast" : nullptr;
}

// The client hears why, and where it stands (the last move accepted).
void play_desk::refuse_move(session& s, const char* why) {
  add(shard_.n.moves_refused);
  const player_state& p = s.player();
  if (p.speaks_scenert) s.send(server_message{move_refused{why}});
  const auto at = shard_.where(p.pid);
  const scene_def* def = at ? shard_.geo.def_of(at->scene) : nullptr;
  if (at && def != nullptr)
    s.send(
        server_message{broadcast{static_cast<std::int32_t>(p.pid), broadcast_type::moved, p.name, "",
                                 scene_geometry::last_accepted(p, at->cell, shard_.geo.units_of(*def)), 0}});
}

// A walk names the view it was made on: one made before its client read its newest view is dropped
// (that 202 already told the client where it stands); the others are moves.
void play_desk::handle(const std::shared_ptr<session>& s, const walk& step) {
  if (step.view != s->player().views) return add(shard_.n.moves_stale);
  handle(s, move_to{step.to});
}

void play_desk::handle(const std::shared_ptr<session>& s, const request& r) {
  const player_id pid = s->player().pid;
  if (!allowed(*s, s->player().requests, shard_.opt.requests)) {
    if (s->closing()) return;
    s->send(
        server_message{answer{r.request_id, "rate_limited", "too many requests per second", r.scene, 0, 0}});
    return;
  }
  if (r.line == 0) return enter_world(s, to_world(pid, r), r.request_id);
  // A given line (a client's line picker): entering it from a line is a transfer to it.
  const line_handle given{r.scene, r.line};
  if (r.kind == request_kind::transfer || (r.kind == request_kind::enter && s->player().placed))
    return enter_world(s, world_request::transfer_line(pid, given), r.request_id);
  if (r.kind == request_kind::enter)
    return enter_world(s, world_request::enter_line(pid, given), r.request_id);
  s->send(server_message{
      answer{r.request_id, "unsupported", "a line is given only to enter or transfer", r.scene, r.line, 0}});
}

// Heartbeats are metered too: an echo per heartbeat would otherwise serve a flood forever.
void play_desk::handle(const std::shared_ptr<session>& s, const heartbeat& h) {
  if (!allowed(*s, s->player().heartbeats, shard_.opt.heartbeats)) return;
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  s->send(server_message{
      heartbeat_echo{h.client_ns, static_cast<std::uint64_t>(std::chrono::nanoseconds(now).count())}});
}

void play_desk::handle(const std::shared_ptr<session>& s, const login&) { bad_frame(s, "already logged in"); }

void play_desk::enter_world(const std::shared_ptr<session>& asking, const world_request& q,
                            std::uint32_t request_id, std::optional<grid::cell_point> then_to) {
  std::weak_ptr<session> weak = asking;
  const bool leaving = q.what == world_request::kind::leave;
  world_port& w = shard_.world();
  w.submit(q, [this, &w, io_alive = shard_.io, weak, request_id, leaving, then_to,
               pid = q.player](world_result r) {
    if (r && then_to) w.submit(world_request::move(pid, *then_to), {});
    asio::post(*io_alive, [this, weak, request_id, leaving, r = std::move(r)]() mutable {
      auto s = weak.lock();
      if (!s || s->closing()) return;
      answered(s, request_id, leaving, std::move(r));
      shard_.flush();
    });
  });
}

void play_desk::place_again(const std::shared_ptr<session>& s, scene_id scene,
                            std::optional<grid::cell_point> then_to) {
  place_again_until(s, scene, then_to, clock::now() + shard_.opt.place_again_within);
}

void play_desk::place_again_until(const std::weak_ptr<session>& weak, scene_id scene,
                                  std::optional<grid::cell_point> then_to, clock::time_point until) {
  const auto asking = weak.lock();
  if (!asking || asking->closing()) return;
  const player_id pid = asking->player().pid;
  world_port& w = shard_.world();
  w.submit(world_request::enter(pid, scene), [this, &w, io = shard_.io, weak, scene, then_to, until,
                                              pid](world_result r) {
    if (r && then_to) w.submit(world_request::move(pid, *then_to), {});
    asio::post(*io, [this, io, weak, scene, then_to, until, r = std::move(r)]() mutable {
      auto s = weak.lock();
      if (!s || s->closing()) return;
      if (worth_asking_again(r) && clock::now() < until) {
        auto later = std::make_shared<asio::steady_timer>(*io, std::chrono::milliseconds(250));
        return later->async_wait([this, later, weak, scene, then_to, until](boost::system::error_code ec) {
          if (!ec) place_again_until(weak, scene, then_to, until);
        });
      }
      answered(s, 0, false, std::move(r));
      shard_.flush();
    });
  });
}

// The answer first, then the geometry of the line it put the player on.
void play_desk::answered(const std::shared_ptr<session>& s, std::uint32_t request_id, bool leaving,
                         world_result r) {
  player_state& p = s->player();
  if (!r && request_id == 0) {  // a login (or a player placed again) that found no place
    // Placed again and found standing already: a request of its own that a live node took over
    // placed it first (a cluster's node died with both under way). It keeps that place.
    if (p.placed && r.code() == world_errc::already_in_scene) return shard_.fan.correct_place(*s);
    return s->close(close_reason::no_place, r.error().message);
  }
  if (request_id != 0) {
    answer a{request_id, to_string(r.code()), r ? "" : r.error().message, 0, 0, 0};
    if (r) a.scene = r->line.scene, a.line = r->line.line, a.phase = r->phase;
    s->send(server_message{std::move(a)});
  }
  // The world could not say whether it was done: the client hears where it stands, as the lines'
  // events say (the world tells the front more, on_stands_on, if the events were undone).
  if (!r && r.code() == world_errc::node_unavailable) shard_.fan.correct_place(*s);
  if (!r) return;
  // Its asked position and speed start again when the shard hears it entered its new view.
  p.placed = !leaving;
  p.place = *r;
  const auto stands = shard_.line_of.find(p.pid);
  p.place_heard =
      stands != shard_.line_of.end() && stands->second.line == r->line && stands->second.phase == r->phase;
  const scene_def* def = shard_.geo.def_of(r->line.scene);
  if (!leaving && def != nullptr && p.speaks_scenert) s->send(shard_.geo.info_of(*def, *r, p));
}

void play_desk::ask(session& s, const asked_position& asked) {
  s.player().asked = asked;
  shard_.hub.book.ask(s.player().pid, asked);
}

void play_desk::forget_asked(session& s) {
  s.player().asked.reset();
  shard_.hub.book.forget_asked(s.player().pid);
}

}  // namespace scenert::net
