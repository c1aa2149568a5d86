#pragma once
/// The world's line directory on a node of a cluster (`scenert run --cluster`).

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>

#include <scenert/cluster/line_store.hpp>
#include <scenert/cluster/node_lease.hpp>
#include <scenert/config/scene_table.hpp>
#include <scenert/scene/line_directory.hpp>

namespace scenert::cluster {

struct cluster_directory_options {
  /// After `full` (or a store that did not answer) a scene is not asked for a line again this long:
  /// the world asks for its min_lines every tick, and each ask is a round trip.
  std::chrono::milliseconds backoff{1000};
  /// Told when the store refused or missed a write (a line closed while fenced, a server away); on the
  /// world's thread, or on sync()'s.
  std::function<void(std::string_view)> warn;
  /// Whether the link to the server is up (unset: always). While it is down no line opens (the
  /// world's thread never waits for a round trip that cannot succeed), and a line freed meanwhile is
  /// written closed by a later sync().
  std::function<bool()> linked;
};

/// Keeps the `players` of a node's lines in the store roughly current. The directory counts on the
/// world's thread (no I/O per player); sync() writes the counts that changed since their last write.
/// Thread-safety: sync() from one thread at a time, any thread beside the world's: it shares the
/// directory's store under a lock that the world's thread takes only to open or free a line.
class player_count_sync {
 public:
  virtual ~player_count_sync() = default;
  /// Writes the closes that could not be written when their lines were freed, then each held line's
  /// count that changed since its last write (one compare-and-set each, at the line's revision);
  /// returns how many counts were written. Nothing while the link is down. A fenced line is told to `warn`
  /// once and left alone from then on; a store that does not answer ends the pass (the next one tries again).
  virtual std::size_t sync() = 0;
};

/// Players, picks and checks stay in a local directory (O(1), on the world's thread). A line opens
/// only once the cluster's store gave it an id and a generation (a compare-and-set: `max_lines`
/// holds across nodes, and no two nodes serve one generation), and goes back to the store as closed
/// once its id is free here. Only this node's lines are offered: other nodes' are reached by travel.
/// The lines' player counts stay at 0 in the store (make_synced_cluster_directory writes them).
/// Thread-safety: the world's thread only, as every line directory.
[[nodiscard]] std::unique_ptr<line_directory> make_cluster_directory(const scene_table& table,
                                                                     line_store store, node_record self,
                                                                     cluster_directory_options options = {});

/// A cluster directory for the world and, for the node's loop, what writes its lines' player counts.
struct synced_cluster_directory {
  std::shared_ptr<line_directory> directory;
  std::shared_ptr<player_count_sync> counts;  ///< the same object: either may outlive the other
};

/// make_cluster_directory() whose lines' player counts reach the store through `counts.sync()`.
[[nodiscard]] synced_cluster_directory make_synced_cluster_directory(const scene_table& table,
                                                                     line_store store, node_record self,
                                                                     cluster_directory_options options = {});

}  // namespace scenert::cluster
