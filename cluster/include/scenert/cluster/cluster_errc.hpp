#pragma once
/// The cluster's expected failures: what a call to the NATS store can answer besides success.

#include <cstdint>
#include <string_view>

#include <scenert/runtime/result.hpp>

namespace scenert::cluster {

enum class cluster_errc : std::uint8_t {
  unavailable,  ///< the server did not answer (down, restarting, JetStream off, timeout)
  conflict,     ///< a compare-and-set lost: the key exists, or moved past the revision given
  not_found,    ///< no such key (or it was deleted)
  bad_record,   ///< a stored value that is not a record of the expected shape
  fenced,       ///< this process's claim is gone (declared dead, or a newer epoch took its name)
  full,         ///< every line id of the scene is held cluster-wide (max_lines)
  bad_name,     ///< a node name that is not 1-64 letters, digits, '-' or '_'
  count_,       ///< not a code: how many there are
};

[[nodiscard]] std::string_view to_string(cluster_errc code) noexcept;

template <class T>
using cluster_result = result<T, cluster_errc>;

}  // namespace scenert::cluster
