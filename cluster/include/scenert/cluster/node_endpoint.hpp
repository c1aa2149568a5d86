#pragma once
/// node_endpoint: a scene node's side of the gateways. Their batches of requests go to its world and
/// the answers back in one batch per gateway; each line's events of a tick go out as one message on
/// the line's subject, numbered, so a gateway that misses one asks for the line as it stands.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/cluster/nats_link.hpp>
#include <scenert/scene/line_event.hpp>
#include <scenert/scene/world_port.hpp>

namespace scenert::cluster {

struct node_endpoint_stats {
  std::uint64_t request_batches = 0, requests = 0, bad_batches = 0;
  std::uint64_t answer_batches = 0, answers = 0;
  std::uint64_t event_batches = 0, views_asked = 0, publish_failures = 0;
};

/// Create it, hand on_line_events() to the world's options, create the world, then start(world).
/// Thread-safety: on_line_events' function from the lines' threads; the rest from one thread.
class node_endpoint {
 public:
  node_endpoint(nats_link& link, std::string node, std::uint64_t epoch);
  ~node_endpoint();
  node_endpoint(const node_endpoint&) = delete;
  node_endpoint& operator=(const node_endpoint&) = delete;

  /// For world_options::on_line_events.
  [[nodiscard]] std::function<void(line_handle, phase_id, std::span<const line_event>)> on_line_events();
  /// Subscribes to the node's requests and views; `w` must outlive stop().
  [[nodiscard]] cluster_result<void> start(world_port& w);
  /// Unsubscribes, then sends the answers still held. Called by the destructor too.
  void stop();

  [[nodiscard]] node_endpoint_stats stats() const noexcept;

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace scenert::cluster
