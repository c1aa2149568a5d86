// JPS's open list (a radix heap) against a plain list: every pop has the least f left, entries of
// equal f leave last in first out, ties in f frequent, f from the sums a search makes.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include <scenert/nav/map_gen.hpp>

#include "open_list.hpp"

namespace scenert::nav {
namespace {

struct test_entry {
  std::uint64_t order = 0;
  std::uint32_t index = 0;
  static test_entry make(double f, std::uint32_t index) { return {std::bit_cast<std::uint64_t>(f), index}; }
  [[nodiscard]] double f() const { return std::bit_cast<double>(order); }
};

// Pushes in rounds, each round's f no less than the last popped one's (as a consistent heuristic
// guarantees a search), popping a few between rounds; every pop must have the least f left and,
// among entries of that f, be the last pushed. f is straight + diagonal * sqrt(2) from counts.
void expect_pops_in_order(std::uint64_t seed, std::uint32_t spread, bool clear_between) {
  nav_random rng(seed);
  radix_list<test_entry> list;
  struct pushed {
    test_entry entry;
    std::uint32_t straight, diagonal;
  };
  std::vector<pushed> left;  // the reference: every entry pushed and not yet popped, in order
  std::uint32_t floor_straight = 0, floor_diagonal = 0;
  std::uint32_t next_index = 0;
  const auto pop_and_check = [&] {
    double least = INFINITY;
    for (const pushed& p : left) least = std::min(least, p.entry.f());
    auto last_of_least = left.end();
    for (auto it = left.begin(); it != left.end(); ++it)
      if (it->entry.f() == least) last_of_least = it;
    const test_entry got = list.pop();
    ASSERT_EQ(got.f(), least);
    ASSERT_EQ(got.index, last_of_least->entry.index);
    // The next pushes start from the popped entry's counts: their f are no less.
    floor_straight = last_of_least->straight, floor_diagonal = last_of_least->diagonal;
    left.erase(last_of_least);
  };
  for (int round = 0; round < 300; ++round) {
    for (std::uint32_t k = 0, n = rng.below(6); k < n; ++k) {
      // Small steps from the floor make ties in f frequent.
      const std::uint32_t s = floor_straight + rng.below(spread + 1), d = floor_diagonal + rng.below(3);
      const double f = static_cast<double>(s) + static_cast<double>(d) * 1.4142135623730950488;
      list.push(test_entry::make(f, next_index));
      left.push_back({test_entry::make(f, next_index++), s, d});
    }
    for (std::uint32_t k = 0, n = rng.below(5); k < n && !left.empty(); ++k) {
      ASSERT_FALSE(list.empty());
      pop_and_check();
    }
    if (clear_between && rng.below(20) == 0) {
      list.clear(), left.clear();
      floor_straight = rng.below(50), floor_diagonal = rng.below(50);
    }
  }
  while (!left.empty()) pop_and_check();
  EXPECT_TRUE(list.empty());
}

TEST(OpenList, PopsTheLeastFLastInFirstOut) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) expect_pops_in_order(seed, 3, false);
}

TEST(OpenList, StartsAfreshAfterClear) {
  for (std::uint64_t seed = 21; seed <= 30; ++seed) expect_pops_in_order(seed, 5, true);
}

}  // namespace
}  // namespace scenert::nav
