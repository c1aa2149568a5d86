// The bots' worker: what a bot makes of the frames it reads, and how it moves, acts and travels.

#include "worker_detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

namespace scenert::bots {

using namespace detail;

void worker::on_frame(bot& b, std::uint32_t id, std::string_view payload) {
  auto& w = wire_of(stats_, static_cast<net::message_id>(id));
  ++w.frames_in;
  w.bytes_in += payload.size() + net::header_size;
  shared_.frames_in.fetch_add(1, std::memory_order_relaxed);
  auto m = net::decode_server(id, payload);
  if (!m) {
    ++stats_.unknown_frames;
    return error(b, fmt::format("bot {}: frame {}: {}", b.index, id, m.error().message));
  }
  on(b, m.value(), clock::now());
}

// A view frame heard while a check reads the truth: whom it was about.
void worker::note_change(const bot& b, const net::server_message& m) {
  std::int32_t about = b.pid;
  if (const auto* c = std::get_if<net::broadcast>(&m)) about = c->pid;
  if (const auto* l = std::get_if<net::left_view>(&m)) about = l->pid;
  std::lock_guard lock(shared_.changed_m);
  shared_.changed.insert(about);
}

void worker::on(bot& b, const net::server_message& m, clock::time_point now) {
  // Monsters walk while the bots stand still: their frames say nothing of the players' views.
  if (!std::holds_alternative<net::heartbeat_echo>(m) && !std::holds_alternative<net::monsters_seen>(m) &&
      !std::holds_alternative<net::monsters_gone>(m)) {
    shared_.view_frames.fetch_add(1, std::memory_order_relaxed);
    if (shared_.noting_changes.load(std::memory_order_relaxed)) note_change(b, m);
  }
  std::visit(
      [&](const auto& msg) {
        using T = std::decay_t<decltype(msg)>;
        if constexpr (std::is_same_v<T, net::login_ok>) {
          if (b.resuming && (!msg.resumed || msg.pid != b.pid)) {
            error(b, fmt::format("bot {} (player {}): its resume token was refused (player {} made instead)",
                                 b.index, b.pid, msg.pid));
            ++stats_.failed_resumes["token refused"];
            return close(b, "resume_refused");
          }
          b.token = msg.resume_token;
        }
        if constexpr (std::is_same_v<T, net::you_are> || std::is_same_v<T, net::login_ok>) {
          if (b.pid == 0) {
            b.pid = msg.pid;
            shared_.pid_of[b.index].store(msg.pid, std::memory_order_relaxed);
            shared_.bot_of.emplace(msg.pid, b.index);
            ++stats_.logged_in;
          }
        } else if constexpr (std::is_same_v<T, net::broadcast>) {
          on_broadcast(b, msg, now);
        } else if constexpr (std::is_same_v<T, net::left_view>) {
          if (b.view.erase(msg.pid) == 0)
            error(b, fmt::format("bot {} (player {}): 201 for player {}, who is not in its view", b.index,
                                 b.pid, msg.pid));
        } else if constexpr (std::is_same_v<T, net::players_in_view>) {
          on_view(b, msg, now);
        } else if constexpr (std::is_same_v<T, net::answer>) {
          on_answer(b, msg, now);
        } else if constexpr (std::is_same_v<T, net::heartbeat_echo>) {
          stats_.heartbeat_rtt.record(
              std::chrono::nanoseconds(ns_of(now) - static_cast<std::int64_t>(msg.client_ns)));
        } else if constexpr (std::is_same_v<T, net::scene_info>) {
          on_scene(b, msg);
        } else if constexpr (std::is_same_v<T, net::goodbye>) {
          b.goodbye = msg.reason.empty() ? "goodbye" : msg.reason.substr(0, msg.reason.find(':'));
          b.goodbye_said = msg.reason;
          b.retry_after_ms = msg.retry_after_ms;
        } else if constexpr (std::is_same_v<T, net::move_refused>) {
          ++stats_.moves_refused[msg.reason];
        }
      },
      m);
}

// Its new ground: the map's blocks from the frame (kept for every bot of the process), or the ones
// kept when the frame leaves them out.
void worker::on_scene(bot& b, const net::scene_info& m) {
  std::shared_ptr<const net::block_bits> blocks;
  if (m.blocks_omitted) {
    if (auto kept = shared_.maps.find(m.map_digest); kept != shared_.maps.end()) blocks = kept->second;
  } else if (auto bits = net::decode_blocks(static_cast<std::uint32_t>(m.width),
                                            static_cast<std::uint32_t>(m.height), m.block_rows, m.blocked)) {
    blocks = shared_.maps.emplace(m.map_digest, std::make_shared<const net::block_bits>(std::move(*bits)))
                 .first->second;
  } else {
    error(b, fmt::format("bot {} (player {}): 1006 of scene {}: {}", b.index, b.pid, m.scene,
                         bits.error().message));
  }
  if (!blocks && m.blocks_omitted)
    error(b,
          fmt::format("bot {} (player {}): 1006 of scene {} leaves out map {:016x}, which it does not hold",
                      b.index, b.pid, m.scene, m.map_digest));
  b.where = {m.scene,     m.line,     m.phase,    m.width, m.height,
             m.cell_size, m.origin_x, m.origin_z, blocks,  blocks != nullptr};
  if (b.home == 0) b.home = m.scene;
}

// The digests of the maps the process holds, as many as a login may name.
std::vector<std::uint64_t> worker::maps_held() const {
  std::vector<std::uint64_t> held;
  for (const auto& [digest, blocks] : shared_.maps) {
    if (held.size() == net::max_known_maps) break;
    held.push_back(digest);
  }
  return held;
}

void worker::on_broadcast(bot& b, const net::broadcast& m, clock::time_point now) {
  using net::broadcast_type;
  if (m.type == broadcast_type::chat || m.type == broadcast_type::action) return;
  if (m.pid == b.pid) {  // where the server puts it: its entry point, or back after a refused move
    // The 200 Tp 2 that follows its 202 says what the 202 said: a step the bot took since counts.
    if (m.type == broadcast_type::appeared && std::exchange(b.own_appeared_due, false)) return;
    b.x = m.p.x, b.z = m.p.z;
    b.has_position = true;
    if (m.type == broadcast_type::appeared) b.appeared_since_request = true;
    return;
  }
  if (m.type == broadcast_type::appeared) {
    b.view[m.pid] = {m.p.x, m.p.z};
    return;
  }
  auto seen = b.view.find(m.pid);
  if (seen == b.view.end())
    return error(b, fmt::format("bot {} (player {}): 200 Tp 4 for player {}, who is not in its view", b.index,
                                b.pid, m.pid));
  seen->second = {m.p.x, m.p.z};
  // Whose move was it, and when was it sent? Only bots' own moves are timed.
  auto mover = shared_.bot_of.find(m.pid);
  if (mover == shared_.bot_of.end()) return;
  if (auto sent = shared_.rings[mover->second].find(key_of(m.p.x, m.p.z)))
    stats_.move_to_viewer.record(std::chrono::nanoseconds(ns_of(now) - *sent));
  else
    ++stats_.untimed_deliveries;
}

void worker::on_view(bot& b, const net::players_in_view& v, clock::time_point now) {
  ++b.views;
  b.view.clear();
  for (const auto& p : v.players) {
    if (p.pid != b.pid) {
      b.view[p.pid] = {p.p.x, p.p.z};
      continue;
    }
    // The 202 names the bot too (seed 002's GameRole::Init): its place comes with the view its walks
    // name, in one frame, so no step can be made on the new view from the old place.
    b.x = p.p.x, b.z = p.p.z;
    b.has_position = b.appeared_since_request = b.own_appeared_due = true;
  }
  if (b.at != bot::stage::logging_in) return;
  if (b.resuming) {
    b.resuming = false;
    ++stats_.resumed;
    stats_.resume.record(now - b.dropped_at);
  } else {
    stats_.login.record(now - b.login_started);  // its waits after server_busy included
  }
  b.at = bot::stage::playing;
  raise_max(shared_.max_online, shared_.online.fetch_add(1, std::memory_order_relaxed) + 1);
  // Spread the bots' moves and heartbeats over their periods.
  const double phase = std::uniform_real_distribution<double>(0, 1)(b.rng);
  b.next_move = now + std::chrono::duration_cast<clock::duration>(
                          std::chrono::duration<double>(phase / std::max(shared_.opt.move_hz, 1e-3)));
  b.next_heartbeat = now + std::chrono::duration_cast<clock::duration>(
                               std::chrono::duration<double>(phase * shared_.opt.heartbeat_every));
  b.heading = static_cast<float>(std::uniform_real_distribution<double>(0, 2 * std::numbers::pi)(b.rng));
}

void worker::on_answer(bot& b, const net::answer& a, clock::time_point now) {
  if (!b.pending || b.pending->id != a.request_id) return;
  stats_.request_rtt[b.pending->kind].record(now - b.pending->sent);
  if (shared_.opt.keep_request_samples) keep_sample(*b.pending, a.code, now);
  ++stats_.answers[b.pending->kind][a.code];
  const bool leaving = b.pending->kind == "leave";
  b.pending.reset();
  if (leaving) return close(b, "bye");
  if (a.code != "ok") return;
  b.where.scene = a.scene, b.where.line = a.line, b.where.phase = a.phase;
  // Its place on the new line comes with its 202, which may come before or after this.
  b.has_position = b.appeared_since_request;
}

void worker::keep_sample(const bot::pending_request& q, const std::string& code, clock::time_point now) {
  using namespace std::chrono;
  const auto rtt = now - q.sent;
  const auto sent = system_clock::now() - duration_cast<system_clock::duration>(rtt);
  stats_.request_samples.push_back({duration_cast<milliseconds>(sent.time_since_epoch()).count(),
                                    static_cast<std::uint32_t>(duration_cast<microseconds>(rtt).count()),
                                    q.kind, code});
}

// ---- what the bot says ------------------------------------------------------------------------

// A step along its heading, turning when the way is off its ground or blocked.
void worker::move(bot& b, clock::time_point now) {
  if (!b.has_position || b.pending) return;  // no walking while it travels: the old ground is gone
  const auto& box = shared_.opt.box;
  float step = shared_.opt.step;
  if (step <= 0) step = b.where.has_map ? 0.9f * b.where.cell_size : 0.5f;
  float nx = b.x, nz = b.z;
  if (box && (b.x < box->x0 || b.x > box->x1 || b.z < box->z0 || b.z > box->z1)) {
    nx = std::clamp(b.x, box->x0, box->x1), nz = std::clamp(b.z, box->z0, box->z1);  // into its box first
  } else {
    std::uniform_real_distribution<double> angle(0, 2 * std::numbers::pi);
    if (std::uniform_int_distribution<int>(0, 9)(b.rng) == 0) b.heading = static_cast<float>(angle(b.rng));
    bool found = false;
    for (int tries = 0; tries < 8 && !found; ++tries) {
      nx = b.x + step * std::cos(b.heading), nz = b.z + step * std::sin(b.heading);
      found = walkable(b, nx, nz);
      if (!found) b.heading = static_cast<float>(angle(b.rng));
    }
    if (!found) return;
  }
  if (!walkable(b, nx, nz)) return;
  b.x = nx, b.z = nz;
  shared_.rings[b.index].put(key_of(nx, nz), ns_of(now));
  ++stats_.moves_sent;
  shared_.moves.fetch_add(1, std::memory_order_relaxed);
  const net::position to{nx, 0, nz, b.heading, 0};
  if (shared_.opt.protocol == bots_protocol::scenert)
    send(b, net::walk{to, b.views});
  else
    send(b, net::move_to{to});
}

bool worker::walkable(const bot& b, float x, float z) const {
  if (const auto& box = shared_.opt.box; box && (x < box->x0 || x > box->x1 || z < box->z0 || z > box->z1))
    return false;
  const standing& w = b.where;
  if (!w.has_map) return shared_.opt.box.has_value();
  const double fx = (double{x} - w.origin_x) / w.cell_size, fz = (double{z} - w.origin_z) / w.cell_size;
  if (!(fx >= 0 && fz >= 0 && fx < w.width && fz < w.height)) return false;
  const auto bit =
      static_cast<std::size_t>(static_cast<std::int64_t>(fz) * w.width + static_cast<std::int64_t>(fx));
  return bit / 8 >= w.blocked->size() || ((*w.blocked)[bit / 8] >> (bit % 8) & 1) == 0;
}

void worker::act(bot& b, const bot_step& s, clock::time_point now) {
  if (s.what == bot_action::chat) {
    ++stats_.chats_sent;
    return send(b, net::talk{fmt::format("bot {} says hello", b.index)});
  }
  // One request at a time, and only once it stands where the last one put it (its 202 came),
  // as a player travels on once the new scene has loaded.
  if (shared_.opt.protocol != bots_protocol::scenert || b.pending || !b.has_position) return;
  auto r = request_for(b, s);
  if (!r) return;
  r->request_id = b.next_request++;
  b.pending = bot::pending_request{r->request_id,
                                   std::string(bot_action_names[static_cast<std::size_t>(s.what)]), now};
  b.appeared_since_request = false;
  send(b, *r);
}

// The request a planned step makes where the bot stands, or none when it does not apply there.
std::optional<net::request> worker::request_for(bot& b, const bot_step& s) const {
  using net::request_kind;
  auto pick = [&](auto&& fits) -> const scene_entry* {
    std::vector<const scene_entry*> c;
    for (const auto& e : shared_.opt.scenes)
      if (fits(e)) c.push_back(&e);
    return c.empty() ? nullptr : c[s.pick % c.size()];
  };
  const std::uint32_t here = b.where.scene;
  switch (s.what) {
    case bot_action::enter_field:  // the world's transfer: from wherever it stands, switching on the way
      if (auto* e = pick([&](const scene_entry& c) { return c.kind == "field" && c.id != here; }))
        return net::request{0, request_kind::transfer, e->id, 0, 0, 0};
      break;
    case bot_action::enter_dungeon:
      if (auto* e = pick([](const scene_entry& c) { return c.kind == "dungeon" && c.instances != "shared"; }))
        return net::request{0, request_kind::enter_instance, e->id, 0, s.party, 0};
      break;
    case bot_action::join_team: {
      const std::int32_t mate = shared_.pid_of[b.plan->leader].load(std::memory_order_relaxed);
      if (mate != 0 && mate != b.pid) return net::request{0, request_kind::join_team, 0, 0, 0, mate};
      break;
    }
    case bot_action::transfer:
      if (auto* e = pick([&](const scene_entry& c) {
            return (c.kind == "field" || c.kind == "town") && c.id != here && here != 0;
          }))
        return net::request{0, request_kind::transfer, e->id, 0, 0, 0};
      break;
    case bot_action::enter_phase:
      if (b.where.phase == 0)
        if (auto* e = pick([&](const scene_entry& c) { return c.id == here && !c.spaces.empty(); }))
          return net::request{0, request_kind::enter_phase, e->spaces[s.pick % e->spaces.size()], 0, 0, 0};
      break;
    case bot_action::leave_phase:
      if (b.where.phase != 0) return net::request{0, request_kind::leave_phase, 0, 0, 0, 0};
      break;
    case bot_action::back_to_town:
      if (b.home != 0 && here != b.home) return net::request{0, request_kind::transfer, b.home, 0, 0, 0};
      break;
    case bot_action::chat:
    case bot_action::count_:
      break;
  }
  return std::nullopt;
}

// The end of its session: scenert bots leave the world and wait for the answer; seed002 bots close.
void worker::depart(bot& b, clock::time_point now) {
  if (shared_.opt.protocol != bots_protocol::scenert) return close(b, "bye");
  b.at = bot::stage::leaving;
  b.leave_by = now + std::chrono::seconds(2);
  b.pending = bot::pending_request{b.next_request, "leave", now};
  send(b, net::request{b.next_request++, net::request_kind::leave, 0, 0, 0, 0});
}

}  // namespace scenert::bots
