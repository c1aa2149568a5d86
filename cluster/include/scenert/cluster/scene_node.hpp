#pragma once
/// scene_node: a scene node's part in the cluster (`scenert run --cluster URL --node NAME`). It joins
/// with a lease of a new epoch, hands the world its line directory, answers the gateways through its
/// endpoint, beats, and watches the other nodes: one silent for `dead_after` is declared dead and its
/// lines tombstoned (its players are placed again by their gateways). It owns its timers.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/cluster/node_lease.hpp>
#include <scenert/cluster/player_ids.hpp>
#include <scenert/config/scene_table.hpp>
#include <scenert/scene/line_directory.hpp>

namespace scenert {
class world;
}

namespace scenert::cluster {

struct scene_node_options {
  std::string url;                              ///< the NATS server, nats://HOST:PORT
  std::string name;                             ///< this node's name in the cluster
  std::chrono::milliseconds beat{1000};         ///< how often it beats and looks at the others
  std::chrono::milliseconds dead_after{3000};   ///< a node (or gateway) silent this long is dead
  std::chrono::milliseconds resume{0};          ///< a dead gateway's players wait this long for a resume
  std::chrono::milliseconds poll_every{250};    ///< how often the endpoint looks at its gateways
  std::vector<scene_id> scenes;                 ///< the scenes it hosts; empty: every scene
  std::function<void(std::string_view)> warn;   ///< what went wrong and goes on, for the log
  std::function<void(std::string_view)> error;  ///< what went wrong for good (fenced), for the log
};

/// What a scene node counted; read from any thread.
struct scene_node_stats {
  std::uint64_t epoch = 0;
  bool connected = false;
  std::uint64_t link_reconnects = 0;
  std::uint64_t beats = 0, beat_failures = 0;
  std::uint64_t declared_dead = 0;  ///< silent nodes this node declared dead
  std::uint64_t tombstoned = 0;     ///< lines it took from them
  std::uint64_t line_counts_written = 0;
  node_endpoint_stats endpoint;
};

/// The part of the table a node hosts (`--hosts town,field`): the scenes of those kinds, and the
/// spaces bound to the towns among them (phases live on their town's lines). None when no scene
/// is left.
[[nodiscard]] std::optional<scene_table> hosted_part(const scene_table& table,
                                                     const std::vector<std::string>& kinds);

/// join(), hand take_directory() and on_line_events() to the world's options, create the world,
/// start(world); stop() before the world goes, then leave() for a clean goodbye.
/// Thread-safety: join, start, stop and leave from one thread; stats and fenced from any thread.
class scene_node {
 public:
  /// Connects, opens the buckets and takes the node's lease (a new epoch).
  [[nodiscard]] static cluster_result<std::unique_ptr<scene_node>> join(const scene_table& table,
                                                                        scene_node_options options);
  ~scene_node();
  scene_node(const scene_node&) = delete;
  scene_node& operator=(const scene_node&) = delete;

  /// A block of player ids for this process's own front (`run --cluster --tcp`), taken from the
  /// counter the gateways take theirs from: no player of this front shares an id with a gateway's.
  [[nodiscard]] cluster_result<id_block> take_player_ids(std::int32_t count);
  /// The world's line directory (once).
  [[nodiscard]] std::shared_ptr<line_directory> take_directory();
  /// For world_options::on_line_events: the lines' events to the gateways.
  [[nodiscard]] std::function<void(line_handle, phase_id, std::span<const line_event>)> on_line_events();
  /// For world_options::on_module_frames: the lines' game-module frames to the gateways.
  [[nodiscard]] std::function<void(line_handle, std::span<const module_frame>)> on_module_frames();
  /// Answers the gateways and starts the node's timers (beats, the watch, the endpoint's polls).
  [[nodiscard]] cluster_result<void> start(world& w);
  /// Once true, this node was declared dead or replaced: it must stop serving.
  [[nodiscard]] bool fenced() const noexcept;
  /// Stops the timers and the endpoint (the answers held leave first).
  void stop();
  /// A clean goodbye: the node says it is gone, so that nobody waits for its silence.
  void leave();
  [[nodiscard]] const node_record& self() const noexcept;
  [[nodiscard]] scene_node_stats stats() const;

  struct impl;

 private:
  explicit scene_node(std::unique_ptr<impl> i);
  std::unique_ptr<impl> impl_;
};

}  // namespace scenert::cluster
