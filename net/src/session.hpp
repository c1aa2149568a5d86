#pragma once
// session: one client connection of the front (Boost.Beast's asynchronous session style). It alone
// reads, writes and closes its socket, on its shard's I/O thread: a read loop that feeds its frame
// reader, an outbound queue with one write in flight (what comes meanwhile goes in the next, gathered
// write), a close that says why, and its timers (the guest wait, the linger after a goodbye). Others
// hand it frames through push() and send(); what the game side knows of its player is player().

#include "front_counters.hpp"
#include "player_book.hpp"

#include <utility>  // before Asio: Boost 1.74's asio/awaitable.hpp needs it under g++ 12

#include <boost/asio.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <scenert/net/frame.hpp>
#include <scenert/net/front.hpp>
#include <scenert/net/messages.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using ws_stream = beast::websocket::stream<tcp::socket>;
using clock = std::chrono::steady_clock;

// A token bucket: `per_second` tokens flow in up to `burst`; each message takes one.
struct bucket {
  double tokens = 0;
  clock::time_point at{};
  bool take(const front_options::rate& r, clock::time_point now) {
    if (at == clock::time_point{})
      tokens = r.burst;
    else
      tokens = std::min(r.burst, tokens + r.per_second * std::chrono::duration<double>(now - at).count());
    at = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  }
};

// What one metered message comes to at `now`: allowed by its kind's bucket `b`, dropped over its
// rate, or cut: the drop that finds the client's `floods` bucket empty (front_options::flooding;
// burst 0: never cut).
enum class metered : std::uint8_t { allowed, dropped, cut };
inline metered meter(bucket& b, const front_options::rate& r, bucket& floods,
                     const front_options::rate& flooding, clock::time_point now) {
  if (b.take(r, now)) return metered::allowed;
  if (flooding.burst <= 0 || floods.take(flooding, now)) return metered::dropped;
  return metered::cut;
}

// What the game side of the front keeps of a connection's player: who it is, where the world put it,
// what it may still send, what it was told. The session carries it; the session never reads it.
struct player_state {
  player_id pid = 0;             // 0: no player (not logged in, or let go to another connection)
  clock::time_point admitted{};  // logged in (or resumed) on this connection
  std::string name;
  std::string token;            // its resume token (explicit logins only)
  bool claiming = false;        // its login waits on the cluster (token asked or shared), so do its frames
  bool placed = false;          // the world placed the player (its line's events concern it)
  bool speaks_scenert = false;  // sent an id of scenert's own: it gets scenert's frames too
  std::uint32_t views = 0;      // 202s sent on this connection: a walk (1011) names the one it was made on
  // Digests of the maps whose blocks its client holds: announced at login (at most max_known_maps) or
  // carried by a 1006 of this connection; at most that plus the table's maps.
  std::vector<std::uint64_t> maps_held;
  std::uint32_t bad_frames = 0;
  placement place;  // where the world put it last
  // Its lines' events have shown it on `place`. An answer can come before them: until they do, they
  // are older news and do not correct the place the client was told.
  bool place_heard = true;
  bucket moves, chat, requests, heartbeats, module_messages;
  bucket flooding;                      // its messages over their rates: empty, it is cut
  clock::time_point moved_at{};         // placed, or its last move accepted (for max_speed)
  std::optional<asked_position> asked;  // the position the client last asked for, carried to its viewers
};

class session;

// What a session tells the shard that keeps it.
// Thread-safety: every call on the shard's I/O thread.
class session_host {
 public:
  /// Connected (after the WebSocket handshake, if any): waiting for a login.
  virtual void greeted(const std::shared_ptr<session>& s) = 0;
  /// One whole frame read.
  virtual void frame_in(const std::shared_ptr<session>& s, std::uint32_t id, std::string_view payload) = 0;
  /// A read's frames are handled: the frames they queued may go.
  virtual void read_done() = 0;
  /// `s` queued frames: it writes them at the next flush.
  virtual void queued(const std::shared_ptr<session>& s) = 0;
  /// `s` closes (counted already): its player is dropped.
  virtual void closing(session& s, close_reason why) = 0;
  /// A socket of this shard closed.
  virtual void socket_closed() = 0;
  virtual front_counters& counters() = 0;
  virtual out_counts& sent() = 0;
  /// A buffer a WebSocket write's frames are framed in (one per thread).
  virtual std::string& ws_scratch() = 0;

 protected:
  ~session_host() = default;
};

// Frames every frame of `frames` (whole frames) as a binary WebSocket message of its own, using
// `scratch`'s buffer (which keeps the old one).
void frame_as_messages(std::string& frames, std::string& scratch);

// Thread-safety: none; every call on its shard's I/O thread.
class session : public std::enable_shared_from_this<session> {
 public:
  enum class stage : std::uint8_t {
    handshake,  // WebSocket: the HTTP upgrade is not done yet
    greeting,   // connected, no login yet: a login, or a guest after guest_wait
    in,         // logged in: player().pid is its player
  };
  /// How long a goodbye may take to be read before the socket closes anyway.
  static constexpr std::chrono::seconds linger{2};

  /// A connection on `sock`; `read_already`: bytes read from it elsewhere (a WebSocket upgrade).
  session(session_host& host, const front_options& opt, tcp::socket sock, bool websocket,
          std::string_view read_already);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// Starts the handshake (WebSocket) or the greeting, and the read loop.
  void start();
  /// Refuses the connection: a goodbye saying `why` (TCP), then the close. Not counted as a close.
  void refuse(const std::string& why);
  /// Queues whole frames for the next write (nothing once closing).
  void push(std::string_view frames);
  /// Queues one message's frame.
  void send(const server_message& m);
  /// Writes what is queued, or cuts a reader over max_outbound_bytes behind (slow_reader).
  void flush();
  /// Says why (unless the client is gone) and closes once the goodbye is written (or after linger);
  /// `retry_after_ms` goes in the goodbye (server_busy).
  void close(close_reason why, const std::string& text = {}, std::uint32_t retry_after_ms = 0);
  /// Runs `then` after `wait` unless a frame came (or is on its way) or the session moved on.
  void wait_for_login(std::chrono::milliseconds wait, std::function<void()> then);
  /// No guest wait any more (a login is under way).
  void stop_waiting();
  /// Logged in: its frames are a player's now.
  void logged_in();
  /// The timeout it is over at `now` and that timeout, if any (login, idle, half a frame).
  [[nodiscard]] std::optional<std::pair<close_reason, std::chrono::milliseconds>> overdue(
      clock::time_point now) const;

  /// Bytes queued for this client and not yet written (its write queue and the write in flight).
  [[nodiscard]] std::size_t queued_bytes() const noexcept { return out_.size() + sending_.size(); }
  [[nodiscard]] stage at() const noexcept { return stage_; }
  [[nodiscard]] bool closing() const noexcept { return closing_; }
  /// A WebSocket client that asked for the "scenert" subprotocol: it must log in.
  [[nodiscard]] bool login_required() const noexcept { return login_required_; }
  [[nodiscard]] player_state& player() noexcept { return player_; }
  [[nodiscard]] const player_state& player() const noexcept { return player_; }

 private:
  [[nodiscard]] bool websocket() const noexcept { return std::holds_alternative<ws_stream>(link_); }
  [[nodiscard]] tcp::socket& socket() noexcept;
  void handshake();
  void accept_upgrade();
  void read();
  void on_read(boost::system::error_code ec, std::string_view bytes);
  void mark();
  void write();
  void wrote(boost::system::error_code ec);
  void start_linger();
  void shut() noexcept;

  session_host& host_;
  const front_options& opt_;
  std::variant<tcp::socket, ws_stream> link_;
  stage stage_ = stage::greeting;
  bool login_required_ = false;
  bool writing_ = false, closing_ = false, dirty_ = false;
  clock::time_point opened_ = clock::now();
  clock::time_point last_rx_ = clock::now();  // the last bytes read
  clock::time_point partial_since_{};         // a partial frame held since (when mid_frame)
  asio::steady_timer guest_timer_, linger_timer_;
  // Clients send little (moves, chat, requests); a frame longer than one read is put together by
  // the frame reader. Small, so an idle connection costs little.
  std::array<char, 2 * 1024> rbuf_{};
  beast::flat_buffer wbuf_;                                // WebSocket: the handshake's bytes
  beast::http::request<beast::http::empty_body> upgrade_;  // WebSocket: the handshake's request
  frame_reader reader_;
  std::string out_, sending_;  // frames waiting; frames on the wire
  /// What `sending_` keeps of its capacity between writes: a burst (a 202, a map's 1006) is given back.
  static constexpr std::size_t kept_capacity = 8 * 1024;
  player_state player_;
};

}  // namespace scenert::net
