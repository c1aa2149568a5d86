#pragma once
/// remote_world: the world as a gateway's front sees it, the scene nodes behind NATS. A request goes
/// to the node that hosts its player (a player nowhere yet: the node of the line it will stand on),
/// in one batch per node; the answers come back in one batch per node. Every line's events reach the front in
/// order; a gateway that missed some (a lost link, the slow-consumer cut-off) asks the line's node
/// for its lines as they stand and hands the front the difference.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/cluster/kv_bucket.hpp>
#include <scenert/cluster/line_choice.hpp>
#include <scenert/cluster/nats_link.hpp>
#include <scenert/scene/line_event.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::cluster {

/// A player whose node died, as the gateway last heard of it.
struct orphan {
  player_id player = 0;
  scene_id scene = 0;                    ///< the scene of its last line (0: none heard, e.g. in transit)
  std::optional<grid::cell_point> at{};  ///< where it stood there
};

struct remote_world_options {
  std::string gateway;  ///< this gateway's name: its answers' subject
  /// A request its node has not answered this soon is answered node_unavailable.
  std::chrono::milliseconds answer_timeout{5000};
  /// The front's: every line's events, in order per line and phase.
  std::function<void(line_handle, phase_id, std::span<const line_event>)> on_line_events;
  /// The front's: every line's game-module frames, in the line's order with its events.
  std::function<void(line_handle, std::span<const module_frame>)> on_module_frames;
  std::function<void(std::string_view)> warn;  ///< what went wrong, for the log
  /// A node the cluster declared dead, with the players this gateway had on it: the front places
  /// them again. Its lines' players and monsters have left the front's views (from the poll's thread).
  std::function<void(const std::string& node, std::vector<orphan> players)> on_node_lost;
  /// Resume tokens cluster-wide (key token.TOKEN: the player, its name, the gateway holding it), so
  /// that a client may resume on another gateway. Unset: a token is this gateway's alone.
  std::optional<kv_bucket> sessions;
  /// Another gateway claimed one of this gateway's players (its client resumed there): the front
  /// lets it go (from a library thread).
  std::function<void(player_id)> on_claimed_elsewhere;
  /// A player whose journey was given up (answered node_unavailable, its node kept it) stands on
  /// this line (or phase) still, though the target's line may have shown it entering and leaving
  /// again: the front shows it that view again. Said once the target's line no longer holds it, and
  /// again if the target's line shows it later; the front ignores it while the player stands on a
  /// line in its eyes (from a library thread).
  std::function<void(player_id, line_handle, phase_id)> on_stands_on;
  /// Line events waiting for this gateway past this many bytes are dropped by the library (the
  /// slow-consumer cut-off); the lines they belong to are made good from their nodes' views.
  std::size_t max_pending_event_bytes = 64u << 20;
  /// Journeys between nodes (see below). Off: a request for a line or a team-mate on another node
  /// is refused by the player's own node, as if that line were not open.
  bool journeys = true;
  /// The table the nodes host. With it, a player entering a scene whose lines anyone may share (a
  /// town, a field, a shared dungeon) goes to the node of the line the scene's policy picks among
  /// every node's, as heard on their events, and a player changing scenes travels there (with
  /// `journeys`); when every line is full, the line opens where `open_lines_on` says. Unset: a
  /// player's requests go to its own node, a new player's to the least-loaded.
  std::shared_ptr<const scene_table> table;
  line_opening open_lines_on = line_opening::least_loaded_node;
};

struct remote_world_stats {
  std::uint64_t request_batches = 0, requests = 0, answers = 0, timeouts = 0, no_node = 0;
  std::uint64_t event_batches = 0, gaps = 0, views_asked = 0, views_applied = 0, bad_messages = 0;
  std::uint64_t dropped = 0;  ///< event batches the library dropped for the gateway (slow consumer)
  std::uint64_t nodes_lost = 0, players_orphaned = 0;
  std::uint64_t claims = 0,
                claims_refused = 0;     ///< players claimed from other gateways, and tokens nobody held
  std::uint64_t claimed_elsewhere = 0;  ///< this gateway's players claimed by another
  std::uint64_t journeys = 0, journeys_failed = 0;  ///< players taken to another node, and refused there
  std::uint64_t entries_to_room = 0;                ///< entries and scene changes sent to a line with room
  std::uint64_t entries_to_new_line = 0;            ///< those sent where a line opens (every line was full)
  std::uint64_t sent_again = 0;  ///< entries of players nowhere yet sent to another node (theirs died)
  /// Event batches and views from a start of a node declared dead here (stopped, then let run again
  /// before it learnt so): not heard, its lines' players stand elsewhere now.
  std::uint64_t from_dead_starts = 0;
  /// Requests refused (node_unavailable) for a player standing on no node yet, its placement under way
  /// (placed again after its node died): sent to any node, they would place it a second time.
  std::uint64_t unplaced = 0;
  std::uint32_t live_nodes = 0, players = 0;
};

/// With `journeys`, a request that takes its player to a line on another node (a team-mate there, a
/// line hosted there) is a journey: the node the player stands on hands it over to the target, which
/// places it; once placed there it leaves the first node, which answers. The route switches on that
/// answer, and the player's requests made meanwhile wait and follow it. The nodes see a journey
/// through without the gateway, so a gateway that dies meanwhile leaves the player in one place.
/// Thread-safety: submit() and resync_all() from any thread; poll() from one.
class remote_world final : public world_port {
 public:
  /// Subscribes to the answers and to every line's events, reads the nodes, and asks every live
  /// node for its lines.
  [[nodiscard]] static cluster_result<std::unique_ptr<remote_world>> start(nats_link& link, kv_bucket nodes,
                                                                           remote_world_options options);
  ~remote_world() override;
  remote_world(const remote_world&) = delete;
  remote_world& operator=(const remote_world&) = delete;

  void submit(const world_request& request, world_reply reply) override;
  /// Writes the token to the sessions bucket, later and in order with forget() (on the remote
  /// world's own thread for the bucket), then calls `shared` there.
  void remember(std::string_view token, player_id player, std::string_view name,
                unique_function<void()> shared) override;
  void forget(std::string_view token) override;
  /// Takes the token's record (compare-and-set: of two gateways claiming one token, one wins), asks
  /// the live nodes which hosts the player, routes its requests there and tells the gateway that
  /// held it to let it go.
  void claim(std::string_view token, claim_reply reply) override;
  /// Answers the requests that timed out, rereads the nodes (their load, who died) every second and
  /// asks again for lines still waiting for their views. Every quarter second or so.
  void poll(std::chrono::steady_clock::time_point now);
  /// Asks every live node for its lines (after the link came back: events may have been lost); poll()
  /// asks again those that have not answered (one may not be back on the server yet).
  void resync_all();
  /// Whether every node asked by the last resync_all() answered (or died).
  [[nodiscard]] bool resynced() const;

  [[nodiscard]] remote_world_stats stats() const;

  struct impl;

 private:
  explicit remote_world(std::shared_ptr<impl> i);
  std::shared_ptr<impl> impl_;
};

}  // namespace scenert::cluster
