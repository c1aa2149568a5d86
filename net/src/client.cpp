#include <scenert/net/client.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>  // before Asio: Boost 1.74's asio/awaitable.hpp needs it under g++ 12

#include <boost/asio.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include <cerrno>
#include <cstring>
#include <optional>

namespace scenert::net {

result<std::unique_ptr<client>, client_errc> client::connect(const std::string& host, std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
    return fail(client_errc::connect_failed, "client: '" + host + "' is not an IPv4 address");
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fail(client_errc::connect_failed, std::string("client: socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    ::close(fd);
    return fail(client_errc::connect_failed,
                "client: connect to " + host + ":" + std::to_string(port) + ": " + std::strerror(e));
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return std::unique_ptr<client>(new client(fd));
}

// WebSocket through Beast: one io_context per client, run only inside the client's calls.
struct client::websocket {
  boost::asio::io_context io{1};
  boost::beast::websocket::stream<boost::asio::ip::tcp::socket> ws{io};
  boost::beast::flat_buffer in;
  bool reading = false;                          // an async_read is pending
  std::optional<boost::system::error_code> got;  // its outcome, once done
};

result<std::unique_ptr<client>, client_errc> client::connect_ws(const std::string& host, std::uint16_t port,
                                                                const std::string& subprotocol,
                                                                const std::string& path) {
  namespace bws = boost::beast::websocket;
  auto w = std::make_unique<websocket>();
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  if (!ec) w->ws.next_layer().connect({address, port}, ec);
  if (!ec) w->ws.next_layer().set_option(boost::asio::ip::tcp::no_delay(true), ec);
  if (!subprotocol.empty())
    w->ws.set_option(bws::stream_base::decorator([subprotocol](bws::request_type& r) {
      r.set(boost::beast::http::field::sec_websocket_protocol, subprotocol);
    }));
  if (!ec) w->ws.handshake(host + ":" + std::to_string(port), path, ec);
  if (ec)
    return fail(client_errc::connect_failed,
                "client: WebSocket to " + host + ":" + std::to_string(port) + ": " + ec.message());
  w->ws.binary(true);
  return std::unique_ptr<client>(new client(std::move(w)));
}

client::client(int fd) : fd_(fd) {}
client::client(std::unique_ptr<websocket> ws) : ws_(std::move(ws)) {}
client::~client() { close(); }

void client::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (ws_) {
    boost::system::error_code ignored;
    ws_->ws.next_layer().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    ws_->ws.next_layer().close(ignored);
    ws_.reset();
  }
}

result<void, client_errc> client::send(const client_message& m) {
  std::string bytes;
  append_frame(bytes, m);
  return send_bytes(bytes);
}

result<void, client_errc> client::send_bytes(std::string_view bytes) {
  if (ws_) {
    boost::system::error_code ec;
    ws_->ws.write(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    if (ec) return fail(client_errc::closed, "client: WebSocket write: " + ec.message());
    return {};
  }
  while (!bytes.empty()) {
    if (fd_ < 0) return fail(client_errc::closed, "client: closed");
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(client_errc::closed, std::string("client: send: ") + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

result<server_message, client_errc> client::receive(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[16 * 1024];
  while (ready_.empty() && ws_) {
    if (!ws_->reading) {
      ws_->reading = true;
      ws_->got.reset();
      ws_->ws.async_read(ws_->in,
                         [w = ws_.get()](boost::system::error_code ec, std::size_t) { w->got = ec; });
    }
    ws_->io.restart();
    ws_->io.run_until(deadline);
    if (!ws_->got)
      return fail(client_errc::timeout, "client: nothing within " + std::to_string(timeout.count()) + " ms");
    ws_->reading = false;
    if (*ws_->got)
      return fail(client_errc::closed, "client: the server closed the WebSocket: " + ws_->got->message());
    const auto data = ws_->in.cdata();
    auto took = take(std::string_view(static_cast<const char*>(data.data()), data.size()));
    ws_->in.consume(ws_->in.size());
    if (!took) return took.error();
  }
  while (ready_.empty()) {
    if (fd_ < 0) return fail(client_errc::closed, "client: closed");
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return fail(client_errc::timeout, "client: nothing within " + std::to_string(timeout.count()) + " ms");
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n == 0) return fail(client_errc::closed, "client: the server closed the connection");
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(client_errc::closed, std::string("client: recv: ") + std::strerror(errno));
    }
    if (auto took = take(std::string_view(buf, static_cast<std::size_t>(n))); !took) return took.error();
  }
  server_message m = std::move(ready_.front());
  ready_.pop_front();
  return m;
}

// Decodes the frames in `bytes` (a part of the TCP stream, or one WebSocket message) into ready_.
result<void, client_errc> client::take(std::string_view bytes) {
  error_.clear();
  auto fed = reader_.feed(bytes, [&](std::uint32_t id, std::string_view payload) {
    auto m = decode_server(id, payload);
    if (m)
      ready_.push_back(std::move(m).value());
    else if (error_.empty())
      error_ = m.error().message;
  });
  if (!fed) return fail(client_errc::bad_frame, "client: " + fed.error().message);
  if (!error_.empty()) return fail(client_errc::bad_frame, "client: " + error_);
  return {};
}

}  // namespace scenert::net
