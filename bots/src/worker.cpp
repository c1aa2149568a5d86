#include <scenert/bots/worker.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>

namespace scenert::bots {
namespace {

constexpr auto tick_period = std::chrono::milliseconds(10);
constexpr std::size_t max_examples = 10;

std::int64_t ns_of(clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// A position's identity: the bits of its two ground coordinates, as sent and as echoed.
std::uint64_t key_of(float x, float z) {
  return (std::uint64_t{std::bit_cast<std::uint32_t>(x)} << 32) | std::bit_cast<std::uint32_t>(z);
}

wire_count& wire_of(bots_report& r, net::message_id id) {
  static wire_count unknown;
  const int i = net::index_of(id);
  return i < 0 ? unknown : r.wire[static_cast<std::size_t>(i)];
}

void raise_max(std::atomic<std::uint64_t>& max, std::uint64_t v) {
  for (auto m = max.load(); v > m && !max.compare_exchange_weak(m, v);) {
  }
}

}  // namespace

void move_ring::put(std::uint64_t key, std::int64_t ns) noexcept {
  entry& e = slots[next++ % size];
  e.sent.store(ns, std::memory_order_relaxed);
  e.key.store(key, std::memory_order_release);
}

std::optional<std::int64_t> move_ring::find(std::uint64_t key) const noexcept {
  for (const entry& e : slots)
    if (e.key.load(std::memory_order_acquire) == key) return e.sent.load(std::memory_order_relaxed);
  return std::nullopt;
}

shared_state::shared_state(const bots_options& o, const bots_plan& p)
    : opt(o), plan(p), pid_of(p.bots.size()), rings(std::make_unique<move_ring[]>(p.bots.size())) {
  for (const auto& t : o.targets) targets.emplace_back(asio::ip::make_address(t.host), t.port);
}

worker::worker(shared_state& s, unsigned index) : shared_(s), index_(index) {}

void worker::add(std::uint32_t bot_index) {
  auto b = std::make_unique<bot>();
  b->index = bot_index;
  b->plan = &shared_.plan.bots[bot_index];
  b->rng.seed(b->plan->seed);
  bots_.push_back(std::move(b));
}

void worker::run() {
  tick();
  io_.run();
}

void worker::stop() {
  asio::post(io_, [this] {
    stopping_ = true;
    timer_.cancel();
    for (auto& b : bots_)
      if (b->at != bot::stage::waiting && b->at != bot::stage::done) close(*b, "bye");
    io_.stop();
  });
}

worker::views_now worker::views() const {
  views_now out;
  for (const auto& b : bots_) {
    if (b->at == bot::stage::logging_in && b->pid == 0) out.logins_unanswered = true;
    if (b->resuming && b->at != bot::stage::done) {  // its player stands where it was, unseen by it
      out.in_transit.push_back(b->pid);
      continue;
    }
    if (b->at != bot::stage::playing && b->at != bot::stage::logging_in) continue;
    // A bot logging in or between lines has no view to check yet, and its viewers may or may not
    // have heard of it: it is left out on both sides.
    if (b->at == bot::stage::logging_in || b->pending || !b->has_position) {
      if (b->pid != 0) out.in_transit.push_back(b->pid);
      continue;
    }
    bot_view v{b->pid, b->where.scene, b->where.line, b->where.phase, b->x, b->z, {}};
    v.seen.reserve(b->view.size());
    for (const auto& [pid, at] : b->view) v.seen.push_back({pid, at.first, at.second});
    out.views.push_back(std::move(v));
  }
  return out;
}

// ---- the plan, every tick ---------------------------------------------------------------------

void worker::tick() {
  if (stopping_) return;
  const auto now = clock::now();
  const auto elapsed = now - shared_.start;
  const bool paused = shared_.paused.load(std::memory_order_relaxed);
  const bool scenert = shared_.opt.protocol == bots_protocol::scenert;
  const auto move_period = std::chrono::duration_cast<clock::duration>(
      std::chrono::duration<double>(1.0 / std::max(shared_.opt.move_hz, 1e-3)));
  for (auto& owned : bots_) {
    bot& b = *owned;
    switch (b.at) {
      case bot::stage::waiting:
        if (!paused && elapsed >= b.plan->arrive) connect(b);
        break;
      case bot::stage::reconnecting:
        if (now >= b.next_try) connect(b);
        break;
      case bot::stage::connecting:
      case bot::stage::logging_in:
        if (b.resuming && now > b.resume_by) {
          error(b, fmt::format("bot {} (player {}): not back within {} ms of its server dropping it", b.index,
                               b.pid, shared_.opt.login_timeout.count()));
          close(b, "resume_failed");
        } else if (!b.resuming && now - b.connect_started > shared_.opt.login_timeout) {
          error(b, fmt::format("bot {}: no view (202) within {} ms of connecting", b.index,
                               shared_.opt.login_timeout.count()));
          close(b, "timeout");
        }
        break;
      case bot::stage::playing:
        if (scenert && now >= b.next_heartbeat) {
          send(b, net::heartbeat{static_cast<std::uint64_t>(ns_of(now)), 0});
          b.next_heartbeat = now + std::chrono::duration_cast<clock::duration>(
                                       std::chrono::duration<double>(shared_.opt.heartbeat_every));
        }
        if (paused) break;
        if (b.plan->leave < shared_.plan.length && elapsed >= b.plan->leave) {
          depart(b, now);
          break;
        }
        if (now >= b.next_move) {
          move(b, now);
          b.next_move = std::max(b.next_move + move_period, now);
        }
        for (; b.next_step < b.plan->steps.size() && b.plan->steps[b.next_step].at <= elapsed; ++b.next_step)
          act(b, b.plan->steps[b.next_step], now);
        break;
      case bot::stage::leaving:
        if (now >= b.leave_by) close(b, "bye");
        break;
      case bot::stage::done:
        break;
    }
  }
  flush();
  timer_.expires_at(now + tick_period);
  timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) tick();
  });
}

// ---- connections ------------------------------------------------------------------------------

void worker::connect(bot& b) {
  b.at = bot::stage::connecting;
  b.connect_started = clock::now();
  b.ws = shared_.opt.ws;
  const std::size_t t = (b.index + b.shift) % shared_.targets.size();
  const auto& target = shared_.opt.targets[t];
  b.sock.emplace(io_).async_connect(
      shared_.targets[t], [this, &b, &target, c = ++b.connection](boost::system::error_code ec) {
        if (b.at != bot::stage::connecting || b.connection != c) return;
        if (ec && b.resuming) return reconnect(b, clock::now());  // that one is down too: the next
        if (ec) {
          ++stats_.connect_failed;
          error(b,
                fmt::format("bot {}: connect to {}:{}: {}", b.index, target.host, target.port, ec.message()));
          return close(b, "connect_failed");
        }
        boost::system::error_code ignored;
        b.sock->set_option(tcp::no_delay(true), ignored);
        b.sock->non_blocking(true, ignored);
        if (b.ws) return upgrade(b);
        connected(b);
      });
}

// WebSocket: the upgrade request, then its answer (the bytes after it are the first messages).
void worker::upgrade(bot& b) {
  const auto key = ws_key(masks_(), masks_());
  const auto& target = shared_.opt.targets[(b.index + b.shift) % shared_.opt.targets.size()];
  b.upgrade = ws_upgrade_request(fmt::format("{}:{}", target.host, target.port), "/",
                                 shared_.opt.protocol == bots_protocol::scenert ? "scenert" : "", key);
  asio::async_write(*b.sock, asio::buffer(b.upgrade),
                    [this, &b, c = b.connection](boost::system::error_code ec, std::size_t) {
    if (b.at != bot::stage::connecting || b.connection != c) return;
    if (ec) return upgrade_failed(b, ec.message());
    b.upgrade.clear();
    read_upgrade(b);
  });
}

void worker::read_upgrade(bot& b) {
  b.sock->async_wait(tcp::socket::wait_read, [this, &b, c = b.connection](boost::system::error_code ec) {
    if (b.at != bot::stage::connecting || b.connection != c) return;
    if (ec) return upgrade_failed(b, ec.message());
    boost::system::error_code e;
    const std::size_t n = b.sock->read_some(asio::buffer(buffer_), e);
    if (e && e != asio::error::would_block)
      return upgrade_failed(b, e == asio::error::eof ? "the server closed the connection" : e.message());
    b.upgrade.append(buffer_.data(), n);
    auto answer = ws_upgrade_answer(b.upgrade);
    if (!answer) return upgrade_failed(b, answer.error().message);
    if (*answer == 0) return read_upgrade(b);
    const std::string first = b.upgrade.substr(*answer);
    std::string().swap(b.upgrade);
    connected(b);
    if (!first.empty() && b.at != bot::stage::done) take(b, first);
  });
}

void worker::upgrade_failed(bot& b, const std::string& why) {
  ++stats_.connect_failed;
  error(b, fmt::format("bot {}: WebSocket upgrade: {}", b.index, why));
  close(b, "connect_failed");
}

void worker::connected(bot& b) {
  stats_.connect.record(clock::now() - b.connect_started);
  ++stats_.connected;
  b.at = bot::stage::logging_in;
  if (shared_.opt.protocol == bots_protocol::scenert) send(b, net::login{fmt::format("bot-{}", b.index), b.token});
  read(b);
  flush();
}

// Waits until readable, then drains through the thread's one buffer (no buffer per bot).
void worker::read(bot& b) {
  b.sock->async_wait(tcp::socket::wait_read, [this, &b, c = b.connection](boost::system::error_code ec) {
    if (b.at == bot::stage::done || b.connection != c) return;
    if (ec) return lost(b, ec.message());
    for (;;) {
      boost::system::error_code e;
      const std::size_t n = b.sock->read_some(asio::buffer(buffer_), e);
      if (e == asio::error::would_block) break;
      if (e) return lost(b, e == asio::error::eof ? "eof" : e.message());
      take(b, {buffer_.data(), n});
      if (b.at == bot::stage::done || b.connection != c) return;
      if (n < buffer_.size()) break;
    }
    read(b);
  });
}

void worker::take(bot& b, std::string_view bytes) {
  if (!b.ws) {
    frames(b, bytes);
  } else {
    auto fed = b.unframer.feed(
        bytes, [&](std::string_view data) { frames(b, data); },
        [&](std::uint8_t opcode, std::string_view payload) { on_control(b, opcode, payload); });
    if (!fed && b.at != bot::stage::done) {
      error(b, fmt::format("bot {}: the server's WebSocket stream broke: {}", b.index, fed.error().message));
      close(b, "bad_frame");
    }
  }
  flush();
}

void worker::frames(bot& b, std::string_view bytes) {
  if (b.at == bot::stage::done) return;
  auto fed = b.reader.feed(bytes, [&](std::uint32_t id, std::string_view payload) {
    if (b.at != bot::stage::done) on_frame(b, id, payload);
  });
  if (!fed) {
    error(b, fmt::format("bot {}: the server's stream broke: {}", b.index, fed.error().message));
    close(b, "bad_frame");
  }
}

// A ping is answered with its payload; the server's close ends the connection (its goodbye, if it
// sent one, came before).
void worker::on_control(bot& b, std::uint8_t opcode, std::string_view payload) {
  if (b.at == bot::stage::done) return;
  if (opcode == ws_unframer::close) return lost(b, "eof");
  if (opcode != ws_unframer::ping) return;
  ws_append_masked(b.pongs, payload, static_cast<std::uint32_t>(masks_()), ws_unframer::pong);
  if (!b.writing && !b.dirty) {
    b.dirty = true;
    dirty_.push_back(&b);
  }
}

// The server closed (or the network failed): its goodbye, if it sent one, says why.
void worker::lost(bot& b, const std::string& reason) {
  if (b.at == bot::stage::leaving) return close(b, "bye");
  const bool may_resume = shared_.opt.resume && !b.token.empty() && !stopping_ &&
                          (b.goodbye.empty() || b.goodbye == "shutting_down") &&
                          (b.at == bot::stage::playing || b.resuming);
  if (!may_resume) return close(b, b.goodbye.empty() ? reason : b.goodbye);
  ++stats_.disconnects[b.goodbye.empty() ? reason : b.goodbye];
  if (b.at == bot::stage::playing) shared_.online.fetch_sub(1, std::memory_order_relaxed);
  if (!b.resuming) {
    b.resuming = true;
    b.dropped_at = clock::now();
    b.resume_by = b.dropped_at + shared_.opt.login_timeout;
  }
  reconnect(b, clock::now());
}

// Off the connection it had, on to the next target (a moment later: the server may be restarting).
void worker::reconnect(bot& b, clock::time_point now) {
  boost::system::error_code ignored;
  if (b.sock) b.sock->close(ignored);
  ++b.connection;
  ++b.shift;
  b.at = bot::stage::reconnecting;
  b.next_try = now + std::chrono::milliseconds(100);
  b.goodbye.clear();
  b.reader = net::frame_reader{1u << 20};
  b.unframer = {};
  b.upgrade.clear(), b.pongs.clear(), b.out.clear(), b.sending.clear();
  b.writing = false;
  b.view.clear();
  b.views = 0;  // the new connection counts its 202s from the start
  b.pending.reset();
  b.has_position = false;
}

void worker::close(bot& b, const std::string& reason) {
  if (b.at == bot::stage::done) return;
  if (b.at == bot::stage::playing || b.at == bot::stage::leaving)
    shared_.online.fetch_sub(1, std::memory_order_relaxed);
  b.at = bot::stage::done;
  ++stats_.disconnects[reason];
  boost::system::error_code ignored;
  if (b.sock) {
    b.sock->shutdown(tcp::socket::shutdown_both, ignored);
    b.sock->close(ignored);
  }
  if (b.pid != 0) shared_.pid_of[b.index].store(0, std::memory_order_relaxed);
}

void worker::error(bot& b, const std::string& what) {
  (void)b;
  ++stats_.errors;
  shared_.errors.fetch_add(1, std::memory_order_relaxed);
  if (stats_.error_examples.size() < max_examples) stats_.error_examples.push_back(what);
}

// ---- what the server says -----------------------------------------------------------------------

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

void worker::on(bot& b, const net::server_message& m, clock::time_point now) {
  // Monsters walk while the bots stand still: their frames say nothing of the players' views.
  if (!std::holds_alternative<net::heartbeat_echo>(m) && !std::holds_alternative<net::monsters_seen>(m) &&
      !std::holds_alternative<net::monsters_gone>(m))
    shared_.view_frames.fetch_add(1, std::memory_order_relaxed);
  std::visit(
      [&](const auto& msg) {
        using T = std::decay_t<decltype(msg)>;
        if constexpr (std::is_same_v<T, net::login_ok>) {
          if (b.resuming && (!msg.resumed || msg.pid != b.pid)) {
            error(b, fmt::format("bot {} (player {}): its resume token was refused (player {} made instead)",
                                 b.index, b.pid, msg.pid));
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
          b.where = {msg.scene,     msg.line,     msg.phase,    msg.width,   msg.height,
                     msg.cell_size, msg.origin_x, msg.origin_z, msg.blocked, true};
          if (b.home == 0) b.home = msg.scene;
        } else if constexpr (std::is_same_v<T, net::goodbye>) {
          b.goodbye = msg.reason.empty() ? "goodbye" : msg.reason.substr(0, msg.reason.find(':'));
        } else if constexpr (std::is_same_v<T, net::move_refused>) {
          ++stats_.moves_refused[msg.reason];
        }
      },
      m);
}

void worker::on_broadcast(bot& b, const net::broadcast& m, clock::time_point now) {
  using net::broadcast_type;
  if (m.type == broadcast_type::chat || m.type == broadcast_type::action) return;
  if (m.pid == b.pid) {  // where the server puts it: its entry point, or back after a refused move
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
}

void worker::on_view(bot& b, const net::players_in_view& v, clock::time_point now) {
  ++b.views;
  b.view.clear();
  for (const auto& p : v.players)
    if (p.pid != b.pid) b.view[p.pid] = {p.p.x, p.p.z};
  if (b.at != bot::stage::logging_in) return;
  if (b.resuming) {
    b.resuming = false;
    ++stats_.resumed;
    stats_.resume.record(now - b.dropped_at);
  } else {
    stats_.login.record(now - b.connect_started);
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
  ++stats_.answers[b.pending->kind][a.code];
  const bool leaving = b.pending->kind == "leave";
  b.pending.reset();
  if (leaving) return close(b, "bye");
  if (a.code != "ok") return;
  b.where.scene = a.scene, b.where.line = a.line, b.where.phase = a.phase;
  // Its place on the new line comes with its own 200 Tp 2, which may come before or after this.
  b.has_position = b.appeared_since_request;
}

// ---- what the bot says ------------------------------------------------------------------------

void worker::send(bot& b, const net::client_message& m) {
  if (b.at == bot::stage::done) return;
  const std::size_t before = b.out.size();
  net::append_frame(b.out, m);
  auto& w = wire_of(stats_, net::id_of(m));
  ++w.frames_out;
  w.bytes_out += b.out.size() - before;
  shared_.frames_out.fetch_add(1, std::memory_order_relaxed);
  if (!b.writing && !b.dirty) {
    b.dirty = true;
    dirty_.push_back(&b);
  }
}

void worker::flush() {
  for (bot* b : dirty_) {
    b->dirty = false;
    if (b->at != bot::stage::done && !b->writing && (!b->out.empty() || !b->pongs.empty())) write(*b);
  }
  dirty_.clear();
}

// WebSocket: the frames go as one masked message (the server's reader takes frames across messages).
void worker::write(bot& b) {
  b.writing = true;
  b.sending.clear();
  if (b.ws) {
    b.sending.swap(b.pongs);
    if (!b.out.empty()) ws_append_masked(b.sending, b.out, static_cast<std::uint32_t>(masks_()));
    b.out.clear();
  } else {
    std::swap(b.out, b.sending);
  }
  asio::async_write(*b.sock, asio::buffer(b.sending),
                    [this, &b, c = b.connection](boost::system::error_code ec, std::size_t) {
    if (b.connection != c) return;
    b.writing = false;
    if (b.at == bot::stage::done) return;
    if (ec) return lost(b, ec.message());
    if (!b.out.empty() || !b.pongs.empty()) write(b);
  });
}

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
  return bit / 8 >= w.blocked.size() || (w.blocked[bit / 8] >> (bit % 8) & 1) == 0;
}

void worker::act(bot& b, const bot_step& s, clock::time_point now) {
  if (s.what == bot_action::chat) {
    ++stats_.chats_sent;
    return send(b, net::talk{fmt::format("bot {} says hello", b.index)});
  }
  // One request at a time, and only once it stands where the last one put it (its own 200 Tp 2 came),
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
