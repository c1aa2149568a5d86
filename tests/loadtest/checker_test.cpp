#include <scenert/loadtest/checker.hpp>

#include <scenert/config/table_loader.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace scenert::loadtest {
namespace {

constexpr const char* table_text = R"({
  "version": 1,
  "maps": [ { "id": 1, "name": "m", "width": 64, "height": 64, "area_width": 16, "area_height": 16 } ],
  "scenes": [
    { "id": 1, "name": "Town", "kind": "town", "capacity": 2, "hard_capacity": 3, "min_lines": 1, "max_lines": 2,
      "map": 1 },
    { "id": 5, "name": "Fair", "kind": "space", "capacity": 5, "bind_town": 1, "max_spaces": 1 }
  ]
})";

const scene_table& table() {
  static const load_result loaded = parse_table(table_text, "checker_test.json");
  EXPECT_TRUE(loaded.ok());
  return *loaded.table;
}

// A directory whose contents the test sets freely, wrong ones included.
class fake_directory final : public line_directory {
 public:
  std::map<std::uint32_t, std::vector<player_id>> lines;  // line id -> players (scene 1)
  std::map<player_id, location> where;

  line_handle handle(std::uint32_t line) const { return {1, line, 1}; }
  void put(player_id p, std::uint32_t line) {
    lines[line].push_back(p);
    where[p] = {location::state::in_line, handle(line), {}};
  }

  std::optional<line_handle> open_line(scene_id, party_id) override { return std::nullopt; }
  std::optional<line_handle> open_line_at(scene_id, std::uint32_t, std::uint32_t, party_id) override {
    return std::nullopt;
  }
  void quarantine_line(line_handle) override {}
  void close_line(line_handle) override {}
  void free_line(scene_id, std::uint32_t) override {}
  result<line_info, world_errc> check(line_handle l) const override {
    return line_info{l, line_state::open, static_cast<std::uint32_t>(lines.at(l.line).size())};
  }
  std::optional<line_handle> pick(scene_id, std::uint32_t) const override { return std::nullopt; }
  line_counts counts(scene_id) const override {
    const auto n = static_cast<std::uint32_t>(lines.size());
    return {n, n, n, 0};
  }
  void for_each_line(scene_id, const std::function<void(const line_info&)>& fn) const override {
    for (const auto& [id, ps] : lines)
      fn({handle(id), line_state::open, static_cast<std::uint32_t>(ps.size())});
  }
  location locate(player_id p) const override {
    auto it = where.find(p);
    return it == where.end() ? location{} : it->second;
  }
  void place(player_id, line_handle) override {}
  void begin_switch(player_id, line_handle) override {}
  void finish_switch(player_id) override {}
  void cancel_switch(player_id) override {}
  void remove(player_id) override {}
  void set_phase(player_id p, scene_id space, std::uint32_t phase, bool pending) override {
    where[p].space = space;
    where[p].phase = phase;
    where[p].phase_pending = pending;
  }
  void clear_phase(player_id p) override { set_phase(p, 0, 0, false); }
  std::vector<player_id> players(line_handle l) const override { return lines.at(l.line); }
  std::size_t player_count() const override { return where.size(); }
};

bool mentions(const invariant_checker& c, const std::string& text) {
  return std::any_of(c.messages().begin(), c.messages().end(),
                     [&](const std::string& m) { return m.find(text) != std::string::npos; });
}

TEST(InvariantChecker, AcceptsAConsistentWorld) {
  fake_directory dir;
  dir.put(1, 1);
  dir.put(2, 1);
  dir.put(3, 2);
  // Player 4 is switching: listed on both lines.
  dir.lines[1].push_back(4);
  dir.lines[2].push_back(4);
  dir.where[4] = {location::state::switching, dir.handle(1), dir.handle(2)};
  invariant_checker checker(table());
  checker.check(dir, {1, 1, 1, 1, 0});
  EXPECT_EQ(checker.violation_count(), 0u) << (checker.messages().empty() ? "" : checker.messages()[0]);
  EXPECT_EQ(checker.checks(), 1u);
  EXPECT_EQ(checker.scenes()[0].max_open_lines, 2u);
  EXPECT_EQ(checker.scenes()[0].max_players_on_line, 3u);
}

TEST(InvariantChecker, NamesALostPlayer) {
  fake_directory dir;
  dir.put(1, 1);
  invariant_checker checker(table());
  checker.check(dir, {1, 1});
  EXPECT_TRUE(mentions(checker, "player 2: lost"));
}

TEST(InvariantChecker, NamesAPlayerListedTwice) {
  fake_directory dir;
  dir.put(1, 1);
  dir.lines[2].push_back(1);
  invariant_checker checker(table());
  checker.check(dir, {1});
  EXPECT_TRUE(mentions(checker, "player 1: on a line but listed on 2 lines"));
}

TEST(InvariantChecker, NamesAPlayerNoAnswerPlaced) {
  fake_directory dir;
  dir.put(1, 1);
  invariant_checker checker(table());
  checker.check(dir, {0});
  EXPECT_TRUE(mentions(checker, "player 1: on a line although no answer placed it"));
  EXPECT_TRUE(mentions(checker, "the directory holds 1 players, the answers placed 0"));
}

TEST(InvariantChecker, NamesALineAboveHardCapacity) {
  fake_directory dir;
  for (player_id p = 1; p <= 4; ++p) dir.put(p, 1);
  invariant_checker checker(table());
  checker.check(dir, {1, 1, 1, 1});
  EXPECT_TRUE(mentions(checker, "scene 1 line 1: 4 players, above hard capacity 3"));
}

TEST(InvariantChecker, NamesOpenLinesOutsideMinAndMax) {
  fake_directory dir;
  invariant_checker checker(table());
  checker.check(dir, {});
  EXPECT_TRUE(mentions(checker, "0 open / 0 live lines, outside min_lines 1 .. max_lines 2"));
  for (std::uint32_t l = 1; l <= 3; ++l) dir.lines[l];
  checker.check(dir, {});
  EXPECT_TRUE(mentions(checker, "3 open / 3 live lines"));
}

TEST(InvariantChecker, NamesATownLineRunningMorePhasesThanMaxSpaces) {
  fake_directory dir;
  dir.put(1, 1);
  dir.put(2, 1);
  dir.set_phase(1, 5, 1, false);
  invariant_checker checker(table());
  checker.check(dir, {1, 1});
  EXPECT_EQ(checker.violation_count(), 0u);
  EXPECT_EQ(checker.scenes()[0].max_phases_on_line, 1u);
  dir.set_phase(2, 5, 2, false);
  checker.check(dir, {1, 1});
  EXPECT_TRUE(mentions(checker, "scene 1 line 1: 2 phases of space 5 running, above max_spaces 1"));
}

TEST(InvariantChecker, KeepsAtMostAHundredMessagesButCountsAll) {
  fake_directory dir;
  dir.put(1, 1);
  invariant_checker checker(table());
  for (int i = 0; i < 150; ++i) checker.add_violation("x");
  EXPECT_EQ(checker.violation_count(), 150u);
  EXPECT_EQ(checker.messages().size(), invariant_checker::max_messages);
}

}  // namespace
}  // namespace scenert::loadtest
