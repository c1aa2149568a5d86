#include <scenert/scene/grid/occupancy.hpp>

#include <string>
#include <utility>

#include <scenert/runtime/assert.hpp>

namespace scenert::grid {
namespace {

constexpr std::uint32_t shift_of(occupant who) { return 8u * static_cast<std::uint32_t>(who); }

// The lanes of the cell word that stop an entity with this mask.
constexpr std::uint32_t lanes_of(barrier_mask m) {
  return (m.test_barrier ? 0xFFu : 0u) | (m.test_player ? 0xFF00u : 0u) | (m.test_monster ? 0xFF0000u : 0u) |
         (m.test_item ? 0xFF000000u : 0u);
}

const char* name_of(occupant who) {
  switch (who) {
    case occupant::barrier:
      return "barrier";
    case occupant::player:
      return "player";
    case occupant::monster:
      return "monster";
    case occupant::item:
      return "item";
  }
  return "?";
}

std::string where(cell_point c) { return "cell (" + std::to_string(c.x) + ", " + std::to_string(c.y) + ")"; }

}  // namespace

occupancy::occupancy(std::shared_ptr<const map_data> map) : map_(std::move(map)) {
  SCENERT_ASSERT(map_ != nullptr, "occupancy: null map");
  cells_.assign(map_->cell_count(), 0);
}

bool occupancy::can_stand(cell_point c, barrier_mask mask) const noexcept {
  if (!map_->contains(c)) return false;
  if (mask.test_block && map_->is_block(c)) return false;
  return (cells_[map_->cell_index(c)] & lanes_of(mask)) == 0;
}

grid_result<void> occupancy::occupy(cell_point c, occupant who, barrier_mask mask) {
  if (!map_->contains(c)) return fail(grid_errc::out_of_map, "occupy: " + where(c) + " is outside the map");
  if (!can_stand(c, mask))
    return fail(grid_errc::cell_blocked, std::string("occupy: ") + name_of(who) + " cannot stand on " +
                                             where(c) + (map_->is_block(c) ? " (block)" : " (occupied)"));
  if (!mask.marks) return {};
  std::uint32_t& word = cells_[map_->cell_index(c)];
  if (((word >> shift_of(who)) & 0xFFu) == 0xFFu)
    return fail(grid_errc::cell_full,
                std::string("occupy: ") + where(c) + " already holds 255 of " + name_of(who));
  word += 1u << shift_of(who);
  return {};
}

grid_result<void> occupancy::release(cell_point c, occupant who) {
  if (!map_->contains(c)) return fail(grid_errc::out_of_map, "release: " + where(c) + " is outside the map");
  std::uint32_t& word = cells_[map_->cell_index(c)];
  if (((word >> shift_of(who)) & 0xFFu) == 0)
    return fail(grid_errc::not_occupied, std::string("release: no ") + name_of(who) + " on " + where(c));
  word -= 1u << shift_of(who);
  return {};
}

std::uint32_t occupancy::count(cell_point c, occupant who) const noexcept {
  if (!map_->contains(c)) return 0;
  return (cells_[map_->cell_index(c)] >> shift_of(who)) & 0xFFu;
}

void occupancy::clear() noexcept { std::fill(cells_.begin(), cells_.end(), 0u); }

}  // namespace scenert::grid
