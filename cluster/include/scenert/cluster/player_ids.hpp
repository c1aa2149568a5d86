#pragma once
/// Player ids a cluster's fronts give out (each gateway's, and a node's own with `run --cluster --tcp`):
/// each start of one takes a block of its own from one counter in the store (compare-and-set), so no
/// two players anywhere in the cluster share an id.

#include <cstdint>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/cluster/kv_bucket.hpp>

namespace scenert::cluster {

/// Ids one start of a front takes: logins per run; 2,147 starts in a cluster's life.
inline constexpr std::int32_t player_ids_per_start = 1'000'000;

/// A block of player ids, all given out to one front.
struct id_block {
  std::int32_t first = 0, last = 0;  ///< both given out
};

/// Takes the next `count` ids (1 up to INT32_MAX in all); `full` once the cluster spent them.
[[nodiscard]] cluster_result<id_block> take_player_ids(kv_bucket& bucket, std::int32_t count);

}  // namespace scenert::cluster
