#pragma once
/// node_endpoint: a scene node's side of the gateways. Their batches of requests go to its world and
/// the answers back in one batch per gateway; each line's events of a tick go out as one message on
/// the line's subject, numbered, so a gateway that misses one asks for the line as it stands.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/cluster/nats_link.hpp>
#include <scenert/runtime/unique_function.hpp>
#include <scenert/scene/line_directory.hpp>
#include <scenert/scene/line_event.hpp>
#include <scenert/scene/world_port.hpp>

namespace scenert::cluster {

/// Asks where the world has a player now; `answer` is called once, on any thread (the world's), and
/// the caller does not wait for it.
using player_locator = std::function<void(player_id, unique_function<void(location)> answer)>;

struct node_endpoint_options {
  /// A gateway not heard from this long (its beats, its requests) is dead: its players wait
  /// `resume` for a client of theirs to resume on another gateway, then leave the world.
  std::chrono::milliseconds gateway_dead_after{3000};
  std::chrono::milliseconds resume{0};
};

struct node_endpoint_stats {
  std::uint64_t request_batches = 0, requests = 0, bad_batches = 0;
  std::uint64_t claims = 0;             ///< gateways' claims of players answered (found or not)
  std::uint64_t gateways_lost = 0;      ///< gateways that fell silent or said they were gone
  std::uint64_t players_abandoned = 0;  ///< their players nobody claimed within resume: taken off
  std::uint32_t gateways = 0;           ///< gateways heard from and alive now
  std::uint64_t answer_batches = 0, answers = 0;
  std::uint64_t event_batches = 0, frame_batches = 0, views_asked = 0, publish_failures = 0;
  std::uint64_t handoffs_out = 0;          ///< players this node handed over to another (journeys)
  std::uint64_t handoffs_in = 0;           ///< players handed over to this node
  std::uint64_t handoffs_failed = 0;       ///< hand-overs from here refused there or not answered in time
  std::uint64_t releases_again = 0;        ///< releases of given-up hand-overs said again, not yet confirmed
  std::uint64_t releases_unconfirmed = 0;  ///< releases said whose node has not confirmed them yet
};

/// Create it, hand on_line_events() to the world's options, create the world, then start(world).
/// Its timers (the answers' linger, a claim's settling) run on an executor of its own, one thread.
/// Thread-safety: on_line_events' function from the lines' threads; the rest from one thread.
class node_endpoint {
 public:
  node_endpoint(nats_link& link, std::string node, std::uint64_t epoch, node_endpoint_options options = {});
  ~node_endpoint();
  node_endpoint(const node_endpoint&) = delete;
  node_endpoint& operator=(const node_endpoint&) = delete;

  /// For world_options::on_line_events.
  [[nodiscard]] std::function<void(line_handle, phase_id, std::span<const line_event>)> on_line_events();
  /// For world_options::on_module_frames: on the line's events subject, after its events.
  [[nodiscard]] std::function<void(line_handle, std::span<const module_frame>)> on_module_frames();
  /// Subscribes to the node's requests, views, claims and journeys; `w` and `where` must outlive
  /// stop(). A claim (a gateway resuming a client whose gateway died) is answered with where the
  /// player stands; from then on its answers go to the claiming gateway, which sends its requests.
  /// A request with a target node (a journey) is handed over there: the player leaves this node
  /// once that node placed it, and stays when it refused or did not answer within a second.
  [[nodiscard]] cluster_result<void> start(world_port& w, player_locator where = {});
  /// Declares silent gateways dead and takes their unclaimed players off once `resume` is over;
  /// gives up hand-overs not answered in time. From one thread, a few times a second.
  void poll(std::chrono::steady_clock::time_point now);
  /// Unsubscribes, then sends the answers still held; claims still settling are dropped (their
  /// gateway asks again). Called by the destructor too.
  void stop();

  [[nodiscard]] node_endpoint_stats stats() const;

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace scenert::cluster
