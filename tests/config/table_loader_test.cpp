#include <scenert/config/table_loader.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace scenert {
namespace {

using ::testing::ElementsAre;

const std::filesystem::path source_dir{SCENERT_SOURCE_DIR};

std::vector<std::string> lines_of(const load_result& r) {
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics) out.push_back(format_diagnostic(d));
  return out;
}

// A valid table with one map and one town; tests splice in what they need.
std::string table_with(std::string_view scenes, std::string_view extra = "") {
  return std::string(R"({"version": 1, )") + std::string(extra) +
         R"("maps": [{"id": 1, "width": 64, "height": 48, "area_width": 16, "area_height": 16}],
            "scenes": [)" +
         std::string(scenes) + "]}";
}
constexpr std::string_view town =
    R"({"id": 1, "name": "Town", "kind": "town", "capacity": 100, "max_lines": 2, "map": 1})";

TEST(TableLoader, LoadsTheMmoExample) {
  const auto r = load_table_file(source_dir / "examples/mmo.json");
  ASSERT_TRUE(r.ok()) << testing::PrintToString(lines_of(r));
  const scene_table& t = *r.table;
  const scene_def* stormhold = t.find_scene(1001);
  ASSERT_NE(stormhold, nullptr);
  EXPECT_EQ(stormhold->kind, scene_kind::town);
  int phases = 0, fields = 0;
  std::vector<std::uint32_t> dungeon_capacities;
  for (const auto& s : t.scenes) {
    if (s.kind == scene_kind::space && s.space->bind_town == 1001) {
      ++phases;
      EXPECT_EQ(s.map, stormhold->map);
    }
    if (s.kind == scene_kind::field) ++fields;
    if (s.kind == scene_kind::dungeon) {
      EXPECT_EQ(s.structure, scene_structure::group);
      dungeon_capacities.push_back(s.capacity);
    }
  }
  EXPECT_EQ(phases, 2);
  EXPECT_EQ(fields, 2);
  EXPECT_THAT(dungeon_capacities, ElementsAre(1, 5, 10));
  // World units: the plains' map is 2 units a cell, centred on the origin; the plains cap walking.
  const map_def& plains = t.maps.at(1);
  EXPECT_EQ(plains.cell_size, 2.0);
  EXPECT_EQ(plains.origin_x, -1024.0);
  EXPECT_EQ(plains.origin_z, -1024.0);
  EXPECT_EQ(t.find_scene(2001)->max_speed, 40.0);
  EXPECT_EQ(t.network.resume_ms, std::chrono::milliseconds(10'000));
  EXPECT_EQ(t.network.max_frame_bytes, 65'536u);
}

TEST(TableLoader, LoadsTheSmallExample) {
  const auto r = load_table_file(source_dir / "examples/small.json");
  ASSERT_TRUE(r.ok()) << testing::PrintToString(lines_of(r));
  EXPECT_EQ(r.source, (source_dir / "examples/small.json").string());
  EXPECT_TRUE(r.diagnostics.empty());
  EXPECT_EQ(r.table->maps.at(0).blocks.size(), 1u);
}

TEST(TableLoader, ReadsMonstersAsACountOrAsAKindWithItsPathBudget) {
  const auto r = parse_table(table_with(R"({"id": 1, "name": "Crypt", "kind": "dungeon", "capacity": 5,
      "max_lines": 2, "map": 1, "path_budget": 250,
      "monsters": {"count": 1, "kind": "boss", "speed": 2.5, "aggro_radius": 12, "leash": 30}},
    {"id": 2, "name": "Moor", "kind": "field", "capacity": 5, "max_lines": 2, "map": 1, "monsters": 7})"),
                             "t.json");
  ASSERT_TRUE(r.ok()) << testing::PrintToString(lines_of(r));
  const scene_def& boss = r.table->scenes.at(0);
  EXPECT_EQ(boss.monsters, 1u);
  EXPECT_EQ(boss.monster.kind, monster_kind::boss);
  EXPECT_EQ(boss.monster.speed, 2.5);
  EXPECT_EQ(boss.monster.aggro_radius, 12u);
  EXPECT_EQ(boss.monster.leash, 30u);
  EXPECT_EQ(boss.path_budget, 250u);
  const scene_def& mobs = r.table->scenes.at(1);
  EXPECT_EQ(mobs.monsters, 7u);
  EXPECT_EQ(mobs.monster.kind, monster_kind::mob);
  EXPECT_EQ(mobs.path_budget, default_path_budget(scene_kind::field));
  EXPECT_EQ(to_string(monster_kind::boss), "boss");
}

TEST(TableLoader, ReadsSeveralMonsterGroupsWithTheirBarriers) {
  const auto r = parse_table(table_with(R"({"id": 1, "name": "Crypt", "kind": "dungeon", "capacity": 5,
      "max_lines": 2, "map": 1, "monsters": [
        {"count": 1, "kind": "boss", "leash": 30, "barrier": "default"},
        {"count": 30, "speed": 2, "barrier": "slack"}, 4]})"),
                             "t.json");
  ASSERT_TRUE(r.ok()) << testing::PrintToString(lines_of(r));
  const scene_def& s = r.table->scenes.at(0);
  ASSERT_EQ(s.monster_group_count(), 3u);
  EXPECT_EQ(s.monster_total(), 35u);
  EXPECT_EQ(s.monster_group_at(0).count, 1u);
  EXPECT_EQ(s.monster_of(0).kind, monster_kind::boss);
  EXPECT_EQ(s.monster_of(0).leash, 30u);
  EXPECT_EQ(s.monster_of(0).barrier, monster_barrier::standard);
  EXPECT_EQ(s.monster_group_at(1).count, 30u);
  EXPECT_EQ(s.monster_of(1).kind, monster_kind::mob);
  EXPECT_EQ(s.monster_of(1).speed, 2.0);
  EXPECT_EQ(s.monster_of(1).barrier, monster_barrier::slack);
  EXPECT_EQ(s.monster_group_at(2).count, 4u);
  EXPECT_EQ(s.monster_of(2).barrier, monster_barrier::none);  // the default
}

TEST(TableLoader, AppliesTheDocumentedDefaults) {
  const auto r = parse_table(table_with(std::string(town) + R"(, {"id": 2, "name": "Phase", "kind": "space",
                                        "capacity": 10, "bind_town": 1})"),
                             "t.json");
  ASSERT_TRUE(r.ok()) << testing::PrintToString(lines_of(r));
  const scene_table& t = *r.table;
  EXPECT_EQ(t.runtime.workers, 2u);
  EXPECT_EQ(t.runtime.group_budget, 100u);
  EXPECT_EQ(t.runtime.idle_grace.count(), 30'000);
  EXPECT_EQ(t.runtime.stall_threshold.count(), 1'000);
  EXPECT_EQ(t.runtime.quarantine_after, 10u);
  const map_def& m = t.maps.at(0);
  EXPECT_EQ(m.eyesight_x, 1u);
  EXPECT_EQ(m.eyesight_y, 1u);
  EXPECT_TRUE(m.name.empty());
  EXPECT_EQ(m.cell_size, 1.0);
  EXPECT_EQ(m.origin_x, 0.0);
  EXPECT_EQ(m.origin_z, 0.0);
  const scene_def& s = t.scenes.at(0);
  EXPECT_EQ(s.max_speed, 0.0);
  EXPECT_EQ(t.network.resume_ms, std::chrono::milliseconds(0));
  EXPECT_EQ(t.network.max_frame_bytes, 64u * 1024);
  EXPECT_EQ(s.structure, scene_structure::single);
  EXPECT_EQ(s.hard_capacity, 100u);
  EXPECT_EQ(s.min_lines, 1u);
  EXPECT_EQ(s.frame_rate, 10u);
  EXPECT_EQ(s.policy, allocation_policy::fill_first);
  EXPECT_EQ(s.monsters, 0u);
  EXPECT_EQ(s.monster.kind, monster_kind::mob);
  EXPECT_EQ(s.monster.speed, 1.0);
  EXPECT_EQ(s.monster.aggro_radius, 32u);
  EXPECT_EQ(s.monster.leash, 48u);
  EXPECT_EQ(s.path_budget, default_path_budget(s.kind));
  EXPECT_FALSE(s.space.has_value());
  const scene_def& p = t.scenes.at(1);
  ASSERT_TRUE(p.space.has_value());
  EXPECT_EQ(p.map, 1u);  // the town's map
  EXPECT_EQ(p.space->min_spaces, 0u);
  EXPECT_EQ(p.space->max_spaces, 0u);
  EXPECT_EQ(p.min_lines, 0u);
  EXPECT_EQ(p.max_lines, 0u);
}

TEST(TableLoader, ReadsEveryRuntimeKey) {
  const auto r =
      parse_table(table_with(town, R"("runtime": {"workers": 8, "group_budget": 50, "idle_grace_ms": 0,
                                                 "stall_threshold_ms": 250, "quarantine_after": 0},)"),
                  "t.json");
  ASSERT_TRUE(r.ok()) << testing::PrintToString(lines_of(r));
  EXPECT_EQ(r.table->runtime.workers, 8u);
  EXPECT_EQ(r.table->runtime.group_budget, 50u);
  EXPECT_EQ(r.table->runtime.idle_grace.count(), 0);
  EXPECT_EQ(r.table->runtime.stall_threshold.count(), 250);
  EXPECT_EQ(r.table->runtime.quarantine_after, 0u);
}

TEST(TableLoader, ReportsEveryErrorAtOnceWithItsPointer) {
  const auto r = parse_table(
      table_with(R"({"id": 1, "name": "A", "kind": "town", "capacity": 10, "max_lines": 1, "map": 1},
                   {"id": 2, "name": "B", "kind": "field", "capacity": 10, "max_lines": 1, "map": 1, "frame_rate": 0},
                   {"id": 3, "name": "C", "kind": "field", "capcity": 10, "max_lines": 1, "map": 1},
                   {"id": 4, "name": "D", "kind": "field", "capacity": 0, "max_lines": 1, "map": 1})"),
      "t.json");
  EXPECT_EQ(r.status, load_status::invalid);
  EXPECT_EQ(r.table, nullptr);
  EXPECT_THAT(lines_of(r), ElementsAre("/scenes/1/frame_rate: must be >= 1, got 0",
                                       "/scenes/2: missing required key \"capacity\"",
                                       "/scenes/2/capcity: unknown key; did you mean \"capacity\"?",
                                       "/scenes/3/capacity: must be >= 1, got 0"));
}

TEST(TableLoader, GivesLineAndColumnForSyntaxErrors) {
  const auto r = parse_table("{\n  \"version\": 1,\n  \"maps\": [tru]\n}", "t.json");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].line, 3u);
  EXPECT_EQ(r.diagnostics[0].column, 15u);  // where the parser gave up: the "]" after "tru"
  EXPECT_THAT(r.diagnostics[0].reason, ::testing::StartsWith("syntax error"));
  EXPECT_EQ(format_diagnostic("t.json", r.diagnostics[0]).rfind("t.json:3:15: syntax error", 0), 0u);
}

TEST(TableLoader, FormatsDiagnosticsAsFilePointerReason) {
  EXPECT_EQ(format_diagnostic("a.json", {"/scenes/3/capacity", "must be >= 1, got 0"}),
            "a.json:/scenes/3/capacity: must be >= 1, got 0");
  EXPECT_EQ(format_diagnostic("a.json", {"", "must be an object, got 3"}),
            "a.json: must be an object, got 3");
  EXPECT_EQ(format_diagnostic("a.json", {"", "syntax error", 2, 7}), "a.json:2:7: syntax error");
}

TEST(TableLoader, ReportsAFileThatCannotBeReadAsUnreadable) {
  const auto missing = load_table_file(source_dir / "tests/data/no-such-table.json");
  EXPECT_EQ(missing.status, load_status::unreadable);
  ASSERT_EQ(missing.diagnostics.size(), 1u);
  EXPECT_THAT(missing.diagnostics[0].reason, ::testing::HasSubstr("cannot read"));
  EXPECT_EQ(load_table_file(source_dir / "tests/data").status, load_status::unreadable);
}

TEST(TableLoader, AcceptsIntegralNumbersWrittenWithAFraction) {
  // JSON Schema counts 100.0 as an integer; the loader agrees, and still rejects 100.5.
  auto r = parse_table(
      table_with(R"({"id": 1, "name": "T", "kind": "town", "capacity": 100.0, "max_lines": 2, "map": 1})"),
      "t");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.table->scenes[0].capacity, 100u);
  r = parse_table(
      table_with(R"({"id": 1, "name": "T", "kind": "town", "capacity": 100.5, "max_lines": 2, "map": 1})"),
      "t");
  EXPECT_THAT(lines_of(r), ElementsAre("/scenes/0/capacity: must be an integer, got 100.5"));
}

TEST(TableLoader, EscapesKeysInPointers) {
  const auto r = parse_table(table_with(town, R"("a/b~c": 1, )"), "t");
  EXPECT_THAT(lines_of(r), ElementsAre("/a~1b~0c: unknown key"));
}

TEST(TableLoader, NamesDuplicateKeysInsideArrays) {
  const auto r = parse_table(R"({"version": 1, "maps": [{"id": 1, "width": 64, "height": 48, "area_width": 16,
      "area_height": 16, "blocks": [{"x": 0, "y": 0, "w": 1, "h": 1}, {"x": 0, "x": 1, "y": 0, "w": 1, "h": 1}]}],
      "scenes": [)" + std::string(town) +
                                 "]}",
                             "t");
  EXPECT_THAT(lines_of(r), ElementsAre("/maps/0/blocks/1/x: duplicate key; only one value may be given"));
}

TEST(TableLoader, RejectsNestingDeeperThanTheLimit) {
  const std::string deep = std::string(max_table_depth + 1, '[') + std::string(max_table_depth + 1, ']');
  const auto r = parse_table("\n" + deep, "t");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].line, 2u);
  EXPECT_EQ(r.diagnostics[0].column, max_table_depth + 1);
  // Brackets inside strings do not count.
  const auto quoted = parse_table(table_with(town, R"("x": ")" + std::string(200, '[') + R"(", )"), "t");
  EXPECT_THAT(lines_of(quoted), ElementsAre("/x: unknown key"));
}

TEST(TableLoader, RejectsTextLargerThanTheLimit) {
  const auto r = parse_table(std::string(max_table_bytes + 1, ' '), "t");
  EXPECT_EQ(r.status, load_status::invalid);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_THAT(r.diagnostics[0].reason, ::testing::HasSubstr("larger than"));
}

TEST(TableLoader, StopsListingAfterTheDiagnosticLimit) {
  std::string scenes;
  for (int i = 0; i < 1500; ++i) scenes += std::string(i ? "," : "") + "{}";
  const auto r = parse_table(table_with(scenes), "t");
  ASSERT_EQ(r.diagnostics.size(), max_diagnostics + 1);
  EXPECT_THAT(r.diagnostics.back().reason, ::testing::HasSubstr("too many errors"));
}

TEST(TableLoader, KeepsInvalidUtf8OutOfMessages) {
  const auto r = parse_table("{\"version\": 1, \"na\xff\xfeme\": 1}", "t");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  for (unsigned char c : r.diagnostics[0].reason) EXPECT_NE(c, 0xFF);
}

TEST(TableLoader, NamesKindsStructuresAndPolicies) {
  EXPECT_EQ(to_string(scene_kind::dungeon), "dungeon");
  EXPECT_EQ(to_string(scene_kind::space), "space");
  EXPECT_EQ(to_string(scene_structure::group), "group");
  EXPECT_EQ(to_string(allocation_policy::least_loaded), "least_loaded");
}

TEST(TableLoader, ComputesGroupSlotsFromTheBudget) {
  EXPECT_EQ(group_slots(100, 1), 100u);
  EXPECT_EQ(group_slots(100, 5), 20u);
  EXPECT_EQ(group_slots(100, 10), 10u);
  EXPECT_EQ(group_slots(100, 30), 3u);
  EXPECT_EQ(group_slots(100, 300), 1u);
}

}  // namespace
}  // namespace scenert

namespace scenert {
namespace {

TEST(TableLoader, KeepsAModulesNameAndParametersForTheModuleToCheck) {
  const auto r = parse_table(
      table_with(std::string(town) + R"(, {"id": 2, "name": "Crypt", "kind": "dungeon", "capacity": 5,
          "max_lines": 10, "map": 1, "module": {"name": "crypt_boss", "boss_health": 5000,
          "loot": [{"item": "sword", "weight": 2.5}], "taunt": "Come!"}})",
                 R"("runtime": {"seed": 42}, )"),
      "t.json");
  ASSERT_TRUE(r.ok()) << testing::PrintToString(lines_of(r));
  EXPECT_EQ(r.table->runtime.seed, 42u);
  const auto& m = r.table->find_scene(2)->module;
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->name, "crypt_boss");
  EXPECT_EQ(m->pointer, "/scenes/1/module");
  ASSERT_EQ(m->params.fields.size(), 3u);
  EXPECT_EQ(m->params.fields[0].key, "boss_health");
  EXPECT_TRUE(m->params.fields[0].value.integer);
  EXPECT_EQ(m->params.fields[0].value.number, 5000);
  const module_value& loot = m->params.fields[1].value;
  ASSERT_EQ(loot.kind, module_value::type::array);
  EXPECT_EQ(loot.items.at(0).fields.at(1).value.number, 2.5);
  EXPECT_EQ(m->params.fields[2].value.text, "Come!");
  EXPECT_FALSE(r.table->find_scene(1)->module.has_value());
}

TEST(TableLoader, ReportsAModuleWithoutANameOrOfTheWrongShape) {
  // Appended, not std::string's operator+: g++ 12 sees a false out-of-bounds copy in that one here.
  std::string scenes(town);
  scenes += R"(,
      {"id": 2, "name": "A", "kind": "dungeon", "capacity": 5, "max_lines": 1, "map": 1, "module": "boss"},
      {"id": 3, "name": "B", "kind": "dungeon", "capacity": 5, "max_lines": 1, "map": 1, "module": {"hp": 1}},
      {"id": 4, "name": "C", "kind": "dungeon", "capacity": 5, "max_lines": 1, "map": 1, "module": {"name": ""}})";
  const auto r = parse_table(table_with(scenes), "t.json");
  EXPECT_THAT(lines_of(r),
              ElementsAre(R"(/scenes/1/module: must be an object {"name": "...", parameters...}, got "boss")",
                          R"(/scenes/2/module: missing required key "name")",
                          R"(/scenes/3/module/name: must be a non-empty string, got "")"));
}

}  // namespace
}  // namespace scenert
