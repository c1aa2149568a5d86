// JPS's open list against a sort: the total order (f, then the larger g, then the lower index),
// ties in f frequent.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <scenert/nav/map_gen.hpp>

#include "open_list.hpp"

namespace scenert::nav {
namespace {

// Pushes in rounds, each round's f no less than the last popped one's (as a consistent heuristic
// guarantees a search), popping a few between rounds; every pop must be the least entry left.
template <class List>
void expect_pops_in_order(std::uint64_t seed, double spread) {
  nav_random rng(seed);
  List list;
  std::vector<open_entry> left;  // the reference: every entry pushed and not yet popped
  double floor_f = 0;
  std::uint32_t next_index = 0;
  const auto pop_and_check = [&] {
    const auto least = std::min_element(left.begin(), left.end(),
                                        [](const open_entry& a, const open_entry& b) { return a.before(b); });
    const open_entry got = list.pop();
    ASSERT_EQ(got.order, least->order);
    ASSERT_EQ(got.rest, least->rest);
    floor_f = got.f();
    left.erase(least);
  };
  for (int round = 0; round < 300; ++round) {
    for (std::uint32_t k = 0, n = rng.below(6); k < n; ++k) {
      // Coarse values make ties in f (broken by g, then by index) frequent.
      const double f =
          floor_f + static_cast<double>(rng.below(static_cast<std::uint32_t>(spread * 4) + 1)) / 4;
      const double g = static_cast<double>(rng.below(8));
      list.push(open_entry::make(f, g, next_index));
      left.push_back(open_entry::make(f, g, next_index++));
    }
    for (std::uint32_t k = 0, n = rng.below(5); k < n && !left.empty(); ++k) {
      ASSERT_FALSE(list.empty());
      pop_and_check();
    }
  }
  while (!left.empty()) pop_and_check();
  EXPECT_TRUE(list.empty());
}

TEST(OpenList, PopsInOrder) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) expect_pops_in_order<open_list>(seed, 40);
}

}  // namespace
}  // namespace scenert::nav
