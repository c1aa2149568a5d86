// The module's parameters through scenert's own check: the example's table passes, each wrong
// parameter is named by its JSON pointer; and the wire format's payloads.
#include <dungeon/crypt_boss.hpp>

#include <scenert/config/table_loader.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace dungeon {
namespace {

scenert::module_registry registry() {
  scenert::module_registry r;
  register_modules(r);
  return r;
}

std::vector<std::string> pointers(const std::vector<scenert::diagnostic>& found) {
  std::vector<std::string> out;
  for (const auto& d : found) out.push_back(d.pointer);
  return out;
}

TEST(CryptParams, TheExampleTablePassesAndGivesItsLootTable) {
  const auto loaded = scenert::load_table_file(DUNGEON_SOURCE_DIR "/table.json");
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(scenert::check_modules(*loaded.table, registry()).empty());
  const auto& module = *loaded.table->find_scene(2)->module;
  scenert::module_params p(module.params, module.pointer);
  const crypt_params params = read_crypt_params(p);
  EXPECT_TRUE(p.finish().empty());
  EXPECT_EQ(params.boss_at, (scenert::grid::cell_point{24, 6}));
  ASSERT_EQ(params.loot.entries().size(), 4u);
  EXPECT_EQ(params.loot.total_weight(), 1000u);
  EXPECT_EQ(params.loot.entries()[0], (loot_entry{1, 100, 600}));
}

TEST(CryptParams, EachWrongParameterIsNamedByItsPointer) {
  const auto loaded = scenert::load_table_file(DUNGEON_SOURCE_DIR "/tests/bad_table.json");
  ASSERT_TRUE(loaded.ok()) << "the module's parameters are the module's to check, not the loader's";
  const auto found = pointers(scenert::check_modules(*loaded.table, registry()));
  for (const char* want :
       {"/scenes/1/module/bos_name", "/scenes/1/module/damage_max", "/scenes/1/module/loot/2/weight"})
    EXPECT_NE(std::find(found.begin(), found.end(), want), found.end()) << want;
  EXPECT_EQ(found.size(), 3u);
}

TEST(CryptParams, ALootTableMustBeANonEmptyListOfWholeEntries) {
  scenert::module_value params;
  params.kind = scenert::module_value::type::object;
  scenert::module_value loot;
  loot.kind = scenert::module_value::type::array;
  scenert::module_value entry;
  entry.kind = scenert::module_value::type::object;
  scenert::module_value weight;
  weight.kind = scenert::module_value::type::number, weight.number = 5, weight.integer = true;
  entry.fields.push_back({"weight", weight});
  entry.fields.push_back({"colour", weight});
  loot.items.push_back(entry);
  params.fields.push_back({"loot", loot});
  scenert::module_params p(params, "/scenes/0/module");
  (void)read_crypt_params(p);
  EXPECT_EQ(pointers(p.finish()),
            (std::vector<std::string>{"/scenes/0/module/loot/0/colour", "/scenes/0/module/loot/0/item"}));
  scenert::module_value none;
  none.kind = scenert::module_value::type::object;
  scenert::module_params q(none, "/scenes/0/module");
  (void)read_crypt_params(q);
  EXPECT_EQ(pointers(q.finish()), (std::vector<std::string>{"/scenes/0/module/loot"}));
}

TEST(Wire, PayloadsReadBackAndAnyOtherLengthIsMalformed) {
  EXPECT_EQ(decode_target(encode_target(0x0102030405060708ull)), 0x0102030405060708ull);
  EXPECT_FALSE(decode_target("short"));
  EXPECT_FALSE(decode_target(encode_target(1) + "x"));
  const hit h{7, 9, 120, -1};
  EXPECT_EQ(decode_hit(encode(h)), h);
  EXPECT_FALSE(decode_hit(encode(h).substr(1)));
}

}  // namespace
}  // namespace dungeon
