#pragma once
/// The cluster's lines in its `lines` bucket: which node serves which line generation. Opening,
/// closing and taking a line from a dead node are each one compare-and-set, so no two nodes ever
/// serve the same line generation, and a scene's `max_lines` holds across every node.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/cluster/kv_bucket.hpp>
#include <scenert/cluster/node_lease.hpp>
#include <scenert/config/scene_table.hpp>
#include <scenert/scene/fwd.hpp>

namespace scenert::cluster {

enum class line_state_in_cluster : std::uint8_t {
  open,        ///< served by its node
  closed,      ///< its node closed it: the id may open again, with the next generation
  tombstoned,  ///< taken from a dead node: the id may open again, with the next generation
};

/// What the bucket holds for a line, under the key `line.<scene>.<line>`.
struct line_record {
  scene_id scene = 0;
  std::uint32_t line = 0;
  std::uint32_t generation = 0;  ///< the fencing token: a handle of another generation is stale
  std::string node;              ///< who serves (or served) it
  std::uint64_t epoch = 0;       ///< the node's epoch when it opened the line
  std::uint32_t capacity = 0;    ///< the scene's (soft) capacity when it opened; 0 in older records
  std::uint32_t players = 0;     ///< as its node last wrote it (about every second, when it changed)
  line_state_in_cluster state = line_state_in_cluster::open;

  [[nodiscard]] line_handle handle() const noexcept { return {scene, line, generation}; }
};

/// A line as its node holds it: the record and the revision of the node's own last write.
struct held_line {
  line_record record;
  std::uint64_t revision = 0;
};

/// Thread-safety: one thread at a time per store (its bucket may be shared).
class line_store {
 public:
  explicit line_store(kv_bucket lines) : lines_(std::move(lines)) {}

  /// Opens the lowest id of `scene` in 1..max_lines that no node serves (never opened, closed or
  /// tombstoned) as far as this store knows, for `node` (its name and epoch), with the scene's
  /// capacity. Ids it read as served before are passed over without asking (a scene with a thousand
  /// lines opens its next in a round trip or two, not a thousand); when that finds none free, every
  /// id is read again, so `full` means every id is served.
  [[nodiscard]] cluster_result<held_line> open(const scene_def& scene, const node_record& node);
  /// Publishes the line's player count; `fenced` when the line is no longer this node's.
  [[nodiscard]] cluster_result<void> set_players(held_line& line, std::uint32_t players);
  /// The node closes its line; `fenced` when it was no longer the node's to close.
  [[nodiscard]] cluster_result<void> close(held_line& line);
  /// Takes every open line of a dead node (opened at `epoch` or before) from it: tombstoned, they
  /// are returned so that their players can be placed again.
  [[nodiscard]] cluster_result<std::vector<line_record>> tombstone(const std::string& node,
                                                                   std::uint64_t epoch);
  /// Every line record of a scene (any state), by line id.
  [[nodiscard]] cluster_result<std::vector<held_line>> lines(scene_id scene) const;

 private:
  cluster_result<void> write(held_line& line, line_record next, const char* what);
  /// Opens `id` if nobody serves it; empty when someone does.
  cluster_result<std::optional<held_line>> open_id(const scene_def& scene, std::uint32_t id,
                                                   const node_record& node);
  kv_bucket lines_;
  std::unordered_map<scene_id, std::unordered_set<std::uint32_t>> served_;  // ids read as served
};

}  // namespace scenert::cluster
