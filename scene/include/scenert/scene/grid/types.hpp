#pragma once
/// Vocabulary of the grid AOI: cells, areas, entity ids and types, error codes.

#include <cstdint>

#include <scenert/runtime/result.hpp>

namespace scenert::grid {

/// A caller-given entity id; the grid indexes a flat table with it, so keep ids dense (a scene
/// hands them out from a free list and maps its player / npc ids to them).
using entity_id = std::uint32_t;

/// The three kinds of entity a scene puts on its grid.
enum class entity_type : std::uint8_t { player = 0, npc = 1, item = 2 };

/// How many entity types there are.
inline constexpr std::uint32_t entity_type_count = 3;

/// A set of entity types for queries.
enum class type_mask : std::uint8_t { none = 0, player = 1, npc = 2, item = 4, all = 7 };

/// Union of two masks.
constexpr type_mask operator|(type_mask a, type_mask b) {
  return static_cast<type_mask>(static_cast<std::uint8_t>(a) | static_cast<std::uint8_t>(b));
}
/// The mask holding exactly one type.
constexpr type_mask mask_of(entity_type t) { return static_cast<type_mask>(1u << static_cast<unsigned>(t)); }
/// Whether a mask holds a type.
constexpr bool has_type(type_mask m, entity_type t) {
  return (static_cast<unsigned>(m) & (1u << static_cast<unsigned>(t))) != 0;
}

/// A cell: the smallest standing unit, (x, y) with 0 <= x < width, 0 <= y < height.
struct cell_point {
  std::uint32_t x = 0;  ///< column
  std::uint32_t y = 0;  ///< row
  friend constexpr bool operator==(cell_point, cell_point) = default;
};

/// An area (a screen of the 9-grid), in area coordinates.
struct area_point {
  std::uint32_t x = 0;  ///< area column
  std::uint32_t y = 0;  ///< area row
  friend constexpr bool operator==(area_point, area_point) = default;
};

/// A rectangle of cells, bounds included on both ends.
struct cell_rect {
  cell_point min;  ///< top-left cell, included
  cell_point max;  ///< bottom-right cell, included
};

/// Expected failures of the grid.
enum class grid_errc {
  ok = 0,
  out_of_map,        ///< a position or rectangle outside the map
  unknown_entity,    ///< an id that is not on the grid (never added, or removed)
  duplicate_entity,  ///< an id that is already on the grid
  id_too_large,      ///< an id at or above the grid's max_entities
  invalid_geometry,  ///< a size, area size or eyesight radius of 0, or bad cell flags
  map_too_large,     ///< more cells than a 32-bit cell index can address
  bad_batch,         ///< an AI batch outside [0, ai_batch_count)
  cell_blocked,      ///< occupy: the barrier mask forbids standing there
  cell_full,         ///< occupy: the cell's counter for that occupant is saturated
  not_occupied,      ///< release: nothing of that occupant on the cell
};

/// Result type of grid operations.
template <class T>
using grid_result = scenert::result<T, grid_errc>;

/// Name of an error code, for logs and messages.
const char* to_string(grid_errc code) noexcept;

}  // namespace scenert::grid
