// The loot table: each key on its entry (the binary search against a plain scan), and rolls that
// follow the weights (a chi-square test over 100,000 rolls).
#include <dungeon/loot_table.hpp>

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace dungeon {
namespace {

// The plain walk of seed 003: add the weights until the sum reaches the key.
std::size_t scanned(const std::vector<loot_entry>& entries, std::uint64_t key) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if ((sum += entries[i].weight) >= key) return i;
  return entries.size();
}

double chi_square(const std::vector<std::uint64_t>& seen, const std::vector<std::uint32_t>& weights,
                  double rolls) {
  double total = 0, chi = 0;
  for (const auto w : weights) total += w;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const double expected = rolls * weights[i] / total;
    chi += (static_cast<double>(seen[i]) - expected) * (static_cast<double>(seen[i]) - expected) / expected;
  }
  return chi;
}

TEST(LootTable, PutsEachKeyOnTheEntryWhosePrefixSumFirstReachesIt) {
  const loot_table small({{1, 1, 3}, {2, 1, 1}, {3, 1, 4}});
  const std::vector<std::size_t> want{0, 0, 0, 1, 2, 2, 2, 2};
  for (std::uint64_t key = 1; key <= 8; ++key)
    EXPECT_EQ(small.index_of_key(key), want[key - 1]) << "key " << key;
  EXPECT_EQ(small.total_weight(), 8u);

  std::mt19937_64 random(3);
  std::vector<loot_entry> entries;
  for (std::uint32_t i = 0; i < 37; ++i)
    entries.push_back({i + 1, 1, static_cast<std::uint32_t>(random() % 50 + 1)});
  const loot_table big(entries);
  for (std::uint64_t key = 1; key <= big.total_weight(); ++key)
    ASSERT_EQ(big.index_of_key(key), scanned(entries, key));
}

TEST(LootTable, RollsFollowTheWeightsOverAHundredThousandRolls) {
  const std::vector<std::uint32_t> weights{600, 250, 120, 30};
  std::vector<loot_entry> entries;
  for (std::uint32_t i = 0; i < weights.size(); ++i) entries.push_back({i + 1, 1, weights[i]});
  const loot_table table(entries);
  std::mt19937_64 random(38);
  constexpr int rolls = 100'000;
  std::vector<std::uint64_t> seen(weights.size());
  for (int i = 0; i < rolls; ++i) ++seen[table.roll(random).item - 1];
  // 3 degrees of freedom: 16.27 is the 0.1% point. The wrong weights (two swapped) must fail it, so
  // the test can tell a fair roll from a biased one.
  constexpr double critical = 16.27;
  EXPECT_LT(chi_square(seen, weights, rolls), critical);
  EXPECT_GT(chi_square(seen, {250, 600, 120, 30}, rolls), critical);
  EXPECT_GT(seen[3], 0u) << "the rarest entry drops too";
}

TEST(LootTable, TheSameSeedRollsTheSameLoot) {
  const loot_table table({{1, 100, 600}, {40, 1, 250}, {41, 1, 120}, {99, 1, 30}});
  std::mt19937_64 a(7), b(7);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(table.roll(a), table.roll(b));
}

}  // namespace
}  // namespace dungeon
