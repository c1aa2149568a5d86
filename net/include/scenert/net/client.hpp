#pragma once
/// client: a small blocking client of the wire protocol, for tests, tools and the bots: connect
/// over TCP or WebSocket, send messages, receive the server's one at a time with a timeout.

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include <scenert/net/messages.hpp>
#include <scenert/runtime/result.hpp>

namespace scenert::net {

enum class client_errc : std::uint8_t { ok, connect_failed, closed, timeout, bad_frame, count_ };
inline constexpr std::string_view client_errc_names[] = {"ok", "connect_failed", "closed", "timeout",
                                                         "bad_frame"};
static_assert(std::size(client_errc_names) == static_cast<std::size_t>(client_errc::count_),
              "client_errc: name every code");

class client {
 public:
  /// Connects over TCP to host:port (loopback in tests).
  static result<std::unique_ptr<client>, client_errc> connect(const std::string& host, std::uint16_t port);
  /// Connects over WebSocket to ws://host:port`path`; with `subprotocol` "scenert" the server waits
  /// for a login (never a guest). Each frame goes as one binary message.
  static result<std::unique_ptr<client>, client_errc> connect_ws(const std::string& host, std::uint16_t port,
                                                                 const std::string& subprotocol = "",
                                                                 const std::string& path = "/");
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  /// Sends one message (a whole frame).
  result<void, client_errc> send(const client_message& m);
  /// Sends raw bytes as they are (for tests of broken clients); over WebSocket, as one message.
  result<void, client_errc> send_bytes(std::string_view bytes);
  /// The next message from the server, waiting up to `timeout`.
  result<server_message, client_errc> receive(std::chrono::milliseconds timeout);
  /// Closes the connection (the server sees a logoff).
  void close();

 private:
  struct websocket;
  explicit client(int fd);
  explicit client(std::unique_ptr<websocket> ws);
  result<void, client_errc> take(std::string_view bytes);
  int fd_ = -1;
  std::unique_ptr<websocket> ws_;
  frame_reader reader_;
  std::deque<server_message> ready_;
  std::string error_;
};

}  // namespace scenert::net
