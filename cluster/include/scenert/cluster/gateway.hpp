#pragma once
/// gateway: a cluster's door for game clients. It holds their connections (a net::front) and sends
/// their requests to the scene nodes (a remote_world over its own link to the NATS server). On a
/// timer of its own it beats, rereads the nodes, answers what timed out, places again the players of
/// a node that died and, after the link came back, sends every client its view again.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <scenert/cluster/line_choice.hpp>
#include <scenert/cluster/player_ids.hpp>
#include <scenert/cluster/remote_world.hpp>
#include <scenert/config/scene_table.hpp>
#include <scenert/net/front.hpp>
#include <scenert/runtime/result.hpp>

namespace scenert::cluster {

/// Why a gateway did not start.
enum class gateway_errc : std::uint8_t {
  cluster,  ///< the NATS server, its buckets, a block of player ids or the nodes' subjects: not had
  front,    ///< the front did not start (a listener not bound, no landing scene)
};

/// The longest gateway name: the nodes know each start of a gateway by its name and its first
/// player id (a restarted gateway is a new one to them), and subjects take names of 64 characters.
inline constexpr std::size_t max_gateway_name = 53;

/// What a gateway is, where its cluster is and how it treats its clients.
struct gateway_options {
  std::string name;     ///< this gateway's name in the cluster (1-53 letters, digits, '-' or '_')
  std::string cluster;  ///< the cluster's NATS server (JetStream on), nats://HOST:PORT
  std::shared_ptr<const scene_table> table;  ///< the table the nodes host
  /// The clients' listeners and limits; the player ids are the block the gateway takes.
  net::front_options front;
  /// A request its node has not answered this soon is answered node_unavailable.
  std::chrono::milliseconds answer_timeout{5000};
  bool journeys = true;  ///< see remote_world_options::journeys
  line_opening open_lines_on = line_opening::least_loaded_node;
  std::function<void(std::string_view)> info, warn;  ///< the log
};

/// What a gateway counted: its front's, its remote world's and its link's.
struct gateway_stats {
  net::front_stats front;
  remote_world_stats world;
  bool connected = false;        ///< the link to the NATS server is up
  std::uint64_t reconnects = 0;  ///< times the link came back
};

/// A gateway from start() to stop(): the link, the buckets, its block of player ids, the front and
/// the remote world, and one thread of its own whose timer drives the remote world's poll().
/// Thread-safety: stats(), tcp_port(), ws_port(), player_ids() from any thread; stop() from one.
class gateway {
 public:
  /// Connects to the cluster, takes a block of player ids, starts the remote world and then the
  /// front; a failure's message names the URL (or the listener) at fault.
  [[nodiscard]] static result<std::unique_ptr<gateway>, gateway_errc> start(gateway_options options);
  /// Stops it (if stop() was not called), lets the remote world run what it had queued (token
  /// writes, claims, the last batch of requests) and closes the link.
  ~gateway();
  gateway(const gateway&) = delete;
  gateway& operator=(const gateway&) = delete;

  /// Stops the timer, then says goodbye to every client (with front.hand_off_on_stop their players
  /// stay in the world for their clients to resume through another gateway). A second call does
  /// nothing; stats() still answers.
  void stop();

  [[nodiscard]] gateway_stats stats() const;
  [[nodiscard]] std::uint16_t tcp_port() const noexcept;  ///< 0: no TCP listener
  [[nodiscard]] std::uint16_t ws_port() const noexcept;   ///< 0: no WebSocket listener
  [[nodiscard]] id_block player_ids() const noexcept;     ///< the ids this gateway gives out

  struct impl;

 private:
  explicit gateway(std::unique_ptr<impl> i);
  std::unique_ptr<impl> impl_;
};

}  // namespace scenert::cluster
