#pragma once
// Shared by the HTTP tests (net and apps): a blocking HTTP/1.1 client over a plain loopback socket.
// It sends any bytes, broken ones included (half a request line, an oversized header), and reads one
// answer with a deadline, so a test never waits longer than it says.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "../loopback_socket.hpp"

namespace scenert::test {

/// One answer: the status, the header fields (names in lower case) and the body.
struct http_answer {
  int status = 0;
  std::map<std::string, std::string> fields;
  std::string body;
};

/// A GET (or another method) of `target` with Host set; `extra` is added to the header as is.
inline std::string http_request_text(std::string_view target, std::string_view extra = {},
                                     std::string_view method = "GET") {
  std::string r(method);
  r.append(" ").append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  r.append(extra).append("\r\n");
  return r;
}

/// One TCP connection to 127.0.0.1:port. Thread-safety: none (one test thread uses it).
class http_probe {
 public:
  using clock = std::chrono::steady_clock;

  /// Connects (blocking; loopback answers at once); nullopt when the connection is refused.
  static std::optional<http_probe> connect(std::uint16_t port) {
    const int fd = connect_loopback(port);
    if (fd < 0) return std::nullopt;
    return http_probe(fd);
  }
  http_probe(http_probe&& o) noexcept : fd_(std::exchange(o.fd_, -1)), pending_(std::move(o.pending_)) {}
  http_probe& operator=(http_probe&&) = delete;
  http_probe(const http_probe&) = delete;
  ~http_probe() {
    if (fd_ >= 0) ::close(fd_);
  }

  /// Sends every byte; false when the server closed or reset the connection.
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  /// Reads one answer within `timeout`; nullopt when the connection closed or time ran out first.
  /// `head`: the answer to a HEAD has a Content-Length but no body.
  std::optional<http_answer> read_answer(std::chrono::milliseconds timeout, bool head = false) {
    const auto deadline = clock::now() + timeout;
    std::size_t end;
    while ((end = pending_.find("\r\n\r\n")) == std::string::npos)
      if (fill(deadline) <= 0) return std::nullopt;
    http_answer a = parse_header(std::string_view(pending_).substr(0, end));
    pending_.erase(0, end + 4);
    const auto length = a.fields.contains("content-length") && !head
                            ? std::strtoull(a.fields["content-length"].c_str(), nullptr, 10)
                            : 0;
    while (pending_.size() < length)
      if (fill(deadline) <= 0) return std::nullopt;
    a.body = pending_.substr(0, length);
    pending_.erase(0, length);
    return a;
  }

  /// True when the server closes (or resets) the connection within `timeout`; what it sends
  /// meanwhile is dropped.
  bool closed_within(std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    for (;;) {
      const int got = fill(deadline);
      if (got == 0) return true;
      if (got < 0) return false;
      pending_.clear();
    }
  }

 private:
  explicit http_probe(int fd) : fd_(fd) {}

  // Bytes read into pending_ (> 0), 0 when the server closed or reset, -1 when time ran out.
  int fill(clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    pollfd p{fd_, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return -1;
    char buf[4096];
    const auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return 0;
    pending_.append(buf, static_cast<std::size_t>(n));
    return static_cast<int>(n);
  }

  static http_answer parse_header(std::string_view text) {
    http_answer a;
    const auto line_end = text.find("\r\n");
    const auto status_line = text.substr(0, line_end);  // "HTTP/1.1 200 OK"
    if (const auto sp = status_line.find(' '); sp != std::string_view::npos)
      a.status = std::atoi(std::string(status_line.substr(sp + 1, 3)).c_str());
    text.remove_prefix(line_end == std::string_view::npos ? text.size() : line_end + 2);
    while (!text.empty()) {
      const auto eol = std::min(text.find("\r\n"), text.size());
      const auto line = text.substr(0, eol);
      if (const auto colon = line.find(':'); colon != std::string_view::npos) {
        std::string name(line.substr(0, colon));
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        auto value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        a.fields[name] = std::string(value);
      }
      text.remove_prefix(std::min(eol + 2, text.size()));
    }
    return a;
  }

  int fd_;
  std::string pending_;
};

/// Opens a promise once; its destructor opens it too, so a failed assertion never leaves a slow
/// handler waiting on it (the server's destructor would wait for that handler).
struct gate {
  std::promise<void>& p;
  bool opened = false;
  void open() {
    if (!std::exchange(opened, true)) p.set_value();
  }
  ~gate() { open(); }
};

/// Opens a connection, sends one GET of `target` with `Connection: close` and reads the answer.
inline std::optional<http_answer> http_get(std::uint16_t port, std::string_view target,
                                           std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  auto probe = http_probe::connect(port);
  if (!probe || !probe->send(http_request_text(target, "Connection: close\r\n"))) return std::nullopt;
  return probe->read_answer(timeout);
}

}  // namespace scenert::test
