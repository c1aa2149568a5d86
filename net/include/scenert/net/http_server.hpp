#pragma once
/// http_server: a small asynchronous HTTP/1.1 server for probes, scrapes and (later) the web pages.
/// One I/O thread serves every connection, so a thousand idle or half-sent requests cost a socket and
/// a timer each and never hold back a health probe; every stage of a request has a deadline and every
/// input a cap.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <scenert/runtime/result.hpp>

namespace scenert::net {

enum class http_errc : std::uint8_t { ok, bad_endpoint, bind_failed, count_ };
inline constexpr std::string_view http_errc_names[] = {"ok", "bad_endpoint", "bind_failed"};
static_assert(std::size(http_errc_names) == static_cast<std::size_t>(http_errc::count_),
              "http_errc: name every code");

/// What a handler is asked: the request line, split (the target is not percent-decoded).
struct http_request {
  std::string method;  ///< "GET" or "HEAD" (other methods are answered 405 before any handler)
  std::string path;    ///< the target up to '?', e.g. "/lines/7"
  std::string query;   ///< after '?', without it; empty when there is none
  std::string rest;    ///< for a prefix route, the path after the prefix ("7" for "/lines/"); else empty
};

/// What a handler answers. The body is held in memory (admin answers are small snapshots).
struct http_response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  ///< extra fields, e.g. Cache-Control
};

/// Runs on the server's I/O thread, which serves every connection, one request at a time: it must not
/// block (read a snapshot, format it, return). A handler that may wait (on another thread's answer, a
/// long walk) is added with on_slow(). An exception it throws is answered 500 and goes no further.
using http_handler = std::function<http_response(const http_request&)>;

struct http_reply_state;

/// How an asynchronous handler answers its request: later, from any thread. Copies share one answer:
/// the first answer() wins; one that comes after the route's timeout, or after the server stopped, is
/// dropped. Keeping a copy keeps no connection and no server alive.
/// Thread-safety: every member from any thread.
class http_reply {
 public:
  explicit http_reply(std::shared_ptr<http_reply_state> state) : state_(std::move(state)) {}
  /// Sends the answer: it is handed to the server's I/O thread, which writes it.
  void answer(http_response out) const;
  /// Sets what the server answers if answer() did not come within the route's timeout (by default
  /// 503 "no answer within N ms").
  void on_timeout(http_response late) const;

 private:
  std::shared_ptr<http_reply_state> state_;
};

/// An asynchronous handler: runs on the I/O thread and must not block either; it starts the work
/// (posts it to another thread), which answers through `reply`. Nothing else is read from the
/// connection meanwhile; every other connection is served as usual.
using http_async_handler = std::function<void(const http_request&, http_reply reply)>;

/// A connection that asked to become a WebSocket on an upgrade route: its socket, now the handler's to
/// own and close, and every byte read from it so far (the upgrade request, then whatever followed), so
/// that another server (the game front) can finish the handshake as if it had accepted the connection.
struct http_upgrade {
  int socket = -1;  ///< the descriptor; the server no longer touches it
  std::string bytes;
};
/// Runs on the server's I/O thread and must not block: it hands the connection on.
using http_upgrade_handler = std::function<void(http_upgrade)>;

/// A handler and where it runs.
struct http_route {
  http_handler handler;
  bool slow = false;         ///< runs on the server's helper thread, so the I/O thread keeps answering
  http_async_handler async;  ///< set instead of `handler`: the answer comes through an http_reply
  std::chrono::milliseconds timeout{};  ///< async: how long the answer may take before the late one goes
};

/// Which handler answers which path: an exact path first, else the longest matching prefix.
struct http_routes {
  std::map<std::string, http_route, std::less<>> exact;   ///< "/healthz" -> route
  std::map<std::string, http_route, std::less<>> prefix;  ///< "/lines/" -> route (its handler sees `rest`)
  std::map<std::string, http_upgrade_handler, std::less<>> upgrade;  ///< "/ws" -> WebSocket hand-off

  /// Adds an exact route (an empty handler is skipped); returns *this for chaining.
  http_routes& on(std::string path, http_handler handler);
  /// Adds an exact route whose handler may block: it runs on one helper thread, one request at a
  /// time, while the I/O thread keeps answering the other routes (an empty handler is skipped).
  http_routes& on_slow(std::string path, http_handler handler);
  /// Adds a prefix route (an empty handler is skipped); returns *this for chaining.
  http_routes& on_prefix(std::string prefix, http_handler handler);
  /// Adds an asynchronous prefix route: the answer may come from any thread, within `timeout` (a
  /// request is never left waiting longer); an empty handler is skipped.
  http_routes& on_prefix_async(std::string prefix, http_async_handler handler,
                               std::chrono::milliseconds timeout);
  /// Adds a WebSocket route: a GET upgrade request for `path` hands its connection to `handler`;
  /// a plain request for it is answered 426 (an empty handler is skipped).
  http_routes& on_upgrade(std::string path, http_upgrade_handler handler);
};

/// Deadlines and caps; the defaults suit a loopback admin endpoint behind an orchestrator's probes.
struct http_server_options {
  std::string name = "http";  ///< names the endpoint in error messages ("admin endpoint H:P: ...")
  /// From accept (or a keep-alive request's first byte) to the header's end; a client that sends
  /// nothing or half a request line is closed when it runs out.
  std::chrono::milliseconds header_timeout{5'000};
  std::chrono::milliseconds body_timeout{10'000};   ///< from the header's end to the body's end
  std::chrono::milliseconds write_timeout{10'000};  ///< a response the client does not read: closed
  std::chrono::milliseconds idle_timeout{30'000};   ///< a keep-alive connection between requests
  std::uint32_t max_header_bytes = 8 * 1024;        ///< over it: 431 and close
  std::uint64_t max_body_bytes = 64 * 1024;         ///< over it: 413 and close
  std::size_t max_connections = 10'000;             ///< a connection over it is closed at once
};

/// Serves `routes` on HOST:PORT from its own thread until destroyed: HTTP/1.1 keep-alive (and
/// `Connection: close`), GET and HEAD only (405 otherwise), 404 for a path no route takes.
/// Thread-safety: port() from any thread; handlers run on the server's I/O thread (slow ones on its
/// helper thread; an asynchronous one's answer may come from any thread); the destructor (from any
/// other thread) stops the server and joins its threads.
class http_server {
 public:
  /// Binds and starts serving; port 0 asks for a free port. A host may be a name ("localhost": its
  /// first address) or an address.
  [[nodiscard]] static result<std::unique_ptr<http_server>, http_errc> start(
      const std::string& host, std::uint16_t port, http_routes routes, http_server_options options = {});
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// The bound port (the chosen one when 0 was asked for).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

  struct impl;

 private:
  http_server(std::unique_ptr<impl> i, std::uint16_t port);
  std::unique_ptr<impl> impl_;
  std::uint16_t port_;
};

}  // namespace scenert::net
