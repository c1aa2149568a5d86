// The front's public face and what its I/O threads share: the listeners (each connection goes to the
// next shard in turn), start and stop, the calls from the cluster's side, the counters.
#include "front_impl.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include <scenert/runtime/assert.hpp>

namespace scenert::net {

namespace {

// The landing scene: the table's first town, else its first field.
const scene_def* landing_scene_of(const scene_table& t) {
  for (scene_kind k : {scene_kind::town, scene_kind::field})
    for (const auto& s : t.scenes)
      if (s.kind == k) return &s;
  return nullptr;
}

// A descriptor on its way to the I/O thread: closed unless a socket took it (a post that never runs,
// after stop(), is destroyed with the io_context and closes it).
struct owned_fd {
  int fd = -1;
  explicit owned_fd(int f) : fd(f) {}
  owned_fd(owned_fd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  owned_fd& operator=(owned_fd&&) = delete;
  ~owned_fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

tcp protocol_of(int fd) {
  sockaddr_storage at{};
  socklen_t size = sizeof at;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&at), &size) == 0 && at.ss_family == AF_INET6)
    return tcp::v6();
  return tcp::v4();
}

std::vector<std::unique_ptr<front_shard>> shards_of(front::impl& hub, std::size_t count) {
  std::vector<std::unique_ptr<front_shard>> all;
  for (std::size_t i = 0; i < std::max<std::size_t>(count, 1); ++i)
    all.push_back(std::make_unique<front_shard>(hub, i));
  return all;
}

}  // namespace

front::impl::impl(const scene_table& t, front_options o)
    : table(t),
      opt(std::move(o)),
      resume_for(opt.resume.value_or(t.network.resume_ms)),
      shards(shards_of(*this, opt.io_threads)),
      next_pid(opt.first_player_id),
      admission(opt.admission),
      tcp_acceptor(*shards.front()->io),
      ws_acceptor(*shards.front()->io) {
  if (opt.max_payload == 0) opt.max_payload = t.network.max_frame_bytes;
}

front::impl::~impl() = default;

front_shard* front::impl::home_of(player_id p, const std::unique_lock<std::mutex>&) {
  auto h = roll.home.find(p);
  return h == roll.home.end() ? nullptr : shards[h->second].get();
}

front_shard& front::impl::next() {
  return *shards[next_shard.fetch_add(1, std::memory_order_relaxed) % shards.size()];
}

// ---- listeners --------------------------------------------------------------------------------

result<void, front_errc> front::impl::listen(tcp::acceptor& a, const std::string& host, std::uint16_t port,
                                             const char* flag, std::uint16_t& bound) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) return fail(front_errc::bind_failed, std::string(flag) + " " + host + ": " + ec.message());
  const tcp::endpoint at(address, port);
  a.open(at.protocol(), ec);
  if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) a.bind(at, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return fail(front_errc::bind_failed,
                std::string(flag) + " " + host + ":" + std::to_string(port) + ": " + ec.message());
  bound = a.local_endpoint().port();
  return {};
}

// Accepted on shard 0's thread; each connection then goes to the next shard in turn.
void front::impl::accept(tcp::acceptor& a, bool websocket) {
  a.async_accept([this, &a, websocket](boost::system::error_code ec, tcp::socket sock) {
    if (ec) {
      if (ec != asio::error::operation_aborted) accept(a, websocket);
      return;
    }
    if (shards.size() == 1) {
      shards.front()->on_accepted(std::move(sock), websocket);
    } else {
      boost::system::error_code failed;
      const int fd = sock.release(failed);
      if (!failed) hand_to_shard(fd, websocket, {});
    }
    accept(a, websocket);
  });
}

// A connected socket's descriptor goes to the next shard, whose io_context owns it from then on.
void front::impl::hand_to_shard(int socket, bool websocket, std::string bytes) {
  owned_fd fd(socket);
  front_shard& to = next();
  asio::post(*to.io, [&to, websocket, fd = std::move(fd), bytes = std::move(bytes)]() mutable {
    if (to.stopping()) return;
    tcp::socket sock(*to.io);
    boost::system::error_code ec;
    sock.assign(protocol_of(fd.fd), fd.fd, ec);
    if (ec) return;
    fd.release();
    to.on_accepted(std::move(sock), websocket, bytes);
  });
}

// ---- counters ---------------------------------------------------------------------------------

void front_counters::count_in(std::uint32_t id, std::size_t payload) {
  add(frames_in);
  const int i = index_of(static_cast<message_id>(id));
  if (i < 0) return;
  add(in_frames[static_cast<std::size_t>(i)]);
  add(in_bytes[static_cast<std::size_t>(i)], payload + header_size);
}

void front_counters::count_close(close_reason why) {
  add(closed);
  add(closed_by[static_cast<std::size_t>(why)]);
  connections.fetch_sub(1, std::memory_order_relaxed);
}

void out_counts::count(std::string_view whole) {
  auto bump = [](std::atomic<std::uint64_t>& c, std::uint64_t v = 1) {
    c.store(c.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
  };
  while (whole.size() >= header_size) {
    const std::size_t size = header_size + read_u32(whole.data());
    const int i = index_of(static_cast<message_id>(read_u32(whole.data() + 4)));
    bump(frames);
    if (i >= 0) {
      bump(frames_by_id[static_cast<std::size_t>(i)]);
      bump(bytes_by_id[static_cast<std::size_t>(i)], size);
    }
    whole.remove_prefix(std::min(size, whole.size()));
  }
}

// ---- the public face --------------------------------------------------------------------------

front::front(std::unique_ptr<impl> i) : impl_(std::move(i)) {}
front::~front() { stop(); }

std::unique_ptr<front> front::create(const scene_table& table, front_options options) {
  const std::string problem = admission_problem(options.admission);
  SCENERT_ASSERT(problem.empty(), "front_options::admission: a line out of range (admission_problem)");
  return std::unique_ptr<front>(new front(std::make_unique<impl>(table, std::move(options))));
}

std::function<void(line_handle, phase_id, std::span<const line_event>)> front::on_line_events() {
  std::vector<std::shared_ptr<line_feed>> feeds;
  for (auto& sh : impl_->shards) feeds.push_back(sh->feed);
  // Every shard mirrors every view: each one hears every line.
  return [feeds = std::move(feeds)](line_handle line, phase_id phase, std::span<const line_event> events) {
    for (auto& f : feeds) f->post(line, phase, events);
  };
}

std::function<void(player_id, line_handle, phase_id)> front::on_stands_on() {
  std::vector<std::shared_ptr<line_feed>> feeds;
  for (auto& sh : impl_->shards) feeds.push_back(sh->feed);
  return [feeds = std::move(feeds)](player_id p, line_handle line, phase_id phase) {
    for (auto& f : feeds) f->post_stands(line, phase, p);
  };
}

std::function<void(line_handle, std::span<const module_frame>)> front::on_module_frames() {
  std::vector<std::shared_ptr<line_feed>> feeds;
  for (auto& sh : impl_->shards) feeds.push_back(sh->feed);
  // Every shard hears every line's frames and sends those of its own sessions.
  return [feeds = std::move(feeds)](line_handle line, std::span<const module_frame> frames) {
    for (auto& f : feeds) f->post_frames(line, frames);
  };
}

result<void, front_errc> front::start(world_port& w) {
  impl& f = *impl_;
  f.w = &w;
  f.landing = landing_scene_of(f.table);
  if (f.landing == nullptr)
    return fail(front_errc::no_landing_scene, "the table has no town and no field to land on");
  if (f.opt.tcp)
    if (auto r = f.listen(f.tcp_acceptor, f.opt.tcp_host, f.opt.tcp_port, "--tcp", f.tcp_port); !r) return r;
  if (f.opt.ws)
    if (auto r = f.listen(f.ws_acceptor, f.opt.ws_host, f.opt.ws_port, "--ws", f.ws_port); !r) return r;
  if (f.opt.tcp) f.accept(f.tcp_acceptor, false);
  if (f.opt.ws) f.accept(f.ws_acceptor, true);
  for (auto& sh : f.shards) {
    sh->sweep();
    f.threads.emplace_back([&io = *sh->io] { io.run(); });
  }
  return {};
}

void front::stop() {
  impl& f = *impl_;
  if (f.threads.empty()) return;
  {
    std::lock_guard lock(f.adopting_mutex);
    f.adopting_closed = true;
  }
  asio::post(*f.shards.front()->io, [&f] {
    boost::system::error_code ignored;
    f.tcp_acceptor.close(ignored);
    f.ws_acceptor.close(ignored);
  });
  for (auto& sh : f.shards) asio::post(*sh->io, [&s = *sh] { s.shut_down(); });
  for (auto& t : f.threads) t.join();
  f.threads.clear();
  // A player parked by a shard after another one had let the waiting players go leaves now (unless
  // another front takes it over).
  if (!f.opt.hand_off_on_stop) f.shards.front()->logins.expire_detached(clock::time_point::max());
  for (auto& sh : f.shards) sh->feed->batches.close();
}

void front::resync_views() {
  for (auto& sh : impl_->shards)
    asio::post(*sh->io, [&s = *sh] {
      s.fan.drain_lines();
      for (auto& [pid, session] : s.sessions) {
        // Told of a place its lines' events have not shown yet: their entered sends its view.
        if (!session->player().place_heard) continue;
        s.fan.correct_place(*session);
        s.fan.send_view(*session, true);
      }
      s.flush();
    });
}

void front::place_again(player_id p, scene_id scene, std::optional<grid::cell_point> at) {
  impl& f = *impl_;
  std::unique_lock lock(f.roll.m);
  if (front_shard* found = f.home_of(p, lock)) {
    front_shard& there = *found;
    lock.unlock();
    return asio::post(*there.io, [&there, p, scene, at] {
      if (auto s = there.sessions.find(p); s != there.sessions.end()) {
        there.play.place_again(s->second, scene, at);
      }
    });
  }
  if (!f.roll.detached.contains(p)) return;  // gone meanwhile
  lock.unlock();
  f.place_while_away(p, scene, at, clock::now() + f.opt.place_again_within);
}

// Its client, resuming later, hears the place it was given now, not the one it left. The answers go
// to an I/O thread (a stopped front runs no handler); a player gone meanwhile is asked for no more.
void front::impl::place_while_away(player_id p, scene_id scene, std::optional<grid::cell_point> at,
                                   clock::time_point until) {
  auto io = shards.front()->io;
  w->submit(world_request::enter(p, scene), [this, io, p, scene, at, until](world_result r) {
    if (r && at) w->submit(world_request::move(p, *at), {});
    asio::post(*io, [this, io, p, scene, at, until, r = std::move(r)]() mutable {
      if (!worth_asking_again(r) || clock::now() >= until) {
        if (r) placed_while_away(p, std::move(r));
        return;
      }
      auto later = std::make_shared<asio::steady_timer>(*io, std::chrono::milliseconds(250));
      later->async_wait([this, later, p, scene, at, until](boost::system::error_code ec) {
        std::unique_lock lock(roll.m);
        if (ec || (!roll.detached.contains(p) && home_of(p, lock) == nullptr)) return;
        lock.unlock();
        place_while_away(p, scene, at, until);
      });
    });
  });
}

void front::impl::placed_while_away(player_id p, world_result placed) {
  std::unique_lock lock(roll.m);
  if (auto d = roll.detached.find(p); d != roll.detached.end()) {
    d->second.place = *placed, d->second.placed = true;
    return;
  }
  front_shard* there = home_of(p, lock);
  if (there == nullptr) return;  // gone meanwhile
  lock.unlock();
  asio::post(*there->io, [there, p, placed = std::move(placed)]() mutable {
    if (auto s = there->sessions.find(p); s != there->sessions.end()) {
      there->play.placed_again(s->second, std::move(placed));
      there->flush();
    }
  });
}

void front::let_go(player_id p) {
  impl& f = *impl_;
  std::unique_lock lock(f.roll.m);
  if (front_shard* there = f.home_of(p, lock)) {
    lock.unlock();
    return asio::post(*there->io, [there, p] { there->logins.let_go(p); });
  }
  auto d = f.roll.detached.find(p);
  if (d == f.roll.detached.end()) return;
  f.roll.tokens.erase(d->second.token);
  f.roll.detached.erase(d);
  f.n.detached.fetch_sub(1, std::memory_order_relaxed);
}

void front::adopt_websocket(int socket, std::string bytes) {
  impl& f = *impl_;
  owned_fd fd(socket);
  std::lock_guard lock(f.adopting_mutex);
  if (f.adopting_closed) return;  // stop() began: its goodbyes are queued already
  // Posted before stop()'s own work, so a connection handed over in time gets its goodbye too.
  f.hand_to_shard(fd.release(), true, std::move(bytes));
}

scene_id front::landing_scene() const noexcept {
  const scene_def* s = landing_scene_of(impl_->table);
  return s != nullptr ? s->id : 0;
}

std::uint16_t front::tcp_port() const noexcept { return impl_->tcp_port; }
std::uint16_t front::ws_port() const noexcept { return impl_->ws_port; }

front_stats front::stats() const noexcept {
  const auto& c = impl_->n;
  auto g = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  front_stats s;
  s.accepted = g(c.accepted), s.refused = g(c.refused), s.closed = g(c.closed),
  s.connections = g(c.connections);
  s.frames_in = g(c.frames_in), s.bytes_in = g(c.bytes_in);
  s.bytes_out = g(c.bytes_out), s.writes = g(c.writes), s.bad_frames = g(c.bad_frames);
  s.oversize = g(c.oversize), s.moves_refused = g(c.moves_refused), s.rate_limited = g(c.rate_limited);
  s.moves_stale = g(c.moves_stale);
  s.logins = g(c.logins), s.guests = g(c.guests), s.resumed = g(c.resumed), s.detached = g(c.detached);
  s.claimed = g(c.claimed);
  for (std::size_t i = 0; i < s.closed_by.size(); ++i) s.closed_by[i] = g(c.closed_by[i]);
  for (std::size_t i = 0; i < s.in_by_id.size(); ++i) {
    s.in_by_id[i] = {g(c.in_frames[i]), g(c.in_bytes[i])};
    for (const auto& sh : impl_->shards) {
      s.out_by_id[i].frames += g(sh->sent().frames_by_id[i]);
      s.out_by_id[i].bytes += g(sh->sent().bytes_by_id[i]);
    }
  }
  for (const auto& sh : impl_->shards) s.frames_out += g(sh->sent().frames);
  add_headroom(s, impl_->admission);
  return s;
}

void front::report_tick_lateness(std::chrono::microseconds p99) {
  impl_->admission.reported_lateness_us.store(p99.count(), std::memory_order_relaxed);
}

std::vector<line_connections> front::connections_by_line() const {
  std::map<std::pair<scene_id, std::uint32_t>, line_connections> by_line;
  for (const auto& sh : impl_->shards) {
    for (const auto& c : sh->connections()) {
      auto& sum = by_line[{c.line.scene, c.line.line}];
      sum.line = c.line;
      sum.connections += c.connections;
    }
  }
  std::vector<line_connections> out;
  out.reserve(by_line.size());
  for (auto& [key, c] : by_line) out.push_back(c);
  return out;
}

}  // namespace scenert::net
