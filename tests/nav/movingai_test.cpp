#include <scenert/nav/movingai.hpp>

#include <gtest/gtest.h>

#include <initializer_list>

namespace scenert::nav {
namespace {

const std::string data_dir = std::string(SCENERT_SOURCE_DIR) + "/tests/data/movingai/";

// A text that must not parse, and how its error message must begin.
struct bad_case {
  const char* text;
  const char* want;
};

template <class Parse>
void expect_errors(Parse parse, std::initializer_list<bad_case> cases) {
  for (const auto& c : cases) {
    const auto got = parse(c.text);
    ASSERT_FALSE(got) << c.text;
    EXPECT_EQ(got.code(), nav_errc::bad_format);
    EXPECT_EQ(got.error().message.rfind(c.want, 0), 0u) << got.error().message;
  }
}

TEST(MovingAi, ParsesAMapWithEveryBlockKind) {
  const auto map = parse_movingai_map("type octile\nheight 2\nwidth 4\nmap\n.G@O\nTWS.\n\n//\nnotes\n", "m.map");
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_EQ(map->width, 4u);
  EXPECT_EQ(map->height, 2u);
  EXPECT_EQ(map->blocked, (std::vector<std::uint8_t>{0, 0, 1, 1, 1, 1, 1, 0}));
}

TEST(MovingAi, NamesFileLineAndReasonOfABadMap) {
  expect_errors([](const char* text) { return parse_movingai_map(text, "m.map"); }, {
      {"", "m.map:1: want 'type octile'"},
      {"type octile\nheight x\n", "m.map:2: want 'height H'"},
      {"type octile\nheight 2\nwidth 99999999\n", "m.map:3: want 'width W'"},
      {"type octile\nheight 2\nwidth 2\nmap\n..\n.\n.", "m.map:6: row of 1 cells, want 2"},
      {"type octile\nheight 2\nwidth 2\nmap\n..\n\n\n", "m.map:6: row of 0 cells, want 2"},
      {"type octile\nheight 2\nwidth 2\nmap\n..\n", "m.map:5: 3 bytes left for 2 rows of 2 cells"},
      {"type octile\nheight 16384\nwidth 16384\nmap\n..\n", "m.map:5: 3 bytes left for 16384 rows"},
      {"type octile\nheight 1\nwidth 2\nmap\n..\n..\n", "m.map:6: text after the last map row"},
  });
}

TEST(MovingAi, ParsesScenariosAndSkipsTheClosingNotes) {
  const auto scen = parse_movingai_scen("version 1\n3\ta.map\t10\t8\t1\t2\t3\t4\t2.82842712\n\n//\nnotes\n", "a.scen");
  ASSERT_TRUE(scen) << scen.error().message;
  ASSERT_EQ(scen->size(), 1u);
  const auto& s = scen->front();
  EXPECT_EQ(s.bucket, 3u);
  EXPECT_EQ(s.map, "a.map");
  EXPECT_EQ(s.start, (cell{1, 2}));
  EXPECT_EQ(s.goal, (cell{3, 4}));
  EXPECT_DOUBLE_EQ(s.length, 2.82842712);
  EXPECT_EQ(s.line, 2u);
}

TEST(MovingAi, NamesFileLineAndReasonOfABadScenario) {
  expect_errors([](const char* text) { return parse_movingai_scen(text, "s.scen"); }, {
      {"version 2\n", "s.scen:1: want 'version 1'"},
      {"version 1\n0\ta.map\t10\t10\t1\t1\t1\n", "s.scen:2: want 9 tab-separated fields"},
      {"version 1\n0\ta.map\t10\t10\t1\t1\t1\t1\t1\t1\n", "s.scen:2: want 9 tab-separated fields"},
      {"version 1\n\n0\ta.map\t10\t10\t1\t-1\t1\t1\t1\n", "s.scen:3: a field is not a number"},
      {"version 1\n0\ta.map\t10\t10\t1\t1\t10\t1\t1\n", "s.scen:2: start or goal outside"},
      {"version 1\n0\ta.map\t10\t10\t1\t1\t1\t1\tnan\n", "s.scen:2: bad length"},
  });
}

TEST(MovingAi, ReportsAMissingFile) {
  const auto map = load_movingai_map(data_dir + "no-such.map");
  EXPECT_EQ(map.code(), nav_errc::unreadable_file);
  EXPECT_NE(map.error().message.find("no-such.map"), std::string::npos);
}

TEST(MovingAi, SurvivesArbitraryBytes) {
  std::uint64_t x = 88172645463325252ULL;
  std::string text;
  for (int round = 0; round < 2000; ++round) {
    text.clear();
    const std::string_view heads[] = {"type octile\nheight 3\nwidth 3\nmap\n", "version 1\n", ""};
    text += heads[round % 3];
    for (int i = 0; i < round % 97; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      text += "\t\n.@0123456789-e.G"[x % 17];
    }
    (void)parse_movingai_map(text, "f");
    (void)parse_movingai_scen(text, "f");
  }
  SUCCEED();
}

}  // namespace
}  // namespace scenert::nav
