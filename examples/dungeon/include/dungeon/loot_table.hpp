#pragma once
/// loot_table: what a chest may give, each entry with a weight; a roll picks one entry with the
/// probability weight / total. Seed 003's method: the weights' prefix sums, a key drawn uniformly in
/// [1, total], and a binary search for the first prefix sum that reaches the key.

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include <scenert/scene/player_store.hpp>

namespace dungeon {

/// One entry of a loot table: `count` of `item`, drawn with `weight` (> 0).
struct loot_entry {
  scenert::item_id item = 0;  ///< the studio's item (or currency) number
  std::int64_t count = 1;     ///< how many a roll of it gives (> 0)
  std::uint32_t weight = 1;   ///< relative chance (> 0)
  friend bool operator==(const loot_entry&, const loot_entry&) = default;
};

/// A weighted table, immutable once built. Thread-safety: const after construction.
class loot_table {
 public:
  /// An empty table (rolls nothing).
  loot_table() = default;
  /// Builds the prefix sums; every weight must be above 0 (module_params checks the table's).
  explicit loot_table(std::vector<loot_entry> entries);

  /// The entries, in table order.
  [[nodiscard]] std::span<const loot_entry> entries() const noexcept { return entries_; }
  /// The sum of the weights.
  [[nodiscard]] std::uint64_t total_weight() const noexcept { return prefix_.empty() ? 0 : prefix_.back(); }
  /// The entry a key in [1, total_weight()] falls on: the first whose prefix sum reaches it.
  [[nodiscard]] std::size_t index_of_key(std::uint64_t key) const;
  /// One roll with the line's random source; only on a non-empty table.
  [[nodiscard]] const loot_entry& roll(std::mt19937_64& random) const;

 private:
  std::vector<loot_entry> entries_;
  std::vector<std::uint64_t> prefix_;  // prefix_[i]: the weights of entries 0..i
};

}  // namespace dungeon
