// A connection's I/O: the WebSocket handshake, reads into the frame reader, one gathered write at a
// time, closes with reasons, the guest wait and the linger after a goodbye.
#include "session.hpp"

namespace scenert::net {
namespace websocket = beast::websocket;
namespace http = beast::http;

namespace {

std::variant<tcp::socket, ws_stream> link_of(tcp::socket s, bool websocket) {
  if (websocket) return ws_stream(std::move(s));
  return s;
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

// A WebSocket message's header for a payload of `size` bytes: FIN, binary, unmasked (RFC 6455 5.2).
std::string_view message_head(std::size_t size, char (&head)[10]) {
  head[0] = static_cast<char>(0x82);
  if (size < 126) {
    head[1] = static_cast<char>(size);
    return {head, 2};
  }
  if (size <= 0xFFFF) {
    head[1] = 126, head[2] = static_cast<char>(size >> 8), head[3] = static_cast<char>(size & 0xFF);
    return {head, 4};
  }
  head[1] = 127;
  for (int i = 0; i < 8; ++i) head[2 + i] = static_cast<char>((std::uint64_t{size} >> (56 - 8 * i)) & 0xFF);
  return {head, 10};
}

}  // namespace

// WebSocket: every frame goes as a binary message of its own (simple clients read one frame per
// message), and all of a write's messages in one write to the socket. A message per Beast write cost
// a syscall per frame (9 us of CPU per frame against 1.2 us on TCP); a server's messages are not
// masked (RFC 6455 5.1), so their headers are written here. Beast still reads, answers the client's
// pings and writes the closing handshake (after the last write: see wrote()).
void frame_as_messages(std::string& frames, std::string& scratch) {
  scratch.clear();
  scratch.reserve(frames.size() + frames.size() / 8 + 16);
  for (std::size_t at = 0; at < frames.size();) {
    const std::size_t size = header_size + read_u32(frames.data() + at);
    char head[10];
    scratch.append(message_head(size, head)).append(frames, at, size);
    at += size;
  }
  frames.swap(scratch);  // the scratch keeps the frames' buffer for the next write
}

session::session(session_host& host, const front_options& opt, tcp::socket sock, bool websocket,
                 std::string_view read_already)
    : host_(host),
      opt_(opt),
      link_(link_of(std::move(sock), websocket)),
      stage_(websocket ? stage::handshake : stage::greeting),
      guest_timer_(socket().get_executor()),
      linger_timer_(socket().get_executor()),
      reader_(opt.max_payload) {
  // A connection handed over by the web port: its upgrade request was read there; the handshake
  // parses it from here before it reads the socket.
  wbuf_.commit(asio::buffer_copy(wbuf_.prepare(read_already.size()), asio::buffer(read_already)));
}

session::~session() = default;

tcp::socket& session::socket() noexcept {
  if (auto* ws = std::get_if<ws_stream>(&link_)) return ws->next_layer();
  return std::get<tcp::socket>(link_);
}

void session::start() {
  if (websocket()) return handshake();
  host_.greeted(shared_from_this());
  read();
}

void session::refuse(const std::string& why) {
  closing_ = true;
  if (websocket()) return shut();  // the goodbye needs the handshake; a refused client gets the close alone
  append_frame(out_, server_message{goodbye{why}});
  write();
  start_linger();
}

// ---- the WebSocket handshake ------------------------------------------------------------------

// The HTTP upgrade: a client that offers the "scenert" subprotocol gets it and must log in.
void session::handshake() {
  auto& ws = std::get<ws_stream>(link_);
  http::async_read(ws.next_layer(), wbuf_, upgrade_,
                   [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                     if (ec || self->closing_) return self->close(close_reason::dropped);
                     self->accept_upgrade();
                   });
}

void session::accept_upgrade() {
  auto& ws = std::get<ws_stream>(link_);
  const auto offered = upgrade_[http::field::sec_websocket_protocol];
  login_required_ = asks_for_scenert(std::string_view(offered.data(), offered.size()));
  if (login_required_)
    ws.set_option(websocket::stream_base::decorator([](websocket::response_type& r) {
      r.set(http::field::sec_websocket_protocol, std::string(subprotocol));
    }));
  ws.binary(true);
  ws.auto_fragment(false);  // a frame's message goes whole: simple clients read one WebSocket frame
  ws.read_message_max(0);   // no limit on a message: the frame reader limits each frame
  ws.async_accept(upgrade_, [self = shared_from_this()](boost::system::error_code failed) {
    if (failed || self->closing_) return self->close(close_reason::dropped);
    self->upgrade_ = {};
    self->wbuf_.consume(self->wbuf_.size());
    self->stage_ = stage::greeting;
    self->host_.greeted(self);
    self->read();
  });
}

// ---- bytes in ---------------------------------------------------------------------------------

void session::read() {
  auto done = [self = shared_from_this()](boost::system::error_code ec, std::size_t got) {
    self->on_read(ec, std::string_view(self->rbuf_.data(), got));
  };
  // WebSocket: parts of a message as they come, so the frame reader checks each length first.
  if (auto* ws = std::get_if<ws_stream>(&link_)) return ws->async_read_some(asio::buffer(rbuf_), done);
  std::get<tcp::socket>(link_).async_read_some(asio::buffer(rbuf_), done);
}

void session::on_read(boost::system::error_code ec, std::string_view bytes) {
  if (ec) return close(close_reason::dropped);
  if (closing_) return;
  auto& n = host_.counters();
  front_counters::add(n.bytes_in, bytes.size());
  last_rx_ = clock::now();
  const bool was_partial = reader_.mid_frame();
  bool whole = false;  // a frame ended in this read: a partial one after it is a new one
  const auto self = shared_from_this();
  auto fed = reader_.feed(bytes, [&](std::uint32_t id, std::string_view p) {
    whole = true;
    host_.frame_in(self, id, p);
  });
  if (!fed) {
    front_counters::add(n.oversize);
    return close(close_reason::oversize, fed.error().message);
  }
  auto* ws = std::get_if<ws_stream>(&link_);
  if (ws != nullptr && ws->is_message_done() && reader_.mid_frame()) {
    front_counters::add(n.bad_frames);
    return close(close_reason::bad_frames, "a WebSocket message must hold whole frames");
  }
  if (reader_.mid_frame() && (!was_partial || whole)) partial_since_ = last_rx_;
  host_.read_done();
  if (!closing_) read();
}

// ---- timers -----------------------------------------------------------------------------------

// Bytes that arrived but are not read yet (a busy I/O thread runs this timer and that read in either
// order) are a frame on its way.
void session::wait_for_login(std::chrono::milliseconds wait, std::function<void()> then) {
  guest_timer_.expires_after(wait);
  guest_timer_.async_wait([self = shared_from_this(), then = std::move(then)](boost::system::error_code ec) {
    if (ec || self->closing_ || self->stage_ != stage::greeting || self->reader_.mid_frame()) return;
    if (boost::system::error_code unread; self->socket().available(unread) > 0 && !unread) return;
    then();
  });
}

void session::stop_waiting() { guest_timer_.cancel(); }

void session::logged_in() {
  guest_timer_.cancel();
  stage_ = stage::in;
}

std::optional<std::pair<close_reason, std::chrono::milliseconds>> session::overdue(
    clock::time_point now) const {
  if (stage_ != stage::in) {
    if (now - opened_ > opt_.login_timeout) return std::pair{close_reason::login_timeout, opt_.login_timeout};
    return std::nullopt;
  }
  if (now - last_rx_ > opt_.idle_timeout) return std::pair{close_reason::idle, opt_.idle_timeout};
  if (reader_.mid_frame() && now - partial_since_ > opt_.read_timeout)
    return std::pair{close_reason::half_frame, opt_.read_timeout};
  return std::nullopt;
}

// A client that does not read its goodbye is closed anyway.
void session::start_linger() {
  linger_timer_.expires_after(linger);
  linger_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->shut();
  });
}

// ---- closing ----------------------------------------------------------------------------------

void session::close(close_reason why, const std::string& text, std::uint32_t retry_after_ms) {
  if (closing_) {
    if (why == close_reason::dropped) shut();  // the socket failed while the goodbye was on its way
    return;
  }
  closing_ = true;
  const auto self = shared_from_this();  // the host may drop its own pointer to this one
  host_.counters().count_close(why);
  host_.closing(*this, why);
  if (why == close_reason::dropped || why == close_reason::slow_reader) return shut();
  std::string said(close_reason_names[static_cast<std::size_t>(why)]);
  if (!text.empty()) said += ": " + text;
  out_.clear();  // frames not sent yet would only delay the goodbye
  append_frame(out_, server_message{goodbye{said, retry_after_ms}});
  host_.sent().count(out_);
  if (stage_ == stage::handshake) return shut();
  write();
  start_linger();
}

void session::shut() noexcept {
  if (!socket().is_open()) return;
  boost::system::error_code ignored;
  socket().shutdown(tcp::socket::shutdown_both, ignored);
  socket().close(ignored);
  guest_timer_.cancel();
  linger_timer_.cancel();
  host_.socket_closed();
}

// ---- bytes out --------------------------------------------------------------------------------

void session::send(const server_message& m) {
  const std::size_t at = out_.size();
  append_frame(out_, m);
  host_.sent().count(std::string_view(out_).substr(at));
  mark();
}

void session::push(std::string_view frames) {
  if (closing_) return;
  out_.append(frames);
  host_.sent().count(frames);
  mark();
}

void session::mark() {
  if (dirty_) return;
  dirty_ = true;
  host_.queued(shared_from_this());
}

void session::flush() {
  dirty_ = false;
  if (closing_) return;
  if (out_.size() + sending_.size() > opt_.max_outbound_bytes) {
    out_.clear();  // it does not read: no goodbye would reach it
    return close(close_reason::slow_reader);
  }
  write();
}

void session::write() {
  if (writing_ || out_.empty()) return;
  writing_ = true;
  sending_.swap(out_);
  auto& n = host_.counters();
  front_counters::add(n.bytes_out, sending_.size());
  front_counters::add(n.writes);
  if (websocket()) frame_as_messages(sending_, host_.ws_scratch());
  asio::async_write(
      socket(), asio::buffer(sending_),
      [self = shared_from_this()](boost::system::error_code ec, std::size_t) { self->wrote(ec); });
}

void session::wrote(boost::system::error_code ec) {
  writing_ = false;
  if (sending_.capacity() > kept_capacity)
    std::string().swap(sending_);
  else
    sending_.clear();
  if (ec) return close(close_reason::dropped);
  if (!out_.empty()) return write();
  if (!closing_) return;
  auto* ws = std::get_if<ws_stream>(&link_);
  if (ws == nullptr || !ws->is_open()) return shut();
  // A clean WebSocket close: our close frame, then the socket (the linger ends a silent peer).
  ws->async_close(websocket::close_code::normal,
                  [self = shared_from_this()](boost::system::error_code) { self->shut(); });
}

}  // namespace scenert::net
