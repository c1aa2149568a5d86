#pragma once
// Template bodies of grid.hpp; included at its end, never on its own.

namespace scenert::grid {

namespace detail {
/// Raises a flag for a scope (also when a visitor throws).
class flag_guard {
 public:
  explicit flag_guard(bool& flag) noexcept : flag_(flag) { flag_ = true; }
  ~flag_guard() { flag_ = false; }
  flag_guard(const flag_guard&) = delete;
  flag_guard& operator=(const flag_guard&) = delete;

 private:
  bool& flag_;
};
}  // namespace detail

// A visitor may take a whole area at once (enter(const entity_id*, std::uint32_t)), e.g. to append
// it to a buffer in one copy; otherwise it hears one entity at a time.
template <class V>
concept span_visitor = requires(V& v, const entity_id* ids, std::uint32_t n) {
  v.enter(ids, n);
  v.leave(ids, n);
};

namespace detail {
/// Collects the ids of several areas and hands them to the visitor in one call: one loop over the
/// pairs instead of one per area, whose data-dependent exits cost more than copying the ids.
template <bool Enter, class V>
class view_batch {
 public:
  static constexpr std::uint32_t capacity = 512;
  explicit view_batch(V& visitor) noexcept : visitor_(visitor) {}
  view_batch(const view_batch&) = delete;
  view_batch& operator=(const view_batch&) = delete;

  /// Room for n more ids, flushing first when the buffer is full.
  entity_id* reserve(std::uint32_t n) {
    if (size_ + n > capacity) [[unlikely]]
      flush();
    return buf_ + size_;
  }
  /// Keeps n of the ids written at reserve().
  void commit(std::uint32_t n) noexcept { size_ += n; }
  /// Hands over a large area directly, after what is buffered.
  void deliver(const entity_id* ids, std::uint32_t n) {
    flush();
    hand(ids, n);
  }
  /// Hands over what is buffered.
  void flush() {
    hand(buf_, size_);
    size_ = 0;
  }

 private:
  void hand(const entity_id* ids, std::uint32_t n) {
    if (n == 0) return;
    if constexpr (span_visitor<V>) {
      if constexpr (Enter) {
        visitor_.enter(ids, n);
      } else {
        visitor_.leave(ids, n);
      }
    } else {
      for (std::uint32_t i = 0; i < n; ++i) {
        if constexpr (Enter) {
          visitor_.enter(ids[i]);
        } else {
          visitor_.leave(ids[i]);
        }
      }
    }
  }

  V& visitor_;
  std::uint32_t size_ = 0;
  entity_id buf_[capacity];
};
}  // namespace detail

template <bool Enter, bool Player, class V>
void grid::visit_list(area_data* const* list, std::uint32_t n, V& visitor) {
  detail::view_batch<Enter, V> batch(visitor);
  for (std::uint32_t i = 0; i < n; ++i) {
    area_data& a = *list[i];
    if constexpr (Player) Enter ? ++a.cover : --a.cover;
    if (a.capacity == area_data::inline_ids) [[likely]] {
      // Copy all inline ids whatever the size: a fixed copy has no branch to mispredict.
      std::memcpy(batch.reserve(area_data::inline_ids), a.local, sizeof a.local);
      batch.commit(a.size);
    } else if (a.size <= copy_limit) {
      // Copied too: the library copy branches on the size class, not on the exact size, so one
      // visitor call for the whole view costs fewer mispredictions than one call per area.
      copy_ids(batch.reserve(a.size), a.heap.get(), a.size);
      batch.commit(a.size);
    } else {
      batch.deliver(a.heap.get(), a.size);
    }
  }
  batch.flush();
}

// The areas of `a` that are not in `b`: the rows above and below b, then the columns left and right
// of b in the shared rows. Both are views already clamped at the map edges.
inline grid::strips grid::difference(rect a, rect b) noexcept {
  strips out;
  if (a.x1 < b.x0 || b.x1 < a.x0 || a.y1 < b.y0 || b.y1 < a.y0) {
    out.r[out.n++] = a;
    return out;
  }
  if (a.y0 < b.y0) out.r[out.n++] = {a.x0, a.y0, a.x1, b.y0 - 1};
  if (a.y1 > b.y1) out.r[out.n++] = {a.x0, b.y1 + 1, a.x1, a.y1};
  const std::uint32_t y0 = std::max(a.y0, b.y0);
  const std::uint32_t y1 = std::min(a.y1, b.y1);
  if (a.x0 < b.x0) out.r[out.n++] = {a.x0, y0, b.x0 - 1, y1};
  if (a.x1 > b.x1) out.r[out.n++] = {b.x1 + 1, y0, a.x1, y1};
  return out;
}

// One flat loop per rectangle (the row wrap is a select, not a branch), so that the trip counts
// stay predictable; every area is prefetched as it is listed, before any is read.
inline std::uint32_t grid::collect(rect r, area_data** out) noexcept {
  const std::uint32_t w = r.x1 - r.x0 + 1, count = w * (r.y1 - r.y0 + 1);
  area_data* p = areas_.data() + (static_cast<std::size_t>(r.y0) * areas_x_ + r.x0);
  const std::size_t next_row = areas_x_ - w + 1;
  std::uint32_t x = 0;
  for (std::uint32_t k = 0; k < count; ++k) {
    __builtin_prefetch(p, 1);
    out[k] = p;
    const bool wrap = ++x == w;
    x = wrap ? 0 : x;
    p += wrap ? next_row : 1;
  }
  return count;
}

inline std::uint32_t grid::collect(const strips& st, area_data** out) noexcept {
  std::uint32_t n = 0;
  for (std::uint32_t i = 0; i < st.n; ++i) n += collect(st.r[i], out + n);
  return n;
}

template <class V>
void grid::cross(entity_id id, slot& s, cell_point to, std::uint32_t to_area, V& visitor) {
  if constexpr (std::is_same_v<std::decay_t<V>, ignore_view>) {
    // Nobody listens and no view cover moves with a non-player: the strips are not worth listing.
    if (const entity_type type = s.type(); type != entity_type::player) {
      erase(s, type);
      s.x = to.x, s.y = to.y;
      insert(to_area, id, type);
      return;
    }
  }
  // Start every area load before touching any: the misses overlap instead of queueing.
  __builtin_prefetch(&areas_[s.area], 1);
  __builtin_prefetch(&areas_[to_area], 1);
  const std::uint32_t fx = col_area_[s.x], fy = row_area_[s.y];
  const rect from_view = view_of(fx, fy);
  const rect to_view = view_of(col_area_[to.x], row_area_[to.y]);
  area_data** const leaving = listed_.data();
  const std::uint32_t n_leaving = collect(difference(from_view, to_view), leaving);
  area_data** const entering = leaving + n_leaving;
  const std::uint32_t n_entering = collect(difference(to_view, from_view), entering);
  const entity_type type = s.type();
  // The mover is never its own neighbour. After a step within its view, its old area is not in a
  // leaving strip nor its new one in an entering strip: move it first, while the strips' areas load.
  // After a jump beyond the view, it leaves its old area before the visits and enters the new after.
  const bool jump = fx < to_view.x0 || fx > to_view.x1 || fy < to_view.y0 || fy > to_view.y1;
  erase(s, type);
  s.x = to.x, s.y = to.y;
  if (!jump) insert(to_area, id, type);
  {
    detail::flag_guard guard(busy_);
    if (type == entity_type::player) {
      visit_list<false, true>(leaving, n_leaving, visitor);
      visit_list<true, true>(entering, n_entering, visitor);
    } else {
      visit_list<false, false>(leaving, n_leaving, visitor);
      visit_list<true, false>(entering, n_entering, visitor);
    }
  }
  if (jump) insert(to_area, id, type);
}

template <class V>
grid_result<void> grid::add(entity_id id, entity_type type, cell_point at, V&& visitor) {
  SCENERT_ASSERT(!busy_, "grid: changed from inside a visitor");
  if (id >= options_.max_entities || known(id) || !on_map(at)) [[unlikely]]
    return add_error(id, at);
  if (id >= slots_.size()) [[unlikely]]
    grow_slots(id);
  slot& s = slots_[id];
  s.x = at.x, s.y = at.y;
  ++generations_[id];
  const std::uint32_t a = area_index(at);
  area_data** const view = listed_.data();
  const std::uint32_t n = collect(view_of_cell(at.x, at.y), view);
  {
    detail::flag_guard guard(busy_);
    if (type == entity_type::player) {
      visit_list<true, true>(view, n, visitor);
    } else {
      visit_list<true, false>(view, n, visitor);
    }
  }
  insert(a, id, type);
  ++size_;
  return {};
}

template <class V>
grid_result<void> grid::remove(entity_id id, V&& visitor) {
  SCENERT_ASSERT(!busy_, "grid: changed from inside a visitor");
  if (!known(id)) [[unlikely]]
    return entity_error(id, "remove");
  slot& s = slots_[id];
  area_data** const view = listed_.data();
  const std::uint32_t n = collect(view_of_cell(s.x, s.y), view);
  const entity_type type = s.type();
  erase(s, type);
  s.area = no_area;
  --size_;
  detail::flag_guard guard(busy_);
  if (type == entity_type::player) {
    visit_list<false, true>(view, n, visitor);
  } else {
    visit_list<false, false>(view, n, visitor);
  }
  return {};
}

template <class V>
grid_result<bool> grid::move(entity_id id, cell_point to, V&& visitor) {
  SCENERT_ASSERT(!busy_, "grid: changed from inside a visitor");
  if (!known(id)) [[unlikely]]
    return entity_error(id, "move");
  if (!on_map(to)) [[unlikely]]
    return cell_error(id, to, "move");
  slot& s = slots_[id];
  const std::uint32_t a = area_index(to);
  if (a == s.area) [[likely]] {
    s.x = to.x, s.y = to.y;
    return false;
  }
  cross(id, s, to, a, visitor);
  return true;
}

template <class V>
grid_result<void> grid::teleport(entity_id id, cell_point to, V&& visitor) {
  SCENERT_ASSERT(!busy_, "grid: changed from inside a visitor");
  if (!known(id)) [[unlikely]]
    return entity_error(id, "teleport");
  if (!on_map(to)) [[unlikely]]
    return cell_error(id, to, "teleport");
  slot& s = slots_[id];
  area_data** const from = listed_.data();
  const std::uint32_t n_from = collect(view_of_cell(s.x, s.y), from);
  area_data** const into = from + n_from;
  const std::uint32_t n_into = collect(view_of_cell(to.x, to.y), into);
  const std::uint32_t a = area_index(to);
  const entity_type type = s.type();
  erase(s, type);
  s.x = to.x, s.y = to.y;
  {
    detail::flag_guard guard(busy_);
    if (type == entity_type::player) {
      visit_list<false, true>(from, n_from, visitor);
      visit_list<true, true>(into, n_into, visitor);
    } else {
      visit_list<false, false>(from, n_from, visitor);
      visit_list<true, false>(into, n_into, visitor);
    }
  }
  insert(a, id, type);
  return {};
}

template <class F>
void grid::visit_area_types(const area_data& a, type_mask mask, F& fn) const {
  const entity_id* ids = a.data();
  if (mask == type_mask::all) {
    for (std::uint32_t i = 0; i < a.size; ++i) fn(ids[i]);
    return;
  }
  for (std::uint32_t t = 0; t < entity_type_count; ++t) {
    if (!has_type(mask, static_cast<entity_type>(t))) continue;
    for (std::uint32_t i = seg_begin(a, t), e = seg_end(a, t); i < e; ++i) fn(ids[i]);
  }
}

template <class F>
grid_result<void> grid::for_each_in_view(cell_point at, type_mask mask, F&& fn) const {
  if (!on_map(at)) return cell_error(0xFFFFFFFFu, at, "for_each_in_view");
  const rect r = view_of_cell(at.x, at.y);
  detail::flag_guard guard(busy_);
  for (std::uint32_t y = r.y0; y <= r.y1; ++y) {
    for (std::uint32_t x = r.x0; x <= r.x1; ++x) visit_area_types(areas_[y * areas_x_ + x], mask, fn);
  }
  return {};
}

template <class F>
grid_result<void> grid::broadcast(entity_id except, type_mask mask, F&& fn) const {
  if (!known(except)) return entity_error(except, "broadcast");
  const rect r = view_of_cell(slots_[except].x, slots_[except].y);
  auto others = [&fn, except](entity_id id) {
    if (id != except) fn(id);
  };
  detail::flag_guard guard(busy_);
  for (std::uint32_t y = r.y0; y <= r.y1; ++y) {
    for (std::uint32_t x = r.x0; x <= r.x1; ++x) visit_area_types(areas_[y * areas_x_ + x], mask, others);
  }
  return {};
}

template <class F>
grid_result<void> grid::for_each_in_rect(cell_rect rc, type_mask mask, F&& fn) const {
  if (!on_map(rc.min) || !on_map(rc.max) || rc.min.x > rc.max.x || rc.min.y > rc.max.y)
    return cell_error(0xFFFFFFFFu, on_map(rc.min) ? rc.max : rc.min, "for_each_in_rect");
  auto inside = [&](entity_id id) {
    const slot& s = slots_[id];
    if (s.x >= rc.min.x && s.x <= rc.max.x && s.y >= rc.min.y && s.y <= rc.max.y) fn(id);
  };
  detail::flag_guard guard(busy_);
  for (std::uint32_t y = row_area_[rc.min.y]; y <= row_area_[rc.max.y]; ++y) {
    for (std::uint32_t x = col_area_[rc.min.x]; x <= col_area_[rc.max.x]; ++x)
      visit_area_types(areas_[y * areas_x_ + x], mask, inside);
  }
  return {};
}

template <class F, class A>
grid_result<void> grid::for_each_active_npc(std::uint32_t batch, F&& fn, A&& ahead) {
  if (batch >= ai_batch_count)
    return scenert::fail(grid_errc::bad_batch, "for_each_active_npc: batch " + std::to_string(batch) +
                                                   " is outside [0, " + std::to_string(ai_batch_count) + ")");
  SCENERT_ASSERT(!in_pass_ && !busy_, "grid: for_each_active_npc is not reentrant");
  detail::flag_guard guard(in_pass_);
  pass_.clear();
  for (std::size_t a = batch; a < areas_.size(); a += ai_batch_count) {
    const area_data& ar = areas_[a];
    if (ar.cover == 0) continue;
    const entity_id* ids = ar.data();
    for (std::uint32_t i = ar.end[0]; i < ar.end[1]; ++i) pass_.push_back({ids[i], generations_[ids[i]]});
  }
  for (const pass_entry& e : pass_) {
    __builtin_prefetch(&slots_[e.id]);
    ahead(e.id);
  }
  // The visitor may add, move or remove anything: re-check each snapshotted NPC before its call.
  for (std::size_t i = 0; i < pass_.size(); ++i) {
    const pass_entry e = pass_[i];
    if (!known(e.id)) continue;
    const slot& s = slots_[e.id];
    if (generations_[e.id] != e.generation || s.type() != entity_type::npc) continue;
    if (s.area % ai_batch_count != batch || areas_[s.area].cover == 0) continue;
    fn(e.id);
  }
  return {};
}

}  // namespace scenert::grid
