#pragma once
// A brute-force AOI over every pair of entities, the reference the grid is checked against.

#include <scenert/scene/grid/grid.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace scenert::grid::testing {

/// Enter and leave sets of one operation, sorted.
struct oracle_events {
  std::vector<entity_id> entered;
  std::vector<entity_id> left;
};

/// Every entity's cell; visibility is Chebyshev distance in areas per axis.
class oracle {
 public:
  explicit oracle(const map_data& m) : m_(m) {}

  bool sees(cell_point a, cell_point b) const {
    const auto da = diff(a.x / m_.area_width(), b.x / m_.area_width());
    const auto db = diff(a.y / m_.area_height(), b.y / m_.area_height());
    return da <= m_.eyesight_x() && db <= m_.eyesight_y();
  }
  std::vector<entity_id> view(cell_point at, std::optional<entity_id> except) const {
    std::vector<entity_id> out;
    for (entity_id id = 0; id < pos_.size(); ++id)
      if (pos_[id] && id != except && sees(at, pos_[id]->at)) out.push_back(id);
    return out;
  }
  oracle_events add(entity_id id, entity_type t, cell_point at) {
    if (pos_.size() <= id) pos_.resize(id + 1);
    oracle_events ev{view(at, id), {}};
    pos_[id] = entry{at, t};
    return ev;
  }
  oracle_events remove(entity_id id) {
    oracle_events ev{{}, view(pos_[id]->at, id)};
    pos_[id].reset();
    return ev;
  }
  oracle_events move(entity_id id, cell_point to, bool force) {
    auto before = view(pos_[id]->at, id);
    auto after = view(to, id);
    pos_[id]->at = to;
    if (force) return {after, before};
    oracle_events ev;
    std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                        std::back_inserter(ev.entered));
    std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                        std::back_inserter(ev.left));
    return ev;
  }
  /// Players whose view covers the area.
  std::uint32_t cover(std::uint32_t area) const {
    const area_point ap = m_.area_at(area);
    const cell_point c{ap.x * m_.area_width(), ap.y * m_.area_height()};
    std::uint32_t n = 0;
    for (const auto& e : pos_)
      if (e && e->type == entity_type::player && sees(e->at, c)) ++n;
    return n;
  }
  /// cover() of every area, in area index order.
  std::vector<std::uint32_t> covers() const {
    std::vector<std::uint32_t> out(m_.area_count(), 0);
    for (const auto& e : pos_) {
      if (!e || e->type != entity_type::player) continue;
      for (std::uint32_t a = 0; a < out.size(); ++a) {
        const area_point ap = m_.area_at(a);
        if (sees(e->at, {ap.x * m_.area_width(), ap.y * m_.area_height()})) ++out[a];
      }
    }
    return out;
  }
  bool contains(entity_id id) const { return id < pos_.size() && pos_[id].has_value(); }
  cell_point at(entity_id id) const { return pos_[id]->at; }
  entity_type type(entity_id id) const { return pos_[id]->type; }
  std::uint32_t capacity() const { return static_cast<std::uint32_t>(pos_.size()); }

 private:
  struct entry {
    cell_point at;
    entity_type type;
  };
  static std::uint32_t diff(std::uint32_t a, std::uint32_t b) { return a > b ? a - b : b - a; }
  const map_data& m_;
  std::vector<std::optional<entry>> pos_;
};

/// Sorts the events a grid reported so they compare with the oracle's.
inline oracle_events sorted(const view_events& ev) {
  oracle_events out{ev.entered, ev.left};
  std::sort(out.entered.begin(), out.entered.end());
  std::sort(out.left.begin(), out.left.end());
  return out;
}

}  // namespace scenert::grid::testing
