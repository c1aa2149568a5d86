#pragma once
// One client connection on the front's I/O thread: its transport (TCP bytes, or WebSocket messages
// that carry whole frames), its reader, its outgoing frames and what the front knows of its player.

#include <utility>  // before Asio: Boost 1.74's asio/awaitable.hpp needs it under g++ 12

#include <boost/asio.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <variant>

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

struct session : std::enable_shared_from_this<session> {
  enum class stage : std::uint8_t {
    handshake,  // WebSocket: the HTTP upgrade is not done yet
    greeting,   // connected, no login yet: a login, or a guest after guest_wait
    in,         // logged in: pid is its player
  };

  session(tcp::socket s, std::uint32_t max_payload, bool websocket);
  ~session();

  std::variant<tcp::socket, ws_stream> link;
  stage at = stage::greeting;
  clock::time_point opened = clock::now();
  asio::steady_timer guest_timer;
  bool login_required = false;  // a WebSocket client that asked for "scenert": never a guest
  bool claiming = false;        // its resume token is asked of the cluster: its frames wait for that

  player_id pid = 0;
  clock::time_point admitted{};  // logged in (or resumed) on this connection
  std::string name;
  std::string token;  // its resume token (explicit logins only)
  // Clients send little (moves, chat, requests); a frame longer than one read is put together by
  // the frame reader. Small, so an idle connection costs little.
  std::array<char, 2 * 1024> rbuf{};
  beast::flat_buffer wbuf;                                // WebSocket: the handshake's bytes
  beast::http::request<beast::http::empty_body> upgrade;  // WebSocket: the handshake's request
  frame_reader reader;
  std::string out, sending;  // frames waiting; frames on the wire
  /// What `sending` keeps of its capacity between writes: a burst (a 202, a map's 1006) is given back.
  static constexpr std::size_t kept_capacity = 8 * 1024;
  bool writing = false, closing = false, dirty = false;
  bool placed = false;  // the world placed the player (its line's events concern it)
  // Its last answer was node_unavailable: the request may have been done, or half done (a cluster's
  // hand-over given up after its target had placed the player, which it then let go).
  bool unsure = false;
  bool speaks_scenert = false;  // sent an id of scenert's own: it gets scenert's frames too
  std::uint32_t views = 0;      // 202s sent on this connection: a walk (1011) names the one it was made on
  placement place;              // where the world put it last
  std::uint32_t bad = 0;
  clock::time_point last_rx = clock::now();  // the last bytes read
  clock::time_point partial_since{};         // a partial frame held since (when mid_frame)
  bucket moves, chat, requests;
  clock::time_point moved_at{};  // placed, or its last move accepted (for max_speed)
  position claimed;              // the position the client last asked for, carried to its viewers
  grid::cell_point claimed_cell{};
  bool has_claim = false;

  [[nodiscard]] bool websocket() const noexcept { return std::holds_alternative<ws_stream>(link); }
  [[nodiscard]] tcp::socket& socket() noexcept;
  [[nodiscard]] bool is_open() noexcept { return socket().is_open(); }
  /// Shuts the socket down at once.
  void shut() noexcept;
};

}  // namespace scenert::net
