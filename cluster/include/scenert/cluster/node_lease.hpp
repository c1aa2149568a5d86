#pragma once
/// Nodes and their liveness in the cluster's `nodes` bucket: each node holds a lease on its name
/// (an epoch and a revision), renews it by compare-and-set, and loses it to whoever declares it dead.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/cluster/kv_bucket.hpp>
#include <scenert/scene/fwd.hpp>

namespace scenert::cluster {

/// What the bucket holds for a node, under the key `node.<name>`.
struct node_record {
  std::string name;
  std::uint64_t epoch = 0;       ///< one more at each join: a restarted node never reuses an old one
  std::uint32_t load = 0;        ///< players it hosts (the least-loaded node gets the next line)
  bool dead = false;             ///< declared dead: its lines are tombstoned, its epoch is over
  std::vector<scene_id> scenes;  ///< the scenes it hosts (`scenert run --hosts`); empty: every scene
  /// Joined but not listening for requests yet (its world is being built): gateways send it none,
  /// since a request published before it subscribes is lost. Its first beat clears it.
  bool starting = false;

  /// Whether it hosts the scene's lines.
  [[nodiscard]] bool hosts(scene_id scene) const {
    return scenes.empty() || std::find(scenes.begin(), scenes.end(), scene) != scenes.end();
  }
};

/// A node record and the revision it was read at.
struct node_entry {
  node_record record;
  std::uint64_t revision = 0;
};

/// A node's claim on its name. Every beat is an update at the revision of its own last write, so
/// once anyone else writes the record (a watcher declaring it dead, the same name joining again)
/// the next beat fails as `fenced`, and the node must stop serving: its lines are someone else's.
/// Thread-safety: one thread at a time.
class node_lease {
 public:
  /// Whether the joined record says the node already listens for requests.
  enum class listening : std::uint8_t { now, from_first_beat };

  /// Takes the name with the next epoch (1 for a name never seen), whatever the last one's state,
  /// for the scenes it hosts (empty: every scene). A node that subscribes after its join joins
  /// `from_first_beat` (`node_record::starting`).
  [[nodiscard]] static cluster_result<node_lease> join(kv_bucket& nodes, const std::string& name,
                                                       std::uint32_t load, std::vector<scene_id> scenes = {},
                                                       listening from = listening::now);
  /// Renews the lease with the node's current load (and ends its `starting`).
  [[nodiscard]] cluster_result<void> beat(std::uint32_t load);

  [[nodiscard]] const node_record& record() const noexcept { return entry_.record; }
  [[nodiscard]] std::uint64_t revision() const noexcept { return entry_.revision; }

 private:
  node_lease(kv_bucket nodes, node_entry e) : nodes_(std::move(nodes)), entry_(std::move(e)) {}
  kv_bucket nodes_;
  node_entry entry_;
};

/// Every node record, dead ones included. A listing is a watch over the bucket, and a key written
/// meanwhile (a node's beat) may be left out of it: each name of `expected` the listing left out is
/// read on its own (absent only when that read says so).
[[nodiscard]] cluster_result<std::vector<node_entry>> list_nodes(const kv_bucket& nodes,
                                                                 std::span<const std::string> expected = {});

/// Declares a node dead if its record is still at `seen` (it has not beaten since): one
/// compare-and-set, so of several watchers exactly one wins, and a node that beat meanwhile lives.
[[nodiscard]] cluster_result<node_entry> declare_dead(kv_bucket& nodes, const std::string& name,
                                                      std::uint64_t seen);

/// Heartbeats as a watcher sees them, by its own clock (no clock is shared between machines): a
/// live node whose revision has not moved for `dead_after` is silent.
class heartbeat_watch {
 public:
  using clock = std::chrono::steady_clock;
  void saw(const std::vector<node_entry>& nodes, clock::time_point now);
  [[nodiscard]] std::vector<node_entry> silent(clock::time_point now, clock::duration dead_after) const;
  /// After a link outage, when nobody could beat: forgets what it saw and counts nobody's silence
  /// from before `from`. The others reconnect when they can, some a while after this watcher.
  void restart(clock::time_point from);

 private:
  struct seen {
    node_entry entry;
    clock::time_point since;  // when this revision was first seen (not before counting_from_)
  };
  std::map<std::string, seen> nodes_;
  clock::time_point counting_from_{};
};

}  // namespace scenert::cluster
