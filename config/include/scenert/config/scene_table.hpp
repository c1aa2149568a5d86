#pragma once
/// The scene table: plain, immutable data made from one JSON file by the loader (table_loader.hpp),
/// validated once. Nothing in the runtime sees JSON; defaults live in the loader only.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scenert {

using scene_id = std::uint32_t;
using map_id = std::uint32_t;

// Each enum ends in `count_`, and its names (as the table spells them) stand beside it, checked
// complete at compile time: the loader, to_string() and every report read these arrays.

enum class scene_kind : std::uint8_t { town, field, dungeon, guild, space, count_ };
enum class scene_structure : std::uint8_t { single, group, count_ };
enum class allocation_policy : std::uint8_t { fill_first, least_loaded, count_ };
/// Who shares a dungeon's lines: anyone, one party per line (a solo player is a party of one), or
/// parties alone on theirs while solo players share.
enum class instance_mode : std::uint8_t { shared, party, both, count_ };
/// How a monster moves: a `mob` steers (cheap, every mob every think), a `boss` searches (exact
/// paths through its line's sliced path queue).
enum class monster_kind : std::uint8_t { mob, boss, count_ };
/// Which cells of its line's occupancy stop a monster besides the map's blocks (the barrier masks
/// of scene/grid/occupancy.hpp): `none` marks nothing and is stopped by nothing else (the monster
/// cell cap aside); `slack` marks its cell and is stopped by barriers; `standard` (the table's
/// "default") by barriers, players and monsters; `item` by barriers and items.
enum class monster_barrier : std::uint8_t { none, slack, standard, item, count_ };

template <class E>
using enum_names = std::array<std::string_view, static_cast<std::size_t>(E::count_)>;

inline constexpr enum_names<scene_kind> scene_kind_names{"town", "field", "dungeon", "guild", "space"};
inline constexpr enum_names<scene_structure> scene_structure_names{"single", "group"};
inline constexpr enum_names<allocation_policy> allocation_policy_names{"fill_first", "least_loaded"};
inline constexpr enum_names<instance_mode> instance_mode_names{"shared", "party", "both"};
inline constexpr enum_names<monster_kind> monster_kind_names{"mob", "boss"};
inline constexpr enum_names<monster_barrier> monster_barrier_names{"none", "slack", "default", "item"};

namespace detail {
template <std::size_t N>
constexpr bool all_named(const std::array<std::string_view, N>& names) {
  for (auto n : names)
    if (n.empty()) return false;
  return true;
}
}  // namespace detail
static_assert(detail::all_named(scene_kind_names), "scene_kind: name every value");
static_assert(detail::all_named(scene_structure_names), "scene_structure: name every value");
static_assert(detail::all_named(allocation_policy_names), "allocation_policy: name every value");
static_assert(detail::all_named(instance_mode_names), "instance_mode: name every value");
static_assert(detail::all_named(monster_kind_names), "monster_kind: name every value");
static_assert(detail::all_named(monster_barrier_names), "monster_barrier: name every value");

/// A blocked rectangle of cells: [x, x + width) x [y, y + height).
struct cell_rect {
  std::uint32_t x = 0, y = 0, width = 0, height = 0;
};

/// A map's static geometry, shared by every line and phase on it.
struct map_def {
  map_id id = 0;
  std::string name;
  std::uint32_t width = 0, height = 0;            ///< in cells
  std::uint32_t area_width = 0, area_height = 0;  ///< in cells
  std::uint32_t eyesight_x = 1, eyesight_y = 1;   ///< in areas: (1,1) is the 9-grid, (2,2) the 25-grid
  std::vector<cell_rect> blocks;
  /// Clients speak world units: cell (x, y) covers origin + [x, x+1) * cell_size along X and
  /// origin + [y, y+1) * cell_size along Z.
  double cell_size = 1;
  double origin_x = 0, origin_z = 0;
};

/// The fields of a scene of kind space (a phase of a town).
struct space_def {
  scene_id bind_town = 0;
  std::uint32_t min_spaces = 0;  ///< pre-created per town line, parked in its cache
  std::uint32_t max_spaces = 0;  ///< running at once per town line; 0 = unlimited
};

struct module_field;

/// One value of a module's parameters as the table wrote it: a small tree of plain values, so that
/// nothing outside config/ sees JSON. A module reads it through scenert::module_params.
struct module_value {
  enum class type : std::uint8_t { null, boolean, number, string, array, object };
  type kind = type::null;
  bool boolean = false;              ///< boolean
  double number = 0;                 ///< number
  bool integer = false;              ///< number: written without a fraction or exponent
  std::string text;                  ///< string
  std::vector<module_value> items;   ///< array, in order
  std::vector<module_field> fields;  ///< object, in document order
};

/// One key of an object value.
struct module_field {
  std::string key;
  module_value value;
};

/// The game module a scene runs: its registered name and its own parameters (every key of the
/// table's `module` object beside `name`), with the JSON pointer of that object for diagnostics.
struct module_ref {
  std::string name;
  module_value params;  ///< an object
  std::string pointer;  ///< e.g. "/scenes/3/module"
};

/// The monsters a scene spawns on each line: how they move, how fast, how far they notice a player
/// and how far they follow one from home. Defaults live in the loader.
struct monster_def {
  monster_kind kind = monster_kind::mob;
  double speed = 1;                 ///< cells per second
  std::uint32_t aggro_radius = 32;  ///< cells (octile distance) within which a player is noticed
  std::uint32_t leash = 48;         ///< cells from home past which the monster returns and forgets
  monster_barrier barrier = monster_barrier::none;  ///< occupancy that stops it (searches and steps)
};

/// A group of monsters of one kind: a scene may spawn several (a dungeon's boss and its mobs).
struct monster_group {
  std::uint32_t count = 0;  ///< spawned at each activation
  monster_def monster;      ///< what they are
};

struct scene_def {
  scene_id id = 0;
  std::string name;
  scene_kind kind = scene_kind::field;
  scene_structure structure = scene_structure::single;
  std::uint32_t capacity = 0;       ///< soft: normal entry stops here
  std::uint32_t hard_capacity = 0;  ///< joining a team-mate may go up to here (>= capacity)
  std::uint32_t min_lines = 0;
  std::uint32_t max_lines = 0;
  std::uint32_t frame_rate = 10;  ///< Hz
  map_id map = 0;
  allocation_policy policy = allocation_policy::fill_first;
  std::uint32_t monsters = 0;  ///< the first monster group's count: spawned at each activation
  monster_def monster;         ///< what the first group's monsters are (a module's too)
  /// The groups after the first, when the table gives `monsters` as an array (in its order).
  std::vector<monster_group> more_monsters;
  std::uint32_t path_budget = 0;  ///< search expansions (and flow-field cells) per tick; set by the loader
  instance_mode instances = instance_mode::shared;  ///< dungeons only
  std::optional<space_def> space;                   ///< set exactly when kind == space
  /// Fastest a client may walk, in world units per second; 0: no limit. A move farther than this
  /// allows since the last accepted one is refused.
  double max_speed = 0;
  /// The game module its lines run (by registered name), when the table names one.
  std::optional<module_ref> module;

  /// Monster groups: the first ({monsters, monster}) and the more_monsters.
  [[nodiscard]] std::size_t monster_group_count() const noexcept { return 1 + more_monsters.size(); }
  /// Monster group `i` (0: the first), i < monster_group_count().
  [[nodiscard]] monster_group monster_group_at(std::size_t i) const {
    return i == 0 ? monster_group{monsters, monster} : more_monsters[i - 1];
  }
  /// The definition of monster group `i`, i < monster_group_count().
  [[nodiscard]] const monster_def& monster_of(std::size_t i) const noexcept {
    return i == 0 ? monster : more_monsters[i - 1].monster;
  }
  /// Monsters spawned at each activation, every group counted.
  [[nodiscard]] std::uint32_t monster_total() const noexcept {
    std::uint32_t total = monsters;
    for (const auto& g : more_monsters) total += g.count;
    return total;
  }
};

/// Process-wide settings.
struct runtime_def {
  unsigned workers = 2;
  std::uint32_t group_budget = 100;  ///< players per group service: slots = max(1, budget / capacity)
  std::chrono::milliseconds idle_grace{30'000};  ///< an empty line above min_lines closes after this
  std::chrono::milliseconds stall_threshold{1'000};
  unsigned quarantine_after = 10;
  /// Seeds each line's random source for modules (with the scene and line number): a replayable fight.
  std::uint32_t seed = 1;
};

/// What the network front takes from the table (its flags may override).
struct network_def {
  std::chrono::milliseconds resume_ms{0};  ///< a dropped player keeps its place this long; 0: leaves at once
  std::uint32_t max_frame_bytes = 64 * 1024;  ///< a frame's payload over this closes the connection
};

struct scene_table {
  int version = 1;
  runtime_def runtime;
  network_def network;
  std::vector<map_def> maps;
  std::vector<scene_def> scenes;

  /// Null when absent.
  [[nodiscard]] const map_def* find_map(map_id id) const noexcept {
    for (const auto& m : maps)
      if (m.id == id) return &m;
    return nullptr;
  }
  [[nodiscard]] const scene_def* find_scene(scene_id id) const noexcept {
    for (const auto& s : scenes)
      if (s.id == id) return &s;
    return nullptr;
  }
};

}  // namespace scenert
