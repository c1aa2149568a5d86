// The module's parameters from the scene table: each one checked, each problem noted with its JSON
// pointer (so `dungeon_server check` names it), and the module's registration.
#include <dungeon/crypt_boss.hpp>

#include <limits>
#include <memory>

namespace dungeon {

namespace {

using scenert::module_value;

std::chrono::milliseconds millis(scenert::module_params& p, std::string_view key, std::int64_t fallback) {
  return std::chrono::milliseconds(p.integer(key, fallback, 10, 600'000));
}

const module_value* field(const module_value& object, std::string_view key) {
  for (const auto& f : object.fields)
    if (f.key == key) return &f.value;
  return nullptr;
}

// One integer of a loot entry, in [min, max]; a problem at loot/INDEX/KEY otherwise.
std::optional<std::int64_t> entry_integer(scenert::module_params& p, const module_value& entry,
                                          const std::string& at, std::string_view key,
                                          std::optional<std::int64_t> fallback, std::int64_t min,
                                          std::int64_t max) {
  const module_value* v = field(entry, key);
  const std::string path = at + "/" + std::string(key);
  if (v == nullptr) {
    if (!fallback) p.problem(path, "missing required key of a loot entry");
    return fallback;
  }
  if (v->kind != module_value::type::number || !v->integer || v->number < static_cast<double>(min) ||
      v->number > static_cast<double>(max)) {
    p.problem(path, "must be an integer in " + std::to_string(min) + ".." + std::to_string(max));
    return std::nullopt;
  }
  return static_cast<std::int64_t>(v->number);
}

std::optional<loot_entry> read_entry(scenert::module_params& p, const module_value& entry,
                                     std::size_t index) {
  const std::string at = "loot/" + std::to_string(index);
  if (entry.kind != module_value::type::object) {
    p.problem(at, "must be an object {\"item\", \"count\", \"weight\"}");
    return std::nullopt;
  }
  for (const auto& f : entry.fields)
    if (f.key != "item" && f.key != "count" && f.key != "weight")
      p.problem(at + "/" + f.key, "unknown key of a loot entry");
  const auto item =
      entry_integer(p, entry, at, "item", std::nullopt, 1, std::numeric_limits<std::uint32_t>::max());
  const auto count = entry_integer(p, entry, at, "count", 1, 1, 1'000'000'000);
  const auto weight = entry_integer(p, entry, at, "weight", std::nullopt, 1, 1'000'000);
  if (!item || !count || !weight) return std::nullopt;
  return loot_entry{static_cast<scenert::item_id>(*item), *count, static_cast<std::uint32_t>(*weight)};
}

loot_table read_loot(scenert::module_params& p) {
  const module_value* loot = p.value("loot", true);
  if (loot == nullptr) return {};
  if (loot->kind != module_value::type::array || loot->items.empty()) {
    p.problem("loot", "must be a non-empty array of {\"item\", \"count\", \"weight\"}");
    return {};
  }
  std::vector<loot_entry> entries;
  for (std::size_t i = 0; i < loot->items.size(); ++i)
    if (auto e = read_entry(p, loot->items[i], i)) entries.push_back(*e);
  return loot_table(std::move(entries));
}

scenert::grid::cell_point read_cell(scenert::module_params& p, std::string_view key,
                                    scenert::grid::cell_point fallback) {
  const module_value* v = p.value(key);
  if (v == nullptr) return fallback;
  const bool pair = v->kind == module_value::type::array && v->items.size() == 2;
  for (std::size_t i = 0; pair && i < 2; ++i) {
    const auto& n = v->items[i];
    if (n.kind != module_value::type::number || !n.integer || n.number < 0 || n.number > 65535) {
      p.problem(std::string(key) + "/" + std::to_string(i), "must be a cell coordinate in 0..65535");
      return fallback;
    }
  }
  if (!pair) {
    p.problem(key, "must be a cell [x, y]");
    return fallback;
  }
  return {static_cast<std::uint32_t>(v->items[0].number), static_cast<std::uint32_t>(v->items[1].number)};
}

}  // namespace

crypt_params read_crypt_params(scenert::module_params& p) {
  crypt_params c;
  c.boss_at = read_cell(p, "boss_cell", c.boss_at);
  c.boss_health = static_cast<std::int32_t>(p.integer("boss_health", c.boss_health, 1, 10'000'000));
  c.adds_at = p.number("adds_at", c.adds_at, 0.01, 0.99);
  c.enrage_at = p.number("enrage_at", c.enrage_at, 0.01, 0.99);
  if (c.enrage_at >= c.adds_at)
    p.problem("enrage_at", "must be below adds_at (" + std::to_string(c.adds_at) + ")");
  c.adds = static_cast<std::uint32_t>(p.integer("adds", c.adds, 0, 16));
  c.add_health = static_cast<std::int32_t>(p.integer("add_health", c.add_health, 1, 10'000'000));
  c.attack_range = static_cast<std::uint32_t>(p.integer("attack_range", c.attack_range, 1, 32));
  c.damage_min = static_cast<std::int32_t>(p.integer("damage_min", c.damage_min, 1, 1'000'000));
  c.damage_max = static_cast<std::int32_t>(p.integer("damage_max", c.damage_max, 1, 1'000'000));
  if (c.damage_max < c.damage_min)
    p.problem("damage_max", "must be at least damage_min (" + std::to_string(c.damage_min) + ")");
  c.attack_cooldown = millis(p, "attack_cooldown_ms", 1000);
  c.boss_step = millis(p, "boss_step_ms", 500);
  c.add_step = millis(p, "add_step_ms", 400);
  c.strike_every = millis(p, "strike_ms", 2000);
  c.strike_damage = static_cast<std::int32_t>(p.integer("strike_damage", c.strike_damage, 0, 1'000'000));
  c.loot_rolls = static_cast<std::uint32_t>(p.integer("loot_rolls", c.loot_rolls, 1, 16));
  c.loot = read_loot(p);
  return c;
}

void register_modules(scenert::module_registry& registry) {
  (void)registry.add("crypt_boss", [](scenert::module_params& p) -> std::unique_ptr<scenert::game_module> {
    return std::make_unique<crypt_boss>(read_crypt_params(p));
  });
}

}  // namespace dungeon
