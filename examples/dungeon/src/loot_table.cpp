#include <dungeon/loot_table.hpp>

#include <algorithm>

#include <scenert/runtime/assert.hpp>

namespace dungeon {

loot_table::loot_table(std::vector<loot_entry> entries) : entries_(std::move(entries)) {
  prefix_.reserve(entries_.size());
  std::uint64_t sum = 0;
  for (const auto& e : entries_) {
    SCENERT_ASSERT(e.weight > 0 && e.count > 0, "loot_table: a weight or a count of 0");
    sum += e.weight;
    prefix_.push_back(sum);
  }
}

std::size_t loot_table::index_of_key(std::uint64_t key) const {
  // Entry i owns the keys (prefix[i-1], prefix[i]]: the first prefix sum not below the key.
  const auto it = std::lower_bound(prefix_.begin(), prefix_.end(), key);
  return static_cast<std::size_t>(it - prefix_.begin());
}

const loot_entry& loot_table::roll(std::mt19937_64& random) const {
  SCENERT_ASSERT(!entries_.empty(), "loot_table::roll: an empty table");
  std::uniform_int_distribution<std::uint64_t> key(1, total_weight());
  return entries_[index_of_key(key(random))];
}

}  // namespace dungeon
