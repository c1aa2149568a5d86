// One I/O thread of the front: its sessions (accepted, greeted, timed out, flushed), its mirror of
// every view, and the connections per line it publishes.
#include "front_impl.hpp"

#include <map>

namespace scenert::net {

void line_feed::post(line_handle line, phase_id phase, std::span<const line_event> events) {
  post_batch({line, phase, {events.begin(), events.end()}, 0, {}});
}

void line_feed::post_stands(line_handle line, phase_id phase, player_id p) {
  post_batch({line, phase, {}, p, {}});
}

// A module's frames travel in the same inbox as its line's events: a client hears them in the order
// the line sent them, after what the tick did to its view.
void line_feed::post_frames(line_handle line, std::span<const module_frame> frames) {
  post_batch({line, 0, {}, 0, {frames.begin(), frames.end()}});
}

void line_feed::post_batch(line_batch batch) {
  if (!batches.post(std::move(batch))) return;  // closed: the front stopped
  if (!wake_pending.exchange(true, std::memory_order_acq_rel))
    asio::post(*io, [this] {
      wake_pending.store(false, std::memory_order_release);
      on_wake();
    });
}

front_shard::front_shard(front::impl& h, std::size_t i)
    : hub(h),
      number(i),
      opt(h.opt),
      n(h.n),
      io(std::make_shared<asio::io_context>(1)),
      feed(std::make_shared<line_feed>()),
      geo(h.table),
      logins(*this),
      play(*this),
      fan(*this),
      stop_timer_(*io),
      sweep_timer_(*io) {
  feed->io = io;
  feed->on_wake = [this] { fan.drain_lines(); };
}

session* front_shard::session_of(player_id p) {
  auto it = sessions.find(p);
  return it == sessions.end() ? nullptr : it->second.get();
}

std::optional<front_shard::standing_at> front_shard::where(player_id p) const {
  auto l = line_of.find(p);
  if (l == line_of.end()) return std::nullopt;
  auto m = mirrors.find(l->second.key());
  if (m == mirrors.end()) return std::nullopt;
  if (auto c = m->second.where(p)) return standing_at{l->second.line.scene, *c};
  return std::nullopt;
}

bool front_shard::stands_in(player_id p, const view_key& key) const {
  auto l = line_of.find(p);
  return l != line_of.end() && l->second.key() == key;
}

// ---- sessions ---------------------------------------------------------------------------------

void front_shard::on_accepted(tcp::socket sock, bool websocket, std::string_view read_already) {
  if (stopping_) return;  // accepted as the server stopped: the socket closes here
  boost::system::error_code ignored;
  sock.set_option(tcp::no_delay(true), ignored);
  if (opt.send_buffer_bytes != 0)
    sock.set_option(asio::socket_base::send_buffer_size(static_cast<int>(opt.send_buffer_bytes)), ignored);
  auto s = std::make_shared<session>(*this, opt, std::move(sock), websocket, read_already);
  ++open_sockets_;
  if (n.connections.fetch_add(1, std::memory_order_relaxed) >= opt.max_connections) {
    n.connections.fetch_sub(1, std::memory_order_relaxed);
    front_counters::add(n.refused);
    front_counters::add(n.closed_by[static_cast<std::size_t>(close_reason::server_full)]);
    return s->refuse("server full: " + std::to_string(opt.max_connections) + " connections");
  }
  front_counters::add(n.accepted);
  greeting.push_back(s);
  s->start();
}

void front_shard::greeted(const std::shared_ptr<session>& s) { logins.greet(s); }

void front_shard::frame_in(const std::shared_ptr<session>& s, std::uint32_t id, std::string_view payload) {
  play.on_frame(s, id, payload);
}

void front_shard::closing(session& s, close_reason why) {
  std::erase_if(greeting, [&](const auto& g) { return g.get() == &s; });
  logins.drop_player(s, why);
}

void front_shard::socket_closed() {
  --open_sockets_;
  stop_when_quiet();
}

void front_shard::stop_when_quiet() {
  if (stopping_ && open_sockets_ == 0) io->stop();
}

// One write per connection per batch: everything queued for it goes in one gathered send.
void front_shard::flush() {
  for (auto& s : dirty_) s->flush();
  dirty_.clear();
}

// ---- every quarter second ---------------------------------------------------------------------

void front_shard::sweep() {
  sweep_due_ = clock::now() + std::chrono::milliseconds(250);
  sweep_timer_.expires_at(sweep_due_);
  sweep_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopping_) return;
    sweep_once(clock::now());
    sweep();
  });
}

void front_shard::sweep_once(clock::time_point now) {
  measure_load(now, std::max(clock::duration::zero(), now - sweep_due_));
  std::vector<std::pair<std::shared_ptr<session>, std::pair<close_reason, std::chrono::milliseconds>>> late;
  for (auto& s : greeting)
    if (auto why = s->overdue(now)) late.emplace_back(s, *why);
  for (auto& [pid, s] : sessions)
    if (auto why = s->overdue(now)) late.emplace_back(s, *why);
  for (auto& [s, why] : late) s->close(why.first, "after " + std::to_string(why.second.count()) + " ms");
  if (number == 0) {  // the players waiting for a resume are the shards' in common
    logins.expire_detached(now);
    hub.book.forget_gone(now);
    hub.sample_headroom(now);
  }
  flush();
  publish_connections();
}

void front_shard::publish_connections() {
  std::map<std::pair<scene_id, std::uint32_t>, line_connections> by_line;
  for (const auto& [pid, s] : sessions)
    if (auto l = line_of.find(pid); l != line_of.end()) {  // a phase's players count on their town line
      auto& c = by_line[{l->second.line.scene, l->second.line.line}];
      c.line = l->second.line;
      ++c.connections;
    }
  std::vector<line_connections> out;
  out.reserve(by_line.size());
  for (auto& [key, c] : by_line) out.push_back(c);
  std::lock_guard lock(published_mutex_);
  published_.swap(out);
}

std::vector<line_connections> front_shard::connections() const {
  std::lock_guard lock(published_mutex_);
  return published_;
}

void front_shard::shut_down() {
  stopping_ = true;
  sweep_timer_.cancel();
  for (auto& s : std::vector(greeting)) s->close(close_reason::shutting_down, "the server stops");
  std::vector<std::shared_ptr<session>> all;
  for (auto& [pid, s] : sessions) all.push_back(s);
  const bool hand_off = hub.opt.hand_off_on_stop;
  for (auto& s : all)
    s->close(close_reason::shutting_down,
             hand_off ? "the server stops; log in again with your resume token" : "the server stops");
  if (!hand_off) logins.expire_detached(clock::time_point::max());
  flush();
  stop_when_quiet();
  // A client that does not read its goodbye holds its socket open: the loop ends anyway.
  stop_timer_.expires_after(session::linger);
  stop_timer_.async_wait([this](boost::system::error_code) { io->stop(); });
}

}  // namespace scenert::net
