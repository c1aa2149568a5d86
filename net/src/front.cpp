// The front's connections and bytes: listeners, the WebSocket handshake, reads into the frame
// reader, one gathered write per connection per batch, closes with reasons, timeouts.
#include "front_impl.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

namespace scenert::net {
namespace websocket = beast::websocket;
namespace http = beast::http;

namespace {

// The landing scene: the table's first town, else its first field.
const scene_def* landing_scene_of(const scene_table& t) {
  for (scene_kind k : {scene_kind::town, scene_kind::field})
    for (const auto& s : t.scenes)
      if (s.kind == k) return &s;
  return nullptr;
}

std::variant<tcp::socket, ws_stream> link_of(tcp::socket s, bool websocket) {
  if (websocket) return ws_stream(std::move(s));
  return s;
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

constexpr std::string_view subprotocol = "scenert";

// True when the handshake's Sec-WebSocket-Protocol lists "scenert".
bool asks_for_scenert(std::string_view offered) {
  while (!offered.empty()) {
    const auto comma = offered.find(',');
    auto item = offered.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == subprotocol) return true;
    if (comma == std::string_view::npos) break;
    offered.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

session::session(tcp::socket s, std::uint32_t max_payload, bool websocket)
    : link(link_of(std::move(s), websocket)),
      at(websocket ? stage::handshake : stage::greeting),
      guest_timer(socket().get_executor()),
      reader(max_payload) {}

session::~session() = default;

tcp::socket& session::socket() noexcept {
  if (auto* ws = std::get_if<ws_stream>(&link)) return ws->next_layer();
  return std::get<tcp::socket>(link);
}

void session::shut() noexcept {
  boost::system::error_code ignored;
  socket().shutdown(tcp::socket::shutdown_both, ignored);
  socket().close(ignored);
  guest_timer.cancel();
}

void line_feed::post(line_handle line, phase_id phase, std::span<const line_event> events) {
  if (!batches.post({line, phase, {events.begin(), events.end()}})) return;  // closed: the front stopped
  if (!wake_pending.exchange(true, std::memory_order_acq_rel))
    asio::post(*io, [this] {
      wake_pending.store(false, std::memory_order_release);
      on_wake();
    });
}

namespace {
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
      tcp_acceptor(*shards.front()->io),
      ws_acceptor(*shards.front()->io) {
  if (opt.max_payload == 0) opt.max_payload = t.network.max_frame_bytes;
}

front::impl::~impl() = default;

front_shard& front::impl::next() {
  return *shards[next_shard.fetch_add(1, std::memory_order_relaxed) % shards.size()];
}

front_shard::front_shard(front::impl& h, std::size_t i)
    : hub(h),
      number(i),
      table(h.table),
      opt(h.opt),
      w(h.w),
      n(h.n),
      io(std::make_shared<asio::io_context>(1)),
      feed(std::make_shared<line_feed>()),
      stop_timer(*io),
      sweep_timer(*io) {
  feed->io = io;
  feed->on_wake = [this] { drain_lines(); };
}

// ---- counters ---------------------------------------------------------------------------------

void front_shard::count_in(std::uint32_t id, std::size_t payload) {
  add(n.frames_in);
  const int i = index_of(static_cast<message_id>(id));
  if (i < 0) return;
  add(n.in_frames[static_cast<std::size_t>(i)]);
  add(n.in_bytes[static_cast<std::size_t>(i)], payload + header_size);
}

// Counts every frame of `frames` (whole frames, concatenated) by its id.
void front_shard::count_out(std::string_view frames) {
  while (frames.size() >= header_size) {
    const std::size_t size = header_size + read_u32(frames.data());
    const int i = index_of(static_cast<message_id>(read_u32(frames.data() + 4)));
    bump(sent.frames);
    if (i >= 0) {
      bump(sent.frames_by_id[static_cast<std::size_t>(i)]);
      bump(sent.bytes_by_id[static_cast<std::size_t>(i)], size);
    }
    frames.remove_prefix(std::min(size, frames.size()));
  }
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
    if (to.stopping) return;
    tcp::socket sock(*to.io);
    boost::system::error_code ec;
    sock.assign(protocol_of(fd.fd), fd.fd, ec);
    if (ec) return;
    fd.release();
    to.on_accepted(std::move(sock), websocket, bytes);
  });
}

void front_shard::on_accepted(tcp::socket sock, bool websocket, std::string_view read_already) {
  if (stopping) return;  // accepted as the server stopped: the socket closes here
  boost::system::error_code ignored;
  sock.set_option(tcp::no_delay(true), ignored);
  auto s = std::make_shared<session>(std::move(sock), opt.max_payload, websocket);
  // A connection handed over by the web port: its upgrade request was read there; the handshake
  // parses it from here before it reads the socket.
  s->wbuf.commit(asio::buffer_copy(s->wbuf.prepare(read_already.size()), asio::buffer(read_already)));
  ++open_sockets;
  if (n.connections.fetch_add(1, std::memory_order_relaxed) >= opt.max_connections) {
    n.connections.fetch_sub(1, std::memory_order_relaxed);
    add(n.refused);
    add(n.closed_by[static_cast<std::size_t>(close_reason::server_full)]);
    append_frame(s->out, server_message{goodbye{"server full: " + std::to_string(opt.max_connections) +
                                                " connections"}});
    s->closing = true;
    if (websocket) {  // the goodbye needs the handshake; a refused client gets the close alone
      s->out.clear();
      close_socket(*s);
      return;
    }
    write(s);
    lingering.emplace_back(s, clock::now() + linger);
    return;
  }
  add(n.accepted);
  greeting.push_back(s);
  if (websocket) return handshake(s);
  greet(s);
  read(s);
}

// The HTTP upgrade: a client that offers the "scenert" subprotocol gets it and must log in.
void front_shard::handshake(const std::shared_ptr<session>& s) {
  auto& link = std::get<ws_stream>(s->link);
  http::async_read(
      link.next_layer(), s->wbuf, s->upgrade, [this, s](boost::system::error_code ec, std::size_t) {
        if (ec || s->closing) return close(s, close_reason::dropped);
        auto& ws = std::get<ws_stream>(s->link);
        const auto offered = s->upgrade[http::field::sec_websocket_protocol];
        s->login_required = asks_for_scenert(std::string_view(offered.data(), offered.size()));
        if (s->login_required)
          ws.set_option(websocket::stream_base::decorator([](websocket::response_type& r) {
            r.set(http::field::sec_websocket_protocol, std::string(subprotocol));
          }));
        ws.binary(true);
        ws.auto_fragment(false);  // a frame's message goes whole: simple clients read one WebSocket frame
        ws.read_message_max(0);   // no limit on a message: the frame reader limits each frame
        ws.async_accept(s->upgrade, [this, s](boost::system::error_code failed) {
          if (failed || s->closing) return close(s, close_reason::dropped);
          s->upgrade = {};
          s->wbuf.consume(s->wbuf.size());
          s->at = session::stage::greeting;
          s->speaks_scenert = s->login_required;
          greet(s);
          read(s);
        });
      });
}

// ---- bytes in ---------------------------------------------------------------------------------

void front_shard::read(const std::shared_ptr<session>& s) {
  auto done = [this, s](boost::system::error_code ec, std::size_t got) {
    on_read(s, ec, std::string_view(s->rbuf.data(), got));
  };
  // WebSocket: parts of a message as they come, so the frame reader checks each length first.
  if (auto* ws = std::get_if<ws_stream>(&s->link)) return ws->async_read_some(asio::buffer(s->rbuf), done);
  std::get<tcp::socket>(s->link).async_read_some(asio::buffer(s->rbuf), done);
}

void front_shard::on_read(const std::shared_ptr<session>& s, boost::system::error_code ec,
                          std::string_view bytes) {
  if (ec) return close(s, close_reason::dropped);
  if (s->closing) return;
  add(n.bytes_in, bytes.size());
  s->last_rx = clock::now();
  const bool was_partial = s->reader.mid_frame();
  bool whole = false;  // a frame ended in this read: a partial one after it is a new one
  auto fed = s->reader.feed(bytes, [&](std::uint32_t id, std::string_view p) {
    whole = true;
    on_frame(s, id, p);
  });
  if (!fed) {
    add(n.oversize);
    return close(s, close_reason::oversize, fed.error().message);
  }
  auto* ws = std::get_if<ws_stream>(&s->link);
  if (ws != nullptr && ws->is_message_done() && s->reader.mid_frame()) {
    add(n.bad_frames);
    return close(s, close_reason::bad_frames, "a WebSocket message must hold whole frames");
  }
  if (s->reader.mid_frame() && (!was_partial || whole)) s->partial_since = s->last_rx;
  flush();
  if (!s->closing) read(s);
}

// ---- closing ----------------------------------------------------------------------------------

// Says why (unless the client is gone) and closes once the goodbye is written.
void front_shard::close(const std::shared_ptr<session>& s, close_reason why, const std::string& text) {
  if (s->closing) {
    if (why == close_reason::dropped) close_socket(*s);  // the socket failed while the goodbye was on its way
    return;
  }
  s->closing = true;
  add(n.closed);
  add(n.closed_by[static_cast<std::size_t>(why)]);
  n.connections.fetch_sub(1, std::memory_order_relaxed);
  std::erase(greeting, s);
  drop_player(*s, why);
  if (why == close_reason::dropped || why == close_reason::slow_reader) return close_socket(*s);
  std::string said(close_reason_names[static_cast<std::size_t>(why)]);
  if (!text.empty()) said += ": " + text;
  s->out.clear();  // frames not sent yet would only delay the goodbye
  append_frame(s->out, server_message{goodbye{said}});
  count_out(s->out);
  if (s->at == session::stage::handshake) return close_socket(*s);
  write(s);
  lingering.emplace_back(s, clock::now() + linger);  // a client that does not read it is closed anyway
}

void front_shard::close_socket(session& s) {
  if (!s.is_open()) return;
  s.shut();
  --open_sockets;
  stop_when_quiet();
}

void front_shard::stop_when_quiet() {
  if (stopping && open_sockets == 0) io->stop();
}

// Connections closing behind a goodbye their client may never read: closed for good after `linger`.
void front_shard::end_lingering(clock::time_point now) {
  std::erase_if(lingering, [&](auto& l) {
    if (l.first->is_open() && now < l.second) return false;
    close_socket(*l.first);
    return true;
  });
}

// Every quarter second: timeouts, resumes that expired, lingering sockets, connections per line.
void front_shard::sweep() {
  sweep_timer.expires_after(std::chrono::milliseconds(250));
  sweep_timer.async_wait([this](boost::system::error_code ec) {
    if (ec || stopping) return;
    sweep_once(clock::now());
    sweep();
  });
}

void front_shard::sweep_once(clock::time_point now) {
  std::vector<std::pair<std::shared_ptr<session>, close_reason>> late;
  for (auto& s : greeting)
    if (now - s->opened > opt.login_timeout) late.emplace_back(s, close_reason::login_timeout);
  for (auto& [pid, s] : sessions) {
    if (now - s->last_rx > opt.idle_timeout)
      late.emplace_back(s, close_reason::idle);
    else if (s->reader.mid_frame() && now - s->partial_since > opt.read_timeout)
      late.emplace_back(s, close_reason::half_frame);
  }
  for (auto& [s, why] : late) {
    const auto limit = why == close_reason::idle         ? opt.idle_timeout
                       : why == close_reason::half_frame ? opt.read_timeout
                                                         : opt.login_timeout;
    close(s, why, "after " + std::to_string(limit.count()) + " ms");
  }
  if (number == 0) {  // the players waiting for a resume are the shards' in common
    expire_detached(now);
    hub.book.forget_gone(now);
  }
  flush();
  end_lingering(now);
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
  std::lock_guard lock(published_mutex);
  published.swap(out);
}

// ---- bytes out --------------------------------------------------------------------------------

void front_shard::send(session& s, const server_message& m) {
  const std::size_t at = s.out.size();
  append_frame(s.out, m);
  count_out(std::string_view(s.out).substr(at));
  mark(s);
}

void front_shard::push(const std::shared_ptr<session>& s, std::string_view frame) {
  if (s->closing) return;
  s->out.append(frame);
  count_out(frame);
  mark(*s);
}

void front_shard::mark(session& s) {
  if (!s.dirty) {
    s.dirty = true;
    dirty.push_back(s.shared_from_this());
  }
}

// One write per connection per batch: everything queued for it goes in one gathered send.
void front_shard::flush() {
  for (auto& s : dirty) {
    s->dirty = false;
    if (s->closing) continue;
    if (s->out.size() + s->sending.size() > opt.max_outbound_bytes) {
      s->out.clear();  // it does not read: no goodbye would reach it
      close(s, close_reason::slow_reader);
      continue;
    }
    write(s);
  }
  dirty.clear();
}

void front_shard::write(const std::shared_ptr<session>& s) {
  if (s->writing || s->out.empty()) return;
  s->writing = true;
  s->sending.swap(s->out);
  add(n.bytes_out, s->sending.size());
  add(n.writes);
  if (s->websocket()) frame_as_messages(s->sending);
  asio::async_write(s->socket(), asio::buffer(s->sending),
                    [this, s](boost::system::error_code ec, std::size_t) { wrote(s, ec); });
}

// WebSocket: every frame goes as a binary message of its own (simple clients read one frame per
// message), and all of a write's messages in one write to the socket. A message per Beast write cost
// a syscall per frame (9 us of CPU per frame against 1.2 us on TCP); a server's messages are not
// masked (RFC 6455 5.1), so their headers are written here. Beast still reads, answers the client's
// pings and writes the closing handshake (after the last write: see wrote()).
void front_shard::frame_as_messages(std::string& frames) {
  ws_scratch.clear();
  ws_scratch.reserve(frames.size() + frames.size() / 8 + 16);
  for (std::size_t at = 0; at < frames.size();) {
    const std::size_t size = header_size + read_u32(frames.data() + at);
    char head[10] = {static_cast<char>(0x82)};  // FIN, binary
    std::size_t head_size = 2;
    if (size < 126) {
      head[1] = static_cast<char>(size);
    } else if (size <= 0xFFFF) {
      head[1] = 126, head[2] = static_cast<char>(size >> 8), head[3] = static_cast<char>(size & 0xFF);
      head_size = 4;
    } else {
      head[1] = 127;
      for (int i = 0; i < 8; ++i)
        head[2 + i] = static_cast<char>((std::uint64_t{size} >> (56 - 8 * i)) & 0xFF);
      head_size = 10;
    }
    ws_scratch.append(head, head_size).append(frames, at, size);
    at += size;
  }
  frames.swap(ws_scratch);  // the scratch keeps the frames' buffer for the next write
}

void front_shard::wrote(const std::shared_ptr<session>& s, boost::system::error_code ec) {
  s->writing = false;
  if (s->sending.capacity() > session::kept_capacity)
    std::string().swap(s->sending);
  else
    s->sending.clear();
  if (ec) return close(s, close_reason::dropped);
  if (!s->out.empty()) return write(s);
  if (!s->closing) return;
  auto* ws = std::get_if<ws_stream>(&s->link);
  if (ws == nullptr || !ws->is_open()) return close_socket(*s);
  // A clean WebSocket close: our close frame, then the socket (the linger ends a silent peer).
  ws->async_close(websocket::close_code::normal, [this, s](boost::system::error_code) { close_socket(*s); });
}

// ---- the public face --------------------------------------------------------------------------

front::front(std::unique_ptr<impl> i) : impl_(std::move(i)) {}
front::~front() { stop(); }

std::unique_ptr<front> front::create(const scene_table& table, front_options options) {
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

// Says goodbye to this shard's clients and ends its loop once their sockets are closed.
void front_shard::shut_down() {
  stopping = true;
  sweep_timer.cancel();
  for (auto& s : std::vector(greeting)) close(s, close_reason::shutting_down, "the server stops");
  std::vector<std::shared_ptr<session>> all;
  for (auto& [pid, s] : sessions) all.push_back(s);
  const bool hand_off = hub.opt.hand_off_on_stop;
  for (auto& s : all)
    close(s, close_reason::shutting_down,
          hand_off ? "the server stops; log in again with your resume token" : "the server stops");
  if (!hand_off) expire_detached(clock::time_point::max());
  flush();
  stop_when_quiet();
  // A client that does not read its goodbye holds its socket open: the loop ends anyway.
  stop_timer.expires_after(linger);
  stop_timer.async_wait([this](boost::system::error_code) { io->stop(); });
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
  if (!f.opt.hand_off_on_stop) f.shards.front()->expire_detached(clock::time_point::max());
  for (auto& sh : f.shards) sh->feed->batches.close();
}

void front::resync_views() {
  for (auto& sh : impl_->shards)
    asio::post(*sh->io, [&s = *sh] {
      s.drain_lines();
      for (auto& [pid, session] : s.sessions) {
        s.correct_place(*session);
        s.send_view(*session, true);
      }
      s.flush();
    });
}

void front::place_again(player_id p, scene_id scene, std::optional<grid::cell_point> at) {
  impl& f = *impl_;
  std::unique_lock lock(f.roll_mutex);
  if (auto h = f.home.find(p); h != f.home.end()) {
    front_shard& there = *f.shards[h->second];
    lock.unlock();
    return asio::post(*there.io, [&there, p, scene, at] {
      if (auto s = there.sessions.find(p); s != there.sessions.end()) {
        there.enter_world(s->second, world_request::enter(p, scene), 0, at);
        there.flush();
      }
    });
  }
  if (!f.detached.contains(p)) return;  // gone meanwhile
  lock.unlock();
  f.w->submit(world_request::enter(p, scene), [w = f.w, p, at](world_result r) {
    if (r && at) w->submit(world_request::move(p, *at), {});
  });
}

void front::let_go(player_id p) {
  impl& f = *impl_;
  std::unique_lock lock(f.roll_mutex);
  if (auto h = f.home.find(p); h != f.home.end()) {
    front_shard& there = *f.shards[h->second];
    lock.unlock();
    return asio::post(*there.io, [&there, p] { there.let_go(p); });
  }
  auto d = f.detached.find(p);
  if (d == f.detached.end()) return;
  f.tokens.erase(d->second.token);
  f.detached.erase(d);
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
      s.out_by_id[i].frames += g(sh->sent.frames_by_id[i]);
      s.out_by_id[i].bytes += g(sh->sent.bytes_by_id[i]);
    }
  }
  for (const auto& sh : impl_->shards) s.frames_out += g(sh->sent.frames);
  return s;
}

std::vector<line_connections> front::connections_by_line() const {
  std::map<std::pair<scene_id, std::uint32_t>, line_connections> by_line;
  for (const auto& sh : impl_->shards) {
    std::lock_guard lock(sh->published_mutex);
    for (const auto& c : sh->published) {
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
