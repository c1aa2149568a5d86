#pragma once
/// Player ids a cluster's gateways give out: each gateway takes a block of its own from one counter
/// in the store (compare-and-set), so no two players anywhere in the cluster share an id.

#include <cstdint>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/cluster/kv_bucket.hpp>

namespace scenert::cluster {

struct id_block {
  std::int32_t first = 0, last = 0;  ///< both given out
};

/// Takes the next `count` ids (1 up to INT32_MAX in all); `full` once the cluster spent them.
[[nodiscard]] cluster_result<id_block> take_player_ids(kv_bucket& bucket, std::int32_t count);

}  // namespace scenert::cluster
