// Properties on random edits of the examples: the loader never throws or crashes, a rejected table
// always says why, and an accepted table always satisfies what the scene library relies on.
#include <scenert/config/table_loader.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace scenert {
namespace {

using json = nlohmann::ordered_json;

json read_example(const char* name) {
  std::ifstream in(std::filesystem::path{SCENERT_SOURCE_DIR} / "examples" / name);
  return json::parse(in);
}

// Replaces one random leaf with a value drawn from a small set of troublesome ones.
void mutate(json& j, std::mt19937& rng) {
  static const json replacements[] = {
      0,   -1,      1,      2,       7,       1001, 100001,        4294967296.0,  1.5,
      "x", "space", "town", "group", nullptr, true, json::array(), json::object()};
  json* at = &j;
  while (at->is_structured() && !at->empty()) {
    std::uniform_int_distribution<std::size_t> pick(0, at->size() - 1);
    auto it = at->begin();
    std::advance(it, static_cast<std::ptrdiff_t>(pick(rng)));
    if (!it->is_structured() || rng() % 4 == 0) {
      if (at->is_object() && rng() % 8 == 0) {
        at->erase(it.key());
        return;
      }
      *it = replacements[rng() % std::size(replacements)];
      return;
    }
    at = &*it;
  }
}

void expect_sound(const scene_table& t) {
  for (const auto& m : t.maps) {
    EXPECT_GE(m.width, m.area_width);
    EXPECT_GE(m.height, m.area_height);
    for (const auto& b : m.blocks) {
      EXPECT_LE(b.x + b.width, m.width);
      EXPECT_LE(b.y + b.height, m.height);
    }
  }
  for (const auto& s : t.scenes) {
    ASSERT_NE(t.find_map(s.map), nullptr);
    EXPECT_GE(s.capacity, 1u);
    EXPECT_GE(s.hard_capacity, s.capacity);
    EXPECT_EQ(s.space.has_value(), s.kind == scene_kind::space);
    if (s.space) {
      const scene_def* town = t.find_scene(s.space->bind_town);
      ASSERT_NE(town, nullptr);
      EXPECT_EQ(town->kind, scene_kind::town);
      EXPECT_EQ(town->map, s.map);
    } else {
      EXPECT_LE(s.min_lines, s.max_lines);
      EXPECT_GE(s.max_lines, 1u);
    }
  }
}

TEST(TableProperties, RandomEditsAreEitherRejectedWithReasonsOrSound) {
  std::mt19937 rng(7);
  int accepted = 0, rejected = 0;
  for (const char* name : {"small.json", "mmo.json"}) {
    const json base = read_example(name);
    for (int i = 0; i < 400; ++i) {
      json edited = base;
      for (int k = 0; k <= static_cast<int>(rng() % 3); ++k) mutate(edited, rng);
      const auto r = parse_table(edited.dump(), name);
      if (r.ok()) {
        ++accepted;
        expect_sound(*r.table);
      } else {
        ++rejected;
        ASSERT_FALSE(r.diagnostics.empty());
        for (const auto& d : r.diagnostics) EXPECT_FALSE(d.reason.empty());
      }
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

TEST(TableProperties, DefaultsMakeNoDifferenceWhenWrittenOut) {
  // Writing every default explicitly gives the same table as leaving them out.
  const auto bare = parse_table(R"({"version": 1,
      "maps": [{"id": 1, "width": 64, "height": 48, "area_width": 16, "area_height": 16}],
      "scenes": [{"id": 1, "name": "T", "kind": "town", "capacity": 9, "max_lines": 2, "map": 1}]})",
                                "a");
  const auto full = parse_table(R"({"version": 1,
      "runtime": {"workers": 2, "group_budget": 100, "idle_grace_ms": 30000, "stall_threshold_ms": 1000,
                  "quarantine_after": 10},
      "maps": [{"id": 1, "name": "", "width": 64, "height": 48, "area_width": 16, "area_height": 16,
                "eyesight_x": 1, "eyesight_y": 1, "blocks": []}],
      "scenes": [{"id": 1, "name": "T", "kind": "town", "structure": "single", "capacity": 9, "hard_capacity": 9,
                  "min_lines": 1, "max_lines": 2, "frame_rate": 10, "map": 1, "policy": "fill_first",
                  "monsters": 0}]})",
                                "b");
  ASSERT_TRUE(bare.ok() && full.ok());
  const scene_def &a = bare.table->scenes[0], &b = full.table->scenes[0];
  EXPECT_EQ(a.structure, b.structure);
  EXPECT_EQ(a.hard_capacity, b.hard_capacity);
  EXPECT_EQ(a.min_lines, b.min_lines);
  EXPECT_EQ(a.frame_rate, b.frame_rate);
  EXPECT_EQ(a.policy, b.policy);
  EXPECT_EQ(bare.table->runtime.idle_grace, full.table->runtime.idle_grace);
  EXPECT_EQ(bare.table->maps[0].eyesight_x, full.table->maps[0].eyesight_x);
}

}  // namespace
}  // namespace scenert
