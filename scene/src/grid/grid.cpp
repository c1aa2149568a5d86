#include <scenert/scene/grid/grid.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace scenert::grid {
namespace {

std::string where(cell_point c) { return "(" + std::to_string(c.x) + ", " + std::to_string(c.y) + ")"; }

}  // namespace

namespace detail {
namespace {
constexpr std::size_t huge_page = std::size_t{2} << 20;
constexpr std::size_t big_table = std::size_t{1} << 20;
}  // namespace

void* allocate_table(std::size_t bytes, std::size_t align) {
  if (bytes < big_table) return ::operator new (bytes, std::align_val_t{align});
  const std::size_t rounded = (bytes + huge_page - 1) / huge_page * huge_page;
  void* p = std::aligned_alloc(huge_page, rounded);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__)
  (void)::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without it, plain pages
#endif
  return p;
}

void deallocate_table(void* p, std::size_t bytes, std::size_t align) noexcept {
  if (bytes < big_table) {
    ::operator delete (p, std::align_val_t{align});
    return;
  }
  std::free(p);
}
}  // namespace detail

const char* to_string(grid_errc code) noexcept {
  switch (code) {
    case grid_errc::ok:
      return "ok";
    case grid_errc::out_of_map:
      return "out_of_map";
    case grid_errc::unknown_entity:
      return "unknown_entity";
    case grid_errc::duplicate_entity:
      return "duplicate_entity";
    case grid_errc::id_too_large:
      return "id_too_large";
    case grid_errc::invalid_geometry:
      return "invalid_geometry";
    case grid_errc::map_too_large:
      return "map_too_large";
    case grid_errc::bad_batch:
      return "bad_batch";
    case grid_errc::cell_blocked:
      return "cell_blocked";
    case grid_errc::cell_full:
      return "cell_full";
    case grid_errc::not_occupied:
      return "not_occupied";
  }
  return "unknown";
}

grid::grid(std::shared_ptr<const map_data> map, grid_options options)
    : map_(std::move(map)), options_(options) {
  SCENERT_ASSERT(map_ != nullptr, "grid: null map");
  // A slot keeps an entity's index in its area in 30 bits.
  SCENERT_ASSERT(options_.max_entities <= 1u << 30, "grid: max_entities above 2^30");
  areas_x_ = map_->areas_x();
  areas_y_ = map_->areas_y();
  eye_x_ = map_->eyesight_x() < areas_x_ ? map_->eyesight_x() : areas_x_;
  eye_y_ = map_->eyesight_y() < areas_y_ ? map_->eyesight_y() : areas_y_;
  width_ = map_->width();
  height_ = map_->height();
  col_area_ = map_->area_x_table();
  row_area_ = map_->area_y_table();
  row_start_ = map_->area_row_start_table();
  areas_.resize(map_->area_count());
  const std::size_t view_x = std::min<std::size_t>(2 * std::size_t{eye_x_} + 1, areas_x_);
  const std::size_t view_y = std::min<std::size_t>(2 * std::size_t{eye_y_} + 1, areas_y_);
  listed_.resize(2 * view_x * view_y);
  slots_.reserve(options_.reserve);
  generations_.reserve(options_.reserve);
}

// Grows the id table geometrically (adds in id order stay amortised O(1)), never past max_entities.
void grid::grow_slots(entity_id id) {
  const std::size_t want = std::max<std::size_t>(std::size_t{id} + 1, 2 * slots_.size());
  const std::size_t size = std::min<std::size_t>(want, options_.max_entities);
  slots_.resize(size);
  generations_.resize(size);
}

// Out of line on purpose: a call to the library copy, not an inlined `rep movs`, whose start-up
// costs more than these short copies.
void grid::copy_ids(entity_id* to, const entity_id* from, std::uint32_t n) noexcept {
  std::memcpy(to, from, n * sizeof(entity_id));
}

void grid::area_data::grow() {
  const std::uint32_t bigger = capacity * 2;
  auto fresh = std::make_unique<entity_id[]>(bigger);
  std::copy(data(), data() + size, fresh.get());
  heap = std::move(fresh);
  capacity = bigger;
}

// Appends to the item segment, then rotates the first entity of each later segment to that
// segment's end, so the new entity lands at the end of its own segment (at most 3 writes).
void grid::insert(std::uint32_t area_index, entity_id id, entity_type type) {
  area_data& a = areas_[area_index];
  std::uint32_t hole = a.size;
  a.push_back(id);
  entity_id* ids = a.data();
  const auto t = static_cast<std::uint32_t>(type);
  for (std::uint32_t q = entity_type_count - 1; q > t; --q) {
    const std::uint32_t first = a.end[q - 1];
    if (first != hole) {
      ids[hole] = ids[first];
      slots_[ids[hole]].place = hole << 2 | q;  // a store, not a read-modify-write: its type is q
    }
    hole = first;
    ++a.end[q - 1];
  }
  ids[hole] = id;
  slot& s = slots_[id];
  s.area = area_index;
  s.place = hole << 2 | t;
}

// Swap-removes within the entity's segment, then pulls the last entity of each later segment into
// the hole left at that segment's start, and drops the final slot.
void grid::erase(const slot& s, entity_type type) {
  area_data& a = areas_[s.area];
  entity_id* ids = a.data();
  std::uint32_t hole = s.index();
  for (auto q = static_cast<std::uint32_t>(type); q < entity_type_count; ++q) {
    const std::uint32_t last = seg_end(a, q) - 1;
    if (last != hole) {
      ids[hole] = ids[last];
      slots_[ids[hole]].place = hole << 2 | q;  // a store, not a read-modify-write: its type is q
    }
    hole = last;
    if (q + 1 < entity_type_count) --a.end[q];
  }
  --a.size;
}

std::uint32_t grid::count_in_area(std::uint32_t area_index, entity_type type) const {
  const area_data& a = areas_.at(area_index);
  const auto t = static_cast<std::uint32_t>(type);
  return seg_end(a, t) - seg_begin(a, t);
}

void grid::clear() noexcept {
  SCENERT_ASSERT(!busy_ && !in_pass_, "grid: cleared from inside a visitor");
  for (area_data& a : areas_) {
    a.size = 0;
    a.end[0] = a.end[1] = 0;
    a.cover = 0;
  }
  for (slot& s : slots_) s.area = no_area;
  size_ = 0;
}

std::size_t grid::memory_bytes() const noexcept {
  std::size_t bytes = slots_.capacity() * sizeof(slot) + generations_.capacity() * sizeof(std::uint32_t) +
                      areas_.capacity() * sizeof(area_data);
  for (const area_data& a : areas_)
    if (a.capacity > area_data::inline_ids) bytes += a.capacity * sizeof(entity_id);
  return bytes + pass_.capacity() * sizeof(pass_entry) + listed_.capacity() * sizeof(area_data*);
}

scenert::error<grid_errc> grid::entity_error(entity_id id, const char* op) const {
  if (id >= options_.max_entities)
    return {grid_errc::id_too_large, std::string(op) + ": entity " + std::to_string(id) +
                                         " is at or above max_entities " +
                                         std::to_string(options_.max_entities)};
  return {grid_errc::unknown_entity,
          std::string(op) + ": entity " + std::to_string(id) + " is not on the grid"};
}

scenert::error<grid_errc> grid::cell_error(entity_id id, cell_point at, const char* op) const {
  std::string who = id == 0xFFFFFFFFu ? std::string() : " entity " + std::to_string(id) + " to";
  return {grid_errc::out_of_map, std::string(op) + ":" + who + " cell " + where(at) + " is outside the " +
                                     std::to_string(width_) + "x" + std::to_string(height_) + " map"};
}

scenert::error<grid_errc> grid::add_error(entity_id id, cell_point at) const {
  if (id >= options_.max_entities) return entity_error(id, "add");
  if (known(id))
    return {grid_errc::duplicate_entity,
            "add: entity " + std::to_string(id) + " is already on the grid at " + where(position_of(id))};
  return cell_error(id, at, "add");
}

}  // namespace scenert::grid
