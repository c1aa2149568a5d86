#include <scenert/net/client.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

client::client(int fd) : fd_(fd) {}
client::~client() { close(); }

void client::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

result<void, client_errc> client::send(const client_message& m) {
  std::string bytes;
  append_frame(bytes, m);
  return send_bytes(bytes);
}

result<void, client_errc> client::send_bytes(std::string_view bytes) {
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
    error_.clear();
    auto fed = reader_.feed(std::string_view(buf, static_cast<std::size_t>(n)),
                            [&](std::uint32_t id, std::string_view payload) {
                              auto m = decode_server(id, payload);
                              if (m)
                                ready_.push_back(std::move(m).value());
                              else if (error_.empty())
                                error_ = m.error().message;
                            });
    if (!fed) return fail(client_errc::bad_frame, "client: " + fed.error().message);
    if (!error_.empty()) return fail(client_errc::bad_frame, "client: " + error_);
  }
  server_message m = std::move(ready_.front());
  ready_.pop_front();
  return m;
}

}  // namespace scenert::net
