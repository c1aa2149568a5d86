#pragma once
/// The admin endpoint of `scenert run`: a small HTTP server on loopback for probes and scrapes.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <scenert/runtime/result.hpp>

namespace scenert::admin {

enum class admin_errc {
  ok = 0,
  bad_endpoint,
  bind_failed,
  bad_path,  ///< a request's path does not name what its route expects
};

/// What a handler answers.
struct admin_response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

/// How an asynchronous handler answers: later, from any thread.
/// Thread-safety: both from any thread; the first answer wins, later ones are dropped.
struct admin_reply {
  std::function<void(admin_response)> answer;      ///< the answer
  std::function<void(admin_response)> on_timeout;  ///< what goes instead if `answer` did not come in time
};

/// One handler per path; each runs on the server's one I/O thread, which serves every connection:
/// it must be thread-safe and must not block (read a snapshot, format it). /metrics and /scenes run
/// on a helper thread instead and may wait; /lines starts its work and answers later.
struct admin_handlers {
  std::function<admin_response()> livez;
  std::function<admin_response()> readyz;
  std::function<admin_response()> healthz;
  std::function<admin_response()> metrics;
  std::function<admin_response()> scenes;
  /// GET /lines/SCENE/LINE, with `rest` "SCENE/LINE" as sent: a line's entities, read on the line's
  /// own thread. It must not block: it hands the work on, and the answer comes through the reply.
  std::function<void(std::string_view rest, admin_reply reply)> lines;
  /// How long /lines may take before the reply's timeout answer goes out.
  std::chrono::milliseconds lines_timeout{1'000};
  /// GET /history: the last minutes, a sample a second (JSON).
  std::function<admin_response()> history;
  /// The web pages (`scenert run --web`): the file a path names ("/" too); null: 404.
  std::function<const admin_response*(std::string_view path)> page;
  /// GET /ws asking for a WebSocket: the connection (its socket descriptor, now the handler's, and
  /// the bytes read from it), handed to the game front.
  std::function<void(int socket, std::string bytes)> websocket;
};

/// HOST:PORT, split and checked ("127.0.0.1:0" asks for any free port).
struct endpoint {
  std::string host;
  std::uint16_t port = 0;
};
[[nodiscard]] result<endpoint, admin_errc> parse_endpoint(std::string_view text);

/// Serves GET /livez, /readyz, /healthz, /metrics, /scenes, /lines/SCENE/LINE and /history, and with
/// `page` and `websocket` the web pages and their WebSocket, on its own thread until destroyed (a path
/// without a handler answers 404).
/// Thread-safety: port() from any thread; the destructor stops and joins the server.
class admin_server {
 public:
  /// `name` names the endpoint in errors ("admin", "web").
  [[nodiscard]] static result<std::unique_ptr<admin_server>, admin_errc> start(const endpoint& at,
                                                                               admin_handlers handlers,
                                                                               std::string name = "admin");
  ~admin_server();
  admin_server(const admin_server&) = delete;
  admin_server& operator=(const admin_server&) = delete;

  /// The bound port (the chosen one when 0 was asked for).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

 private:
  struct impl;
  explicit admin_server(std::unique_ptr<impl> i, std::uint16_t port);
  std::unique_ptr<impl> impl_;
  std::uint16_t port_;
};

}  // namespace scenert::admin
