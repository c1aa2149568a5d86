#include <scenert/cluster/player_ids.hpp>

#include <fmt/format.h>

#include <charconv>
#include <climits>
#include <string>

namespace scenert::cluster {

namespace {

constexpr const char* key = "ids.players";  // the first id not yet taken, in decimal
constexpr int cas_tries = 16;

}  // namespace

cluster_result<id_block> take_player_ids(kv_bucket& bucket, std::int32_t count) {
  for (int i = 0; i < cas_tries; ++i) {
    auto got = bucket.get(key);
    if (!got && got.code() != cluster_errc::not_found) return got.error();
    std::int64_t first = 1;
    if (got) {
      const auto& v = got->value;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), first);
      if (ec != std::errc{} || end != v.data() + v.size() || first < 1)
        return fail(cluster_errc::bad_record,
                    fmt::format("cluster: key {}: '{}' is not a player id", key, v));
    }
    const std::int64_t last = first + count - 1;
    if (count < 1 || last > INT32_MAX)
      return fail(cluster_errc::full,
                  fmt::format("cluster: no block of {} player ids left (next is {})", count, first));
    const std::string next = std::to_string(last + 1);
    auto rev = got ? bucket.update(key, next, got->revision) : bucket.create(key, next);
    if (rev) return id_block{static_cast<std::int32_t>(first), static_cast<std::int32_t>(last)};
    if (rev.code() != cluster_errc::conflict) return rev.error();
  }
  return fail(cluster_errc::conflict, fmt::format("cluster: key {}: lost {} races in a row", key, cas_tries));
}

}  // namespace scenert::cluster
