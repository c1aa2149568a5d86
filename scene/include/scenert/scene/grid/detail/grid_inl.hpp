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

template <bool Enter, bool Player, class V>
void grid::visit_rect(rect r, V& visitor) {
  for (std::uint32_t y = r.y0; y <= r.y1; ++y) {
    area_data* row = areas_.data() + static_cast<std::size_t>(y) * areas_x_;
    for (std::uint32_t x = r.x0; x <= r.x1; ++x) {
      area_data& a = row[x];
      if constexpr (Player) Enter ? ++a.cover : --a.cover;
      const entity_id* ids = a.ids.data();
      const std::size_t n = a.ids.size();
      for (std::size_t i = 0; i < n; ++i) {
        if constexpr (Enter) {
          visitor.enter(ids[i]);
        } else {
          visitor.leave(ids[i]);
        }
      }
    }
  }
}

// Visits the areas of `a` that are not in `b`: the rows above and below b, then the columns left
// and right of b in the shared rows. Both are views clamped at the map edges.
template <bool Enter, bool Player, class V>
void grid::visit_difference(rect a, rect b, V& visitor) {
  if (a.x1 < b.x0 || b.x1 < a.x0 || a.y1 < b.y0 || b.y1 < a.y0) {
    visit_rect<Enter, Player>(a, visitor);
    return;
  }
  if (a.y0 < b.y0) visit_rect<Enter, Player>({a.x0, a.y0, a.x1, b.y0 - 1}, visitor);
  if (a.y1 > b.y1) visit_rect<Enter, Player>({a.x0, b.y1 + 1, a.x1, a.y1}, visitor);
  const std::uint32_t y0 = a.y0 > b.y0 ? a.y0 : b.y0;
  const std::uint32_t y1 = a.y1 < b.y1 ? a.y1 : b.y1;
  if (a.x0 < b.x0) visit_rect<Enter, Player>({a.x0, y0, b.x0 - 1, y1}, visitor);
  if (a.x1 > b.x1) visit_rect<Enter, Player>({b.x1 + 1, y0, a.x1, y1}, visitor);
}

template <class V>
void grid::cross(entity_id id, slot& s, std::uint32_t to_area, V& visitor) {
  const rect from = view_of_area(s.area);
  const rect to = view_of_area(to_area);
  erase(s);  // the mover is never its own neighbour, even when its old area is in a strip
  {
    detail::flag_guard guard(busy_);
    if (s.type == entity_type::player) {
      visit_difference<false, true>(from, to, visitor);
      visit_difference<true, true>(to, from, visitor);
    } else {
      visit_difference<false, false>(from, to, visitor);
      visit_difference<true, false>(to, from, visitor);
    }
  }
  insert(to_area, id, s.type);
}

template <class V>
grid_result<void> grid::add(entity_id id, entity_type type, cell_point at, V&& visitor) {
  SCENERT_ASSERT(!busy_, "grid: changed from inside a visitor");
  if (id >= options_.max_entities || known(id) || !on_map(at)) [[unlikely]]
    return add_error(id, at);
  if (id >= slots_.size()) slots_.resize(static_cast<std::size_t>(id) + 1);
  slot& s = slots_[id];
  s.x = at.x, s.y = at.y, s.type = type, ++s.generation;
  const std::uint32_t a = area_index(at);
  {
    detail::flag_guard guard(busy_);
    if (type == entity_type::player) {
      visit_rect<true, true>(view_of_area(a), visitor);
    } else {
      visit_rect<true, false>(view_of_area(a), visitor);
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
  const rect view = view_of_area(s.area);
  erase(s);
  s.area = no_area;
  --size_;
  detail::flag_guard guard(busy_);
  if (s.type == entity_type::player) {
    visit_rect<false, true>(view, visitor);
  } else {
    visit_rect<false, false>(view, visitor);
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
  s.x = to.x, s.y = to.y;
  const std::uint32_t a = area_index(to);
  if (a == s.area) [[likely]]
    return false;
  cross(id, s, a, visitor);
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
  const rect from = view_of_area(s.area);
  const std::uint32_t a = area_index(to);
  erase(s);
  s.x = to.x, s.y = to.y;
  {
    detail::flag_guard guard(busy_);
    if (s.type == entity_type::player) {
      visit_rect<false, true>(from, visitor);
      visit_rect<true, true>(view_of_area(a), visitor);
    } else {
      visit_rect<false, false>(from, visitor);
      visit_rect<true, false>(view_of_area(a), visitor);
    }
  }
  insert(a, id, s.type);
  return {};
}

template <class F>
void grid::visit_area_types(const area_data& a, type_mask mask, F& fn) const {
  if (mask == type_mask::all) {
    for (const entity_id id : a.ids) fn(id);
    return;
  }
  for (std::uint32_t t = 0; t < entity_type_count; ++t) {
    if (!has_type(mask, static_cast<entity_type>(t))) continue;
    for (std::uint32_t i = seg_begin(a, t), e = seg_end(a, t); i < e; ++i) fn(a.ids[i]);
  }
}

template <class F>
grid_result<void> grid::for_each_in_view(cell_point at, type_mask mask, F&& fn) const {
  if (!on_map(at)) return cell_error(0xFFFFFFFFu, at, "for_each_in_view");
  const rect r = view_of_area(area_index(at));
  detail::flag_guard guard(busy_);
  for (std::uint32_t y = r.y0; y <= r.y1; ++y) {
    for (std::uint32_t x = r.x0; x <= r.x1; ++x) visit_area_types(areas_[y * areas_x_ + x], mask, fn);
  }
  return {};
}

template <class F>
grid_result<void> grid::broadcast(entity_id except, type_mask mask, F&& fn) const {
  if (!known(except)) return entity_error(except, "broadcast");
  const rect r = view_of_area(slots_[except].area);
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

template <class F>
grid_result<void> grid::for_each_active_npc(std::uint32_t batch, F&& fn) {
  if (batch >= ai_batch_count)
    return scenert::fail(grid_errc::bad_batch, "for_each_active_npc: batch " + std::to_string(batch) +
                                                   " is outside [0, " + std::to_string(ai_batch_count) + ")");
  SCENERT_ASSERT(!in_pass_ && !busy_, "grid: for_each_active_npc is not reentrant");
  detail::flag_guard guard(in_pass_);
  pass_.clear();
  for (std::size_t a = batch; a < areas_.size(); a += ai_batch_count) {
    const area_data& ar = areas_[a];
    if (ar.cover == 0) continue;
    for (std::uint32_t i = ar.end[0]; i < ar.end[1]; ++i)
      pass_.push_back({ar.ids[i], slots_[ar.ids[i]].generation});
  }
  // The visitor may add, move or remove anything: re-check each snapshotted NPC before its call.
  for (std::size_t i = 0; i < pass_.size(); ++i) {
    const pass_entry e = pass_[i];
    if (!known(e.id)) continue;
    const slot& s = slots_[e.id];
    if (s.generation != e.generation || s.type != entity_type::npc) continue;
    if (s.area % ai_batch_count != batch || areas_[s.area].cover == 0) continue;
    fn(e.id);
  }
  return {};
}

}  // namespace scenert::grid
