#pragma once
/// front: the network door of a world. Clients connect over TCP, are logged in as guests, land on
/// the table's landing scene, see who is around (seed 002's protocol), move, chat, send requests to
/// the world and leave by closing. The lines' events reach the front through the world's
/// on_line_events and fan out through one view mirror per line on the front's I/O thread, never on
/// a scene's tick.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include <scenert/config/scene_table.hpp>
#include <scenert/net/frame.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/scene/line_event.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::net {

struct front_options {
  std::string tcp_host = "127.0.0.1";
  std::uint16_t tcp_port = 0;  ///< 0: a free port (tcp_port() says which)
  std::uint32_t max_payload = default_max_payload;
  std::size_t max_connections = 10'000;            ///< over it a new connection gets a goodbye and a close
  std::size_t max_outbound_bytes = 1u << 20;       ///< a reader this far behind is cut
  std::uint32_t bad_frames_allowed = 10;           ///< unknown ids or payloads that do not parse
  std::chrono::milliseconds idle_timeout{60'000};  ///< no frame at all (heartbeats count): closed
  std::chrono::milliseconds read_timeout{10'000};  ///< a partial frame held this long: closed
  /// Messages per second a connection may send, and the burst it may save up, per kind; the ones
  /// over it are dropped and counted (rate_limited), the connection stays.
  struct rate {
    double per_second = 0;
    double burst = 0;
  };
  rate moves{20, 40}, chat{2, 5}, requests{10, 20};
};

/// Counters, readable from any thread.
struct front_stats {
  std::uint64_t accepted = 0, refused = 0, closed = 0, connections = 0;
  std::uint64_t frames_in = 0, frames_out = 0, bytes_in = 0, bytes_out = 0, writes = 0;
  std::uint64_t bad_frames = 0, oversize = 0, cut_slow = 0, moves_refused = 0;
  std::uint64_t rate_limited = 0, timed_out = 0;
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
  [[nodiscard]] std::function<void(line_handle, std::span<const line_event>)> on_line_events();
  /// Binds the listener and starts the I/O thread; `w` must outlive the front's stop().
  result<void, front_errc> start(world& w);
  /// Says goodbye to every client, closes their connections and joins the I/O thread.
  void stop();

  [[nodiscard]] std::uint16_t tcp_port() const noexcept;
  [[nodiscard]] front_stats stats() const noexcept;

  struct impl;

 private:
  explicit front(std::unique_ptr<impl> i);
  std::unique_ptr<impl> impl_;
};

}  // namespace scenert::net
