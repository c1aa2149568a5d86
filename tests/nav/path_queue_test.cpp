#include <scenert/nav/path_queue.hpp>

#include <gtest/gtest.h>

#include "oracle.hpp"

namespace scenert::nav {
namespace {

using test::make_map;

// Steps until the request is done; gives the number of steps, or -1 past `max_steps`.
int run_until_done(path_queue& q, path_handle h, std::uint32_t budget, int max_steps = 1000000) {
  for (int steps = 0; steps < max_steps; ++steps) {
    if (*q.state(h) != request_state::waiting && *q.state(h) != request_state::running) return steps;
    q.step(budget);
  }
  return -1;
}

TEST(PathQueue, SlicedEqualsUnslicedForRandomBudgets) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const auto map = make_map({seed % 2 ? map_kind::random : map_kind::rooms, 128, 96, seed, 0.3, 10});
    nav_random rng(seed);
    for (auto algo : {algorithm::astar, algorithm::jps}) {
      path_queue q(map, {64, 4, algo});
      search_context ctx;
      std::vector<cell> want, got;
      for (int k = 0; k < 12; ++k) {
        const cell start = test::random_open_cell(rng, *map), goal = test::random_open_cell(rng, *map);
        const auto whole = ctx.find(*map, start, goal, algo, want);
        const std::uint32_t budget = 1 + rng.below(k % 3 == 0 ? 8 : 4000);
        const auto h = *q.submit(start, goal);
        ASSERT_GE(run_until_done(q, h, budget), 0);
        EXPECT_EQ(*q.state(h), whole.status == search_status::found ? request_state::found : request_state::unreachable);
        EXPECT_EQ(q.path(h, got), nav_errc::ok);
        EXPECT_EQ(got, want) << "budget " << budget;
        EXPECT_EQ(q.cancel(h), nav_errc::ok);
      }
    }
  }
}

TEST(PathQueue, SlicedEqualsUnslicedWithManyRequestsInterleaved) {
  const auto map = make_map({map_kind::random, 100, 100, 5, 0.25});
  nav_random rng(5);
  path_queue q(map, {32, 3});
  search_context ctx;
  std::vector<path_handle> handles;
  std::vector<std::vector<cell>> want(20);
  for (auto& w : want) {
    const cell start = test::random_open_cell(rng, *map), goal = test::random_open_cell(rng, *map);
    (void)ctx.find(*map, start, goal, algorithm::jps, w);
    handles.push_back(*q.submit(start, goal));
  }
  for (int steps = 0; steps < 100000 && q.step(37) > 0;) ++steps;
  std::vector<cell> got;
  for (std::size_t i = 0; i < handles.size(); ++i) {
    EXPECT_EQ(q.path(handles[i], got), nav_errc::ok);
    EXPECT_EQ(got, want[i]) << "request " << i;
  }
}

TEST(PathQueue, ALongSearchDoesNotStarveAShortOne) {
  // A maze: the long request needs tens of thousands of expansions, the short one a few dozen.
  const auto map = make_map({map_kind::maze, 201, 201, 3, 0.2, 16, 1});
  path_queue q(map, {8, 4, algorithm::astar});
  const auto long_h = *q.submit({0, 0}, {198, 198});
  q.step(50);
  const auto short_h = *q.submit({0, 0}, {4, 0});
  search_context ctx;
  std::vector<cell> path;
  const auto alone = ctx.find(*map, {0, 0}, {4, 0}, algorithm::astar, path);
  const std::uint32_t budget = 20;
  // Half of each step's budget goes to the short request: done within 2 * alone / budget + 2 steps.
  const int steps = run_until_done(q, short_h, budget);
  EXPECT_GE(steps, 0);
  EXPECT_LE(steps, static_cast<int>(2 * alone.expansions / budget + 2));
  EXPECT_EQ(*q.state(long_h), request_state::running);
}

TEST(PathQueue, CancelledAndStaleHandlesAreAnsweredAsSuch) {
  const auto map = make_map({map_kind::maze, 101, 101, 4, 0.2, 16, 1});
  path_queue q(map, {4, 1});
  const auto a = *q.submit({0, 0}, {98, 98});
  const auto b = *q.submit({0, 0}, {98, 96});  // waits: one context
  EXPECT_EQ(*q.state(b), request_state::waiting);
  q.step(10);
  EXPECT_EQ(q.cancel(a), nav_errc::ok);
  EXPECT_EQ(q.cancel(a), nav_errc::stale_handle);
  EXPECT_EQ(q.state(a).code(), nav_errc::stale_handle);
  std::vector<cell> out{{1, 1}};
  EXPECT_EQ(q.path(a, out), nav_errc::stale_handle);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(*q.state(b), request_state::running);  // took the freed context
  EXPECT_EQ(q.cancel(b), nav_errc::ok);
  const auto c = *q.submit({0, 0}, {2, 0});  // reuses a slot: the old handles stay stale
  EXPECT_EQ(q.state(b).code(), nav_errc::stale_handle);
  EXPECT_EQ(q.cancel(path_handle{}), nav_errc::stale_handle);
  EXPECT_EQ(q.cancel(path_handle{999, 1}), nav_errc::stale_handle);
  EXPECT_GE(run_until_done(q, c, 100), 0);
  EXPECT_EQ(*q.state(c), request_state::found);
  EXPECT_EQ(q.size(), 1u);
}

TEST(PathQueue, CancellingWaitingRequestsFreesTheirPlaces) {
  const auto map = make_map({map_kind::open, 32, 32, 4});
  path_queue q(map, {4, 1});
  for (int round = 0; round < 10; ++round) {
    std::vector<path_handle> hs;
    for (int i = 0; i < 4; ++i) hs.push_back(*q.submit({0, 0}, {31, 31}));
    EXPECT_EQ(q.submit({0, 0}, {1, 1}).code(), nav_errc::queue_full);
    for (auto h : hs) EXPECT_EQ(q.cancel(h), nav_errc::ok);
  }
  EXPECT_EQ(q.size(), 0u);
}

TEST(PathQueue, PartialPathIsAValidPathFromTheStart) {
  const auto map = make_map({map_kind::rooms, 120, 120, 9, 0.2, 12});
  nav_random rng(9);
  for (auto algo : {algorithm::astar, algorithm::jps}) {
    path_queue q(map, {4, 1, algo});
    const cell start = test::random_open_cell(rng, *map), goal = test::random_open_cell(rng, *map);
    const auto h = *q.submit(start, goal);
    std::vector<cell> partial;
    for (int steps = 0; steps < 10000 && *q.state(h) == request_state::running; ++steps) {
      q.step(3);
      ASSERT_EQ(q.path(h, partial), nav_errc::ok);
      ASSERT_FALSE(partial.empty());
      ASSERT_TRUE(validate_path(*map, partial, start, partial.back())) << "step " << steps;
    }
    EXPECT_EQ(*q.state(h), request_state::found);
  }
}

}  // namespace
}  // namespace scenert::nav
