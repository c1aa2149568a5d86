#pragma once
/// front: the network door of a world. Clients connect over TCP or WebSocket, log in (or are logged
/// in as guests), land on the table's landing scene, see who is around (seed 002's protocol), move, chat,
/// send requests to the world and leave by closing. The lines' events reach the front through the world's
/// on_line_events and fan out through view mirrors on the front's I/O threads, never on a scene's tick.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/net/admission.hpp>
#include <scenert/net/frame.hpp>
#include <scenert/net/message_id.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/scene/line_event.hpp>
#include <scenert/scene/player_store.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::net {

/// Why the front closed a connection (counted in front_stats::closed_by).
enum class close_reason : std::uint8_t {
  dropped,        ///< the client closed, or the socket failed
  idle,           ///< no frame for idle_timeout
  half_frame,     ///< half a frame held for read_timeout
  login_timeout,  ///< no login (or WebSocket handshake) within login_timeout
  slow_reader,    ///< over max_outbound_bytes behind
  oversize,       ///< a frame over the size limit
  bad_frames,     ///< too many frames with unknown ids, bad payloads or not allowed now
  bad_login,      ///< a login whose name is not allowed
  server_full,    ///< over max_connections
  shutting_down,  ///< the server stops
  replaced,       ///< the player logged in again on another connection
  no_place,       ///< the world found no line to land on
  flooding,       ///< kept sending over its rates past front_options::flooding
  server_busy,    ///< a new login while admission is closed (front_options::admission)
  count_
};
inline constexpr std::string_view close_reason_names[] = {
    "dropped",   "idle",        "half_frame",    "login_timeout", "slow_reader", "oversize", "bad_frames",
    "bad_login", "server_full", "shutting_down", "replaced",      "no_place",    "flooding", "server_busy"};
static_assert(std::size(close_reason_names) == static_cast<std::size_t>(close_reason::count_),
              "close_reason: name every reason");

struct front_options {
  bool tcp = true;  ///< listen for TCP clients on tcp_host:tcp_port
  std::string tcp_host = "127.0.0.1";
  std::uint16_t tcp_port = 0;  ///< 0: a free port (tcp_port() says which)
  bool ws = false;             ///< listen for WebSocket clients on ws_host:ws_port
  std::string ws_host = "127.0.0.1";
  std::uint16_t ws_port = 0;
  /// I/O threads, apart from the pool's workers (0 counts as 1). Each owns the connections it
  /// accepted in turn and mirrors every line, so it fans out to its own clients alone.
  std::size_t io_threads = 1;
  std::uint32_t max_payload = 0;  ///< 0: the table's network.max_frame_bytes
  /// How long a dropped player keeps its place for its resume token; unset: the table's resume_ms.
  std::optional<std::chrono::milliseconds> resume = std::nullopt;
  /// On stop(), players stay in the world and their resume tokens stay good: another front of the
  /// cluster takes each one over when its client logs in again with its token (a gateway's rolling
  /// restart). Their clients hear "shutting_down: ... log in again with your resume token".
  bool hand_off_on_stop = false;
  std::size_t max_connections = 10'000;       ///< over it a new connection gets a goodbye and a close
  std::size_t max_outbound_bytes = 1u << 20;  ///< a reader this far behind is cut
  /// The kernel's send buffer of each client socket (SO_SNDBUF); 0: the kernel's own, which on
  /// loopback grows to megabytes, all of it held for a client that does not read before
  /// max_outbound_bytes counts.
  std::size_t send_buffer_bytes = 0;
  std::uint32_t bad_frames_allowed = 10;           ///< unknown ids or payloads that do not parse
  std::chrono::milliseconds idle_timeout{60'000};  ///< no frame at all (heartbeats count): closed
  std::chrono::milliseconds read_timeout{10'000};  ///< a partial frame held this long: closed
  /// A connection that sends no login (1000) this soon after connecting is logged in as a guest (seed
  /// 002's clients send nothing first). WebSocket clients that ask for the "scenert" subprotocol are
  /// never guests.
  std::chrono::milliseconds guest_wait{50};
  std::chrono::milliseconds login_timeout{10'000};  ///< a login (or WebSocket handshake) not done: closed
  /// Messages per second a connection may send, and the burst it may save up, per kind; the ones
  /// over it are dropped and counted (rate_limited), the connection stays.
  struct rate {
    double per_second = 0;
    double burst = 0;
  };
  rate moves{20, 40}, chat{2, 5}, requests{10, 20}, heartbeats{10, 20};
  /// A client that keeps sending over its rates is cut (flooding), not served forever: every message
  /// dropped over a rate (any kind) takes one from this bucket, which refills at per_second up to
  /// burst; the one that finds it empty closes the connection. The default cuts a client 200
  /// messages over at once, or one sending more than 10 a second over its rates for long. Burst 0:
  /// never cut.
  rate flooding{10, 200};
  /// Messages to game modules (ids from 2000 up); over it the client hears 1012 rate_limited.
  rate module_messages{30, 60};
  /// The largest payload of a message to a game module; a larger one is refused (1012 too_large)
  /// and never reaches the line.
  std::uint32_t module_message_bytes = 4096;
  /// A player placed again after its node died (place_again) whose scene has no place for it yet
  /// (line_full: the dead node's lines open again elsewhere once every node heard of its death;
  /// node_unavailable) is asked for again every 250 ms for this long before its client is closed
  /// no_place.
  std::chrono::milliseconds place_again_within{10'000};
  /// Tests only (fault injection, never set in production): viewers never hear 200 Tp 4 about this
  /// player id, so a check of clients' views against the scenes' truth has a fault to find. Its
  /// appearing and leaving (200 Tp 2, 201) still go out. 0: off.
  std::int32_t fault_hide_moves_of = 0;
  /// The player ids this front gives out, in order (a cluster's gateways each take their own block);
  /// once they are spent a login is refused (server_full).
  std::int32_t first_player_id = 1;
  std::int32_t last_player_id = INT32_MAX;
  /// Where players' items are kept (must outlive the front); null: none. A player logged in by name
  /// signs in as the account of its name and hears what it holds (1014); guests have no account.
  player_store* store = nullptr;
  /// Past its lines new logins (named or guests) are refused with server_busy and a retry-after;
  /// logged-in players and resumes never are. Off by default here; `scenert run` turns it on.
  admission_options admission{};
};

/// Frames and bytes of one message id.
struct message_counts {
  std::uint64_t frames = 0, bytes = 0;
};

/// Counters, readable from any thread.
struct front_stats {
  std::uint64_t accepted = 0, refused = 0, closed = 0, connections = 0;
  std::uint64_t frames_in = 0, frames_out = 0, bytes_in = 0, bytes_out = 0, writes = 0;
  std::uint64_t bad_frames = 0, oversize = 0, moves_refused = 0, rate_limited = 0;
  std::uint64_t moves_stale = 0;  ///< walks (1011) made on a view the player had left: dropped
  std::uint64_t logins = 0, guests = 0, resumed = 0;
  std::uint64_t claimed = 0;   ///< of the resumed: players another front of the cluster held
  std::uint64_t detached = 0;  ///< players of dropped connections waiting for their resume now
  std::array<std::uint64_t, static_cast<std::size_t>(close_reason::count_)> closed_by{};
  std::array<message_counts, std::size(all_message_ids)> in_by_id{}, out_by_id{};
  /// The last headroom sample (every quarter second) and what admission made of it.
  headroom room;
  bool admitting = true;                           ///< new logins are admitted now
  headroom_measure over = headroom_measure::none;  ///< the measure over its line in the last sample
  std::uint64_t busy_refused = 0;                  ///< new logins refused (server_busy)
  std::uint64_t admission_closings = 0;            ///< times admission closed
};

/// How many connections stand on one line (at the last publication, every quarter second).
struct line_connections {
  line_handle line;
  std::uint32_t connections = 0;
};

enum class front_errc : std::uint8_t { ok, bind_failed, no_landing_scene, count_ };

class front {
 public:
  /// A front for `table` (which must outlive it). Hand on_line_events() to the world's options,
  /// create the world, then start().
  static std::unique_ptr<front> create(const scene_table& table, front_options options = {});
  ~front();
  front(const front&) = delete;
  front& operator=(const front&) = delete;

  /// What the world calls with each line's events of a tick (from the lines' threads).
  [[nodiscard]] std::function<void(line_handle, phase_id, std::span<const line_event>)> on_line_events();
  /// What the world calls when a player stands on a line (or phase) whose events did not say so last:
  /// its client hears that view again. Ignored while the player stands on a line as the events said
  /// (from any thread, ordered after the line events handed over before it).
  [[nodiscard]] std::function<void(player_id, line_handle, phase_id)> on_stands_on();
  /// What the world calls with each line's game-module frames of a tick (world_options::on_module_frames).
  [[nodiscard]] std::function<void(line_handle, std::span<const module_frame>)> on_module_frames();
  /// Binds the listeners and starts the I/O threads; `w` must outlive the front's stop().
  result<void, front_errc> start(world_port& w);
  /// Says goodbye to every client, closes their connections and joins the I/O threads.
  void stop();
  /// Takes over a connection that asked another server (the web pages' HTTP port) to become a
  /// WebSocket: `socket` is its descriptor, the front's to own and close from now on, and `bytes`
  /// what was read from it (the upgrade request first). It is then a client like one of --ws's.
  /// Thread-safety: from any thread; one that comes after stop() is closed.
  void adopt_websocket(int socket, std::string bytes);

  /// Sends every logged-in client its view again (its 202, itself included, 200 Tp 2 for itself, the monsters
  /// it sees), from the mirrors once the lines' batches heard so far are applied: after events may have been
  /// lost (a gateway whose link to the cluster came back). A client standing elsewhere than its last
  /// answer said (that answer lost) hears its scene first (1006). Any thread.
  void resync_views();
  /// Places a player again whose line is gone (a cluster node died): it enters `scene` and, when
  /// `at` is given, walks back to that cell. Its client hears 201 for the old view (from the old
  /// line's leaving events) and a fresh 1006 and 202 for the new one, as after a transfer; a
  /// player waiting for its resume is placed too. No place within front_options::place_again_within:
  /// the connection closes (no_place). Any thread.
  void place_again(player_id player, scene_id scene, std::optional<grid::cell_point> at);

  /// Lets a player go without taking it off the world: its client resumed on another front of the
  /// cluster. Its connection here, if any, closes (replaced); one waiting for its resume waits no
  /// more. Any thread.
  void let_go(player_id player);

  /// The p99 of how late the lines' ticks started over the host's last interval (a quarter second):
  /// the front's admission takes it into its next headroom sample. Any thread.
  void report_tick_lateness(std::chrono::microseconds p99);

  /// Where clients land: the table's first town, else its first field (0: none).
  [[nodiscard]] scene_id landing_scene() const noexcept;
  [[nodiscard]] std::uint16_t tcp_port() const noexcept;
  [[nodiscard]] std::uint16_t ws_port() const noexcept;
  [[nodiscard]] front_stats stats() const noexcept;
  /// Connections per line, by scene then line.
  [[nodiscard]] std::vector<line_connections> connections_by_line() const;

  struct impl;

 private:
  explicit front(std::unique_ptr<impl> i);
  std::unique_ptr<impl> impl_;
};

}  // namespace scenert::net
