// The HTTP server: one io_context on one thread; each connection is a session that alone reads,
// answers and closes its socket, with a deadline on every stage (header, body, write, keep-alive
// idle) so an idle or half-sent request costs a timer, never a thread.
#include <scenert/net/http_server.hpp>

#include <utility>  // before Asio and Beast: Boost 1.74's asio/awaitable.hpp needs it under g++ 12

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include <algorithm>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace scenert::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

http_routes& http_routes::on(std::string path, http_handler handler) {
  if (handler) exact.insert_or_assign(std::move(path), http_route{std::move(handler), false, {}, {}});
  return *this;
}

http_routes& http_routes::on_slow(std::string path, http_handler handler) {
  if (handler) exact.insert_or_assign(std::move(path), http_route{std::move(handler), true, {}, {}});
  return *this;
}

http_routes& http_routes::on_prefix(std::string p, http_handler handler) {
  if (handler) prefix.insert_or_assign(std::move(p), http_route{std::move(handler), false, {}, {}});
  return *this;
}

http_routes& http_routes::on_prefix_async(std::string p, http_async_handler handler,
                                          std::chrono::milliseconds timeout) {
  if (handler) prefix.insert_or_assign(std::move(p), http_route{{}, false, std::move(handler), timeout});
  return *this;
}

http_routes& http_routes::on_upgrade(std::string path, http_upgrade_handler handler) {
  if (handler) upgrade.insert_or_assign(std::move(path), std::move(handler));
  return *this;
}

namespace {

class session;

// The way to the I/O thread for the threads an asynchronous answer comes from, which may outlive the
// server: a post holds the lock, and the server clears `io` (under it) before it stops, so a late
// answer is dropped instead of posted to an io_context that is gone.
struct io_link {
  std::mutex m;
  asio::io_context* io = nullptr;
};

}  // namespace

// One asynchronous request's answer, shared by the copies of its http_reply and its session's timer.
struct http_reply_state {
  std::shared_ptr<io_link> link;
  std::weak_ptr<session> waiting;  // only the I/O thread's hands (the timer, a posted answer) hold it
  std::mutex m;
  bool answered = false;  // the first answer (or the timeout) sets it; the rest are dropped
  http_response late;
};

namespace {

using beast_request = http::request<http::string_body>;
using beast_response = http::response<http::string_body>;

// How long a closing connection may keep sending before it is cut: enough for a client to read our
// last answer and close first (closing with its bytes unread would reset the answer away).
constexpr std::chrono::seconds linger_time{2};

// What the sessions share with the server; touched on the I/O thread only (and by the destructor
// after the thread joined), except `routes` and `helper`, which are set before and read-only after.
struct server_state {
  http_routes routes;
  http_server_options options;
  std::size_t connections = 0;
  asio::thread_pool* helper = nullptr;  // runs the slow routes; null when there are none
  std::shared_ptr<io_link> link;        // handed to asynchronous replies
};

// An exact route, else the longest prefix route; fills `req.rest` for a prefix.
const http_route* find_route(const http_routes& routes, http_request& req) {
  if (auto it = routes.exact.find(req.path); it != routes.exact.end()) return &it->second;
  const std::pair<const std::string, http_route>* best = nullptr;
  for (const auto& entry : routes.prefix)
    if (req.path.starts_with(entry.first) && (!best || entry.first.size() > best->first.size()))
      best = &entry;
  if (!best) return nullptr;
  req.rest = req.path.substr(best->first.size());
  return &best->second;
}

std::string_view view(beast::string_view s) { return {s.data(), s.size()}; }

http_request to_request(const beast_request& m) {
  const std::string_view target = view(m.target());
  const auto q = target.find('?');
  http_request r{std::string(view(m.method_string())), std::string(target.substr(0, q)), {}, {}};
  if (q != std::string_view::npos) r.query = std::string(target.substr(q + 1));
  return r;
}

http_response call(const http_handler& handler, const http_request& req) {
  try {
    return handler(req);
  } catch (...) {
    // A handler's exception stays here: the I/O loop serves everyone else.
    return {500, "text/plain; charset=utf-8", "internal error\n", {}};
  }
}

beast_response to_beast(http_response out, unsigned version, bool head, bool keep_alive) {
  beast_response res;
  res.version(version);
  res.result(static_cast<unsigned>(out.status));
  res.set(http::field::server, "scenert");
  res.set(http::field::content_type, out.content_type);
  for (const auto& [name, value] : out.headers) res.set(name, value);
  res.keep_alive(keep_alive);
  if (head) {
    res.content_length(out.body.size());  // HEAD: the length a GET would get, no body
  } else {
    res.body() = std::move(out.body);
    res.prepare_payload();
  }
  return res;
}

// The answer to a request that cannot be read to its end; nothing for a client that went away or
// ran out of time (its socket is closed already).
std::optional<http::status> status_for(const error_code& ec) {
  if (ec == http::error::header_limit) return http::status::request_header_fields_too_large;
  if (ec == http::error::body_limit) return http::status::payload_too_large;
  if (ec == http::error::end_of_stream || ec == http::error::partial_message) return std::nullopt;
  if (ec.category() == http::make_error_code(http::error::bad_method).category())
    return http::status::bad_request;
  return std::nullopt;
}

bool allowed(http::verb v) { return v == http::verb::get || v == http::verb::head; }

class session : public std::enable_shared_from_this<session> {
 public:
  session(tcp::socket socket, server_state& state)
      : stream_(std::move(socket)), reply_timer_(stream_.get_executor()), state_(state) {
    ++state_.connections;
  }
  ~session() { --state_.connections; }
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  // The first request's header deadline runs from the accept: a socket that sends nothing is
  // closed as surely as one that sends half a line.
  void start() { read_header(); }
  // An asynchronous handler's answer, on the I/O thread.
  void deliver(http_response out);

 private:
  void wait_for_next();
  void read_header();
  void on_header(const error_code& ec);
  void read_body();
  void on_request(const error_code& ec);
  void offload(const http_handler& handler, http_request req);
  void wait_for_reply(const http_route& route, http_request req);
  void answer(http_response out);
  void answer_error(http::status status, http::field extra = http::field::unknown, std::string value = {});
  void send(beast_response res);
  void on_sent(const error_code& ec);
  void linger();
  void drain();
  void hand_off(const http_upgrade_handler& handler);

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  beast_response res_;
  asio::steady_timer reply_timer_;  // an asynchronous answer's deadline
  server_state& state_;
};

// Between keep-alive requests: the idle deadline until the next request's first byte, then the
// header deadline from there.
void session::wait_for_next() {
  stream_.expires_after(state_.options.idle_timeout);
  stream_.async_read_some(buffer_.prepare(1024), [self = shared_from_this()](error_code ec, std::size_t n) {
    if (ec) return;
    self->buffer_.commit(n);
    self->read_header();
  });
}

void session::read_header() {
  parser_.emplace();
  parser_->header_limit(state_.options.max_header_bytes);
  parser_->body_limit(state_.options.max_body_bytes);
  stream_.expires_after(state_.options.header_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](error_code ec, std::size_t) { self->on_header(ec); });
}

void session::on_header(const error_code& ec) {
  if (ec) {
    if (auto status = status_for(ec)) answer_error(*status);
    return;
  }
  // A method we do not serve is refused before its body is read; the close drains what it sent.
  if (!allowed(parser_->get().method()))
    return answer_error(http::status::method_not_allowed, http::field::allow, "GET, HEAD");
  if (parser_->is_done()) return on_request({});
  read_body();
}

void session::read_body() {
  stream_.expires_after(state_.options.body_timeout);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](error_code ec, std::size_t) { self->on_request(ec); });
}

void session::on_request(const error_code& ec) {
  if (ec) {
    if (auto status = status_for(ec)) answer_error(*status);
    return;
  }
  http_request req = to_request(parser_->get());
  if (auto up = state_.routes.upgrade.find(req.path); up != state_.routes.upgrade.end()) {
    if (!beast::websocket::is_upgrade(parser_->get()))
      return answer({426,
                     "text/plain; charset=utf-8",
                     "a WebSocket endpoint: upgrade required\n",
                     {{"Upgrade", "websocket"}}});
    return hand_off(up->second);
  }
  const http_route* route = find_route(state_.routes, req);
  if (!route) return answer({404, "text/plain; charset=utf-8", "not found\n", {}});
  if (route->async) return wait_for_reply(*route, std::move(req));
  if (route->slow && state_.helper) return offload(route->handler, std::move(req));
  answer(call(route->handler, req));
}

// The handler runs on the helper thread; its answer comes back to the I/O thread, which alone
// touches the session. Nothing else is read from this connection meanwhile.
void session::offload(const http_handler& handler, http_request req) {
  asio::post(*state_.helper, [self = shared_from_this(), io = stream_.get_executor(), &handler,
                              req = std::move(req)]() mutable {
    asio::post(
        io, [self = std::move(self), out = call(handler, req)]() mutable { self->answer(std::move(out)); });
  });
}

// The answer comes from another thread through an http_reply. The timer holds the session meanwhile
// (the reply's copies hold it weakly: they may outlive the server) and answers the late answer when
// nothing came in time. Nothing else is read from this connection meanwhile.
void session::wait_for_reply(const http_route& route, http_request req) {
  auto st = std::make_shared<http_reply_state>();
  st->link = state_.link;
  st->waiting = weak_from_this();
  st->late = {
      503, "text/plain; charset=utf-8", fmt::format("no answer within {} ms\n", route.timeout.count()), {}};
  reply_timer_.expires_after(route.timeout);
  reply_timer_.async_wait([self = shared_from_this(), st](error_code ec) {
    if (ec) return;  // cancelled: the answer came
    http_response late;
    {
      std::lock_guard lock(st->m);
      if (std::exchange(st->answered, true)) return;  // an answer is on its way to deliver()
      late = std::move(st->late);
    }
    self->answer(std::move(late));
  });
  try {
    route.async(req, http_reply{st});
  } catch (...) {
    http_reply{st}.answer({500, "text/plain; charset=utf-8", "internal error\n", {}});
  }
}

void session::deliver(http_response out) {
  reply_timer_.cancel();
  answer(std::move(out));
}

void session::answer(http_response out) {
  const beast_request& m = parser_->get();
  send(to_beast(std::move(out), m.version(), m.method() == http::verb::head, m.keep_alive()));
}

void session::answer_error(http::status status, http::field extra, std::string value) {
  http_response out;
  out.status = static_cast<int>(status);
  out.body = fmt::format("{}\n", view(http::obsolete_reason(status)));
  const unsigned version = parser_ && parser_->is_header_done() ? parser_->get().version() : 11;
  beast_response res = to_beast(std::move(out), version, false, false);
  if (extra != http::field::unknown) res.set(extra, value);
  send(std::move(res));
}

void session::send(beast_response res) {
  res_ = std::move(res);
  stream_.expires_after(state_.options.write_timeout);
  http::async_write(stream_, res_,
                    [self = shared_from_this()](error_code ec, std::size_t) { self->on_sent(ec); });
}

void session::on_sent(const error_code& ec) {
  if (ec) return;
  if (res_.need_eof()) return linger();
  res_ = {};
  // Bytes already here are the next (pipelined) request: its header deadline starts now.
  if (buffer_.size() > 0) return read_header();
  wait_for_next();
}

// The request as it came (Beast writes it back out) and what followed it go with the socket: the new
// owner reads them first, then the socket.
void session::hand_off(const http_upgrade_handler& handler) {
  std::ostringstream head;
  head << parser_->get();
  http_upgrade up;
  up.bytes = head.str();
  up.bytes.append(static_cast<const char*>(buffer_.data().data()), buffer_.size());
  buffer_.consume(buffer_.size());
  stream_.expires_never();
  error_code ec;
  up.socket = stream_.socket().release(ec);
  if (ec) return;  // the socket stays ours and closes with the session
  try {
    handler(std::move(up));
  } catch (...) {
    // The handler owns the socket even when it throws; the I/O loop serves everyone else.
  }
}

// Closes our side after the last answer, then reads and drops what the client still sends until it
// closes or the linger deadline passes.
void session::linger() {
  error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  buffer_.consume(buffer_.size());
  stream_.expires_after(linger_time);
  drain();
}

void session::drain() {
  stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](error_code ec, std::size_t) {
    if (!ec) self->drain();
  });
}

}  // namespace

void http_reply::answer(http_response out) const {
  io_link& link = *state_->link;
  std::lock_guard lock(link.m);
  if (link.io == nullptr) return;  // the server stopped
  // The session is taken before the answer is claimed: a timer that sees it claimed lets go of the
  // session, and this one must already hold it. Taken while the io_context cannot go away, it is the
  // io_context's to free from here on.
  auto s = state_->waiting.lock();
  if (!s) return;  // the late answer went out and the connection moved on or closed
  bool first = false;
  {
    std::lock_guard claim(state_->m);
    first = !std::exchange(state_->answered, true);
  }
  // Sent or not, the session is let go on the I/O thread, the only one that may free it.
  asio::post(*link.io, [s = std::move(s), out = std::move(out), first]() mutable {
    if (first) s->deliver(std::move(out));
  });
}

void http_reply::on_timeout(http_response late) const {
  std::lock_guard lock(state_->m);
  state_->late = std::move(late);
}

struct http_server::impl {
  server_state state;  // first: the sessions that the io_context's destructor frees still count here
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer retry{io};
  std::optional<asio::thread_pool> helper;  // after io: its queued work holds sessions, freed first
  std::thread thread;

  void accept();
  void on_accept(const error_code& ec, tcp::socket socket);
  result<void, http_errc> listen(const std::string& host, std::uint16_t port);
};

void http_server::impl::accept() {
  acceptor.async_accept([this](error_code ec, tcp::socket socket) { on_accept(ec, std::move(socket)); });
}

void http_server::impl::on_accept(const error_code& ec, tcp::socket socket) {
  if (ec == asio::error::operation_aborted) return;
  if (ec) {
    // Out of descriptors or memory: the connection waits in the backlog; try again shortly rather
    // than spin on the same error.
    retry.expires_after(std::chrono::milliseconds(50));
    retry.async_wait([this](error_code e) {
      if (!e) accept();
    });
    return;
  }
  if (state.connections >= state.options.max_connections) {
    error_code ignored;
    socket.close(ignored);  // at once: a slot is worth more to the next probe than an answer here
  } else {
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);  // an answer must not wait for a delayed ACK
    std::make_shared<session>(std::move(socket), state)->start();
  }
  accept();
}

result<void, http_errc> http_server::impl::listen(const std::string& host, std::uint16_t port) {
  const auto where = fmt::format("{} endpoint {}:{}", state.options.name, host, port);
  error_code ec;
  tcp::resolver resolver(io);
  const auto found = resolver.resolve(host, std::to_string(port), tcp::resolver::numeric_service, ec);
  if (ec || found.empty())
    return fail(http_errc::bad_endpoint, fmt::format("{}: cannot resolve the host: {}", where, ec.message()));
  const tcp::endpoint at = found.begin()->endpoint();
  acceptor.open(at.protocol(), ec);
  // SO_REUSEADDR only (no SO_REUSEPORT): a restart binds past TIME_WAIT, a second server does not.
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail(http_errc::bind_failed, fmt::format("{}: cannot bind: {}", where, ec.message()));
  return {};
}

result<std::unique_ptr<http_server>, http_errc> http_server::start(const std::string& host,
                                                                   std::uint16_t port, http_routes routes,
                                                                   http_server_options options) {
  auto i = std::make_unique<impl>();
  i->state.routes = std::move(routes);
  i->state.link = std::make_shared<io_link>();
  i->state.link->io = &i->io;
  i->state.options = std::move(options);
  if (auto bound = i->listen(host, port); !bound) return bound.error();
  const auto& exact = i->state.routes.exact;
  if (std::any_of(exact.begin(), exact.end(), [](const auto& r) { return r.second.slow; })) {
    i->helper.emplace(1);
    i->state.helper = &*i->helper;
  }
  error_code ec;
  const auto chosen = i->acceptor.local_endpoint(ec).port();
  i->accept();
  i->thread = std::thread([p = i.get()] { p->io.run(); });
  return std::unique_ptr<http_server>(new http_server(std::move(i), chosen));
}

http_server::http_server(std::unique_ptr<impl> i, std::uint16_t port) : impl_(std::move(i)), port_(port) {}

http_server::~http_server() {
  {
    // First: an asynchronous answer from now on is dropped, not posted.
    std::lock_guard lock(impl_->state.link->m);
    impl_->state.link->io = nullptr;
  }
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  // A slow handler still running finishes; the queued ones are dropped with their connections.
  if (impl_->helper) {
    impl_->helper->stop();
    impl_->helper->join();
  }
  // impl's members go in reverse: the helper's dropped work, the acceptor, then the io_context with
  // every pending handler and the sessions they hold, then the state those sessions count in.
}

}  // namespace scenert::net
