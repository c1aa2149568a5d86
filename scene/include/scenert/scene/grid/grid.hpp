#pragma once
/// The grid AOI of one scene instance: entities in areas, enter/leave sets on every operation,
/// view queries, and the effective areas that decide which NPCs run AI.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <scenert/runtime/assert.hpp>
#include <scenert/scene/grid/detail/table_allocator.hpp>
#include <scenert/scene/grid/map_data.hpp>
#include <scenert/scene/grid/types.hpp>

namespace scenert::grid {

/// Limits of one grid.
struct grid_options {
  entity_id max_entities = 1u << 24;  ///< ids must be below this; the id table grows up to it
  std::uint32_t reserve = 0;          ///< ids to reserve room for up front
};

/// A reusable buffer that collects the enter and leave sets of one operation (clear it between).
struct view_events {
  std::vector<entity_id> entered;  ///< who starts seeing the mover, and is seen by it
  std::vector<entity_id> left;     ///< who stops seeing the mover, and is no longer seen by it
  void enter(entity_id id) { entered.push_back(id); }       ///< visitor hook
  void leave(entity_id id) { left.push_back(id); }          ///< visitor hook
  void clear() noexcept { entered.clear(), left.clear(); }  ///< keeps the capacity
};

/// A visitor that ignores the enter and leave sets.
struct ignore_view {
  void enter(entity_id) const noexcept {}  ///< ignores
  void leave(entity_id) const noexcept {}  ///< ignores
};

/// Entities on the areas of one map instance. Views are Chebyshev distance in areas: an entity sees
/// every entity whose area is within (eyesight_x, eyesight_y) of its own, clamped at the map edges.
/// Operations take a visitor with `enter(entity_id)` and `leave(entity_id)` (or, to take one area's
/// entities at once, `enter(const entity_id*, std::uint32_t)` and `leave(...)`); it hears leaves
/// first, then enters, the mover excluded, and must not change the grid while it is called.
/// Thread-safety: none; owned by the scene that ticks it.
class grid {
 public:
  /// AI batches of the effective areas: an area belongs to batch `area index % ai_batch_count`.
  static constexpr std::uint32_t ai_batch_count = 10;

  /// An empty grid over a map (the map must not be null).
  explicit grid(std::shared_ptr<const map_data> map, grid_options options = {});

  /// Puts an entity on the map; the visitor hears everything that enters its view.
  template <class V>
  grid_result<void> add(entity_id id, entity_type type, cell_point at, V&& visitor);
  /// Takes an entity off the map; the visitor hears everything that leaves its view.
  template <class V>
  grid_result<void> remove(entity_id id, V&& visitor);
  /// Walks an entity to a cell; only the differing strips of areas are scanned. Returns whether the
  /// entity changed area (inside one area nothing is reported and nothing is allocated).
  template <class V>
  grid_result<bool> move(entity_id id, cell_point to, V&& visitor);
  /// Moves an entity and rebuilds its view even when the target is near: everything in the old view
  /// leaves, everything in the new view enters (seed 001's force case: revive on the spot).
  template <class V>
  grid_result<void> teleport(entity_id id, cell_point to, V&& visitor);

  /// Calls fn(entity_id) for every entity of the mask in the view around a cell.
  template <class F>
  grid_result<void> for_each_in_view(cell_point at, type_mask mask, F&& fn) const;
  /// Calls fn(entity_id) for every entity of the mask in the view of `except`, except itself.
  template <class F>
  grid_result<void> broadcast(entity_id except, type_mask mask, F&& fn) const;
  /// Calls fn(entity_id) for every entity of the mask standing inside a rectangle of cells.
  template <class F>
  grid_result<void> for_each_in_rect(cell_rect rect, type_mask mask, F&& fn) const;
  /// Calls fn(entity_id) once for each NPC standing on a covered area of the batch. fn may add,
  /// move, teleport and remove entities: NPCs are snapshotted at the start and re-checked before each
  /// call, so none is visited twice and none that stays eligible is skipped. Not reentrant.
  template <class F>
  grid_result<void> for_each_active_npc(std::uint32_t batch, F&& fn) {
    return for_each_active_npc(batch, std::forward<F>(fn), [](entity_id) {});
  }
  /// The same, calling ahead(entity_id) for every snapshotted NPC before the first fn: a caller
  /// starts loading what each one's call will read, so that the loads overlap (ahead must not change
  /// the grid).
  template <class F, class A>
  grid_result<void> for_each_active_npc(std::uint32_t batch, F&& fn, A&& ahead);

  /// Starts loading what for_each_active_npc(batch) reads first (the batch's areas, the snapshot,
  /// the generations, the id table when it is small): a hint, no effect.
  void prefetch_batch(std::uint32_t batch) const noexcept {
    for (std::size_t a = batch; a < areas_.size(); a += ai_batch_count) __builtin_prefetch(&areas_[a]);
    __builtin_prefetch(pass_.data());
    __builtin_prefetch(generations_.data());
    const auto* table = reinterpret_cast<const char*>(slots_.data());
    for (std::size_t at = 0; at < std::min<std::size_t>(slots_.size() * sizeof(slot), 1024); at += 64)
      __builtin_prefetch(table + at);
  }

  /// Whether an id is on the grid.
  bool contains(entity_id id) const noexcept { return id < slots_.size() && slots_[id].area != no_area; }
  /// Type of an entity on the grid.
  entity_type type_of(entity_id id) const { return checked(id).type(); }
  /// Cell of an entity on the grid.
  cell_point position_of(entity_id id) const { return {checked(id).x, checked(id).y}; }
  /// Flat area index of an entity on the grid.
  std::uint32_t area_of(entity_id id) const { return checked(id).area; }
  /// Entities on the grid.
  std::uint32_t size() const noexcept { return size_; }
  /// How many players' views cover an area (its effective count, seed 000).
  std::uint32_t cover_count(std::uint32_t area) const { return areas_.at(area).cover; }
  /// Entities of one type standing on an area.
  std::uint32_t count_in_area(std::uint32_t area, entity_type type) const;
  /// Removes every entity, keeping the memory (a line that closes).
  void clear() noexcept;
  /// Bytes held by the id table and the areas.
  std::size_t memory_bytes() const noexcept;
  /// The map.
  const map_data& map() const noexcept { return *map_; }
  /// The shared map data, for another instance of the same map.
  const std::shared_ptr<const map_data>& shared_map() const noexcept { return map_; }

 private:
  static constexpr std::uint32_t no_area = 0xFFFFFFFFu;
  static constexpr std::uint32_t copy_limit = 256;  // larger areas go to the visitor without a copy

  // An entity is where it stands. Its type is also the segment of its area it sits in; the copy here
  // spares a move the load of its old area before the visits.
  struct slot {
    std::uint32_t area = no_area;  // no_area: not on the grid
    std::uint32_t place = 0;       // position in the area's ids << 2 | type
    std::uint32_t x = 0;
    std::uint32_t y = 0;

    std::uint32_t index() const noexcept { return place >> 2; }
    entity_type type() const noexcept { return static_cast<entity_type>(place & 3u); }
  };
  // One cache line per area: the ids of its entities in segments [players | npcs | items] (a view over
  // all types is one contiguous scan), stored inline up to inline_ids and on the heap beyond.
  struct alignas(64) area_data {
    static constexpr std::uint32_t inline_ids = 9;
    std::unique_ptr<entity_id[]> heap;
    std::uint32_t size = 0;
    std::uint32_t capacity = inline_ids;
    std::uint32_t end[2] = {0, 0};     // end of the player segment, end of the npc segment
    std::uint32_t cover = 0;           // players whose view covers this area
    entity_id local[inline_ids] = {};  // all read by visits, whatever the size

    entity_id* data() noexcept { return capacity == inline_ids ? local : heap.get(); }
    const entity_id* data() const noexcept { return capacity == inline_ids ? local : heap.get(); }
    void push_back(entity_id id) {
      if (size == capacity) grow();
      data()[size++] = id;
    }
    void grow();
  };
  struct rect {
    std::uint32_t x0, y0, x1, y1;  // area bounds, included
  };
  // The areas of one view that are not in another: at most four rectangles.
  struct strips {
    rect r[4];
    std::uint32_t n = 0;
  };
  struct pass_entry {
    entity_id id;
    std::uint32_t generation;
  };

  const slot& checked(entity_id id) const {
    SCENERT_ASSERT(contains(id), "grid: entity is not on the grid");
    return slots_[id];
  }
  std::uint32_t seg_begin(const area_data& a, std::uint32_t t) const noexcept {
    return t == 0 ? 0 : a.end[t - 1];
  }
  std::uint32_t seg_end(const area_data& a, std::uint32_t t) const noexcept {
    return t == 2 ? a.size : a.end[t];
  }
  rect view_of(std::uint32_t ax, std::uint32_t ay) const noexcept {
    return {ax > eye_x_ ? ax - eye_x_ : 0, ay > eye_y_ ? ay - eye_y_ : 0,
            ax + eye_x_ < areas_x_ ? ax + eye_x_ : areas_x_ - 1,
            ay + eye_y_ < areas_y_ ? ay + eye_y_ : areas_y_ - 1};
  }
  rect view_of_cell(std::uint32_t x, std::uint32_t y) const noexcept {
    return view_of(col_area_[x], row_area_[y]);
  }

  void insert(std::uint32_t area_index, entity_id id, entity_type type);
  void erase(const slot& s, entity_type type);
  bool known(entity_id id) const noexcept { return contains(id); }
  bool on_map(cell_point c) const noexcept { return c.x < width_ && c.y < height_; }
  std::uint32_t area_index(cell_point c) const noexcept { return row_start_[c.y] + col_area_[c.x]; }
  [[gnu::cold]] scenert::error<grid_errc> entity_error(entity_id id, const char* op) const;
  [[gnu::cold]] scenert::error<grid_errc> cell_error(entity_id id, cell_point at, const char* op) const;
  [[gnu::cold]] scenert::error<grid_errc> add_error(entity_id id, cell_point at) const;

  template <bool Enter, bool Player, class V>
  void visit_list(area_data* const* list, std::uint32_t n, V& visitor);
  static strips difference(rect a, rect b) noexcept;
  std::uint32_t collect(rect r, area_data** out) noexcept;
  std::uint32_t collect(const strips& st, area_data** out) noexcept;
  void grow_slots(entity_id id);
  static void copy_ids(entity_id* to, const entity_id* from, std::uint32_t n) noexcept;
  template <class V>
  [[gnu::noinline]] void cross(entity_id id, slot& s, cell_point to, std::uint32_t to_area, V& visitor);
  template <class F>
  void visit_area_types(const area_data& a, type_mask mask, F& fn) const;

  std::shared_ptr<const map_data> map_;
  grid_options options_;
  std::uint32_t areas_x_ = 0;
  std::uint32_t areas_y_ = 0;
  std::uint32_t eye_x_ = 0;  // eyesight clamped to the map: a larger radius sees the same areas
  std::uint32_t eye_y_ = 0;
  std::uint32_t width_ = 0;
  std::uint32_t height_ = 0;
  const std::uint32_t* col_area_ = nullptr;  // the map's tables, kept alive by map_
  const std::uint32_t* row_area_ = nullptr;
  const std::uint32_t* row_start_ = nullptr;
  std::uint32_t size_ = 0;
  std::vector<slot, detail::table_allocator<slot>> slots_;
  std::vector<std::uint32_t> generations_;  // bumped by each add: tells a re-added id from the old one
  std::vector<area_data, detail::table_allocator<area_data>> areas_;
  std::vector<area_data*> listed_;  // the areas one operation visits: two whole views at most
  std::vector<pass_entry> pass_;    // reused snapshot of for_each_active_npc
  mutable bool busy_ = false;       // a visitor is running: changing the grid now is a bug
  bool in_pass_ = false;
};

}  // namespace scenert::grid

#include <scenert/scene/grid/detail/grid_inl.hpp>
