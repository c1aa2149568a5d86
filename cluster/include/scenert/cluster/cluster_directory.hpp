#pragma once
/// The world's line directory on a node of a cluster (`scenert run --cluster`).

#include <chrono>
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
  /// Told when the store refused or missed a write (a line closed while fenced, a server away).
  std::function<void(std::string_view)> warn;
};

/// Players, picks and checks stay in a local directory (O(1), on the world's thread). A line opens
/// only once the cluster's store gave it an id and a generation (a compare-and-set: `max_lines`
/// holds across nodes, and no two nodes serve one generation), and goes back to the store as closed
/// once its id is free here. Only this node's lines are offered: other nodes' are reached by travel.
/// Thread-safety: the world's thread only, as every line directory.
[[nodiscard]] std::unique_ptr<line_directory> make_cluster_directory(const scene_table& table,
                                                                     line_store store, node_record self,
                                                                     cluster_directory_options options = {});

}  // namespace scenert::cluster
