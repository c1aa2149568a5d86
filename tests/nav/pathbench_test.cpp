#include <scenert/nav/pathbench.hpp>

#include <gtest/gtest.h>

#include <string>

namespace scenert::nav {
namespace {

const std::string data_dir = std::string(SCENERT_SOURCE_DIR) + "/tests/data/movingai/";

TEST(Pathbench, AllArenaScenariosAreExact) {
  const auto report = pathbench({data_dir + "arena.map", data_dir + "arena.map.scen", pathbench_algos::all, 0, 1});
  EXPECT_EQ(report.exit_code, 0) << to_text(report);
  EXPECT_EQ(report.scenarios, 130u);
  EXPECT_EQ(report.total.astar.paths, 130u);
  EXPECT_EQ(report.total.jps.paths, 130u);
  EXPECT_TRUE(report.failures.empty());
  EXPECT_GT(report.total.speedup, 0);
  EXPECT_NE(to_json(report).find(R"("jps_speedup")"), std::string::npos);
}

TEST(Pathbench, AllArenaScenariosAreExactSliced) {
  for (std::uint32_t budget : {1u, 7u, 100u}) {
    const auto report = pathbench({data_dir + "arena.map", data_dir + "arena.map.scen", pathbench_algos::all, budget, 1});
    EXPECT_EQ(report.exit_code, 0) << to_text(report);
  }
}

TEST(Pathbench, AWrongLengthExitsWithThreeNamingTheScenario) {
  const auto map = load_movingai_map(data_dir + "arena.map");
  auto scen = load_movingai_scen(data_dir + "arena.map.scen");
  ASSERT_TRUE(map && scen);
  auto scenarios = *scen;
  scenarios[5].length += 0.01;
  const auto nav = *nav_map::create(map->width, map->height, map->blocked);
  const auto report = pathbench(*nav, scenarios, {"", "", pathbench_algos::jps, 0, 1}, "arena");
  EXPECT_EQ(report.exit_code, 3);
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_NE(report.failures[0].find("line " + std::to_string(scenarios[5].line) + " "), std::string::npos) << report.failures[0];
}

TEST(Pathbench, AnUnreadableFileExitsWithTwo) {
  const auto report = pathbench({data_dir + "arena.map", data_dir + "none.scen", pathbench_algos::all, 0, 1});
  EXPECT_EQ(report.exit_code, 2);
  EXPECT_NE(report.error.find("none.scen"), std::string::npos);
  EXPECT_NE(to_json(report).find(R"("error")"), std::string::npos);
}

}  // namespace
}  // namespace scenert::nav
