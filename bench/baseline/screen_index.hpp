#pragma once
// Baseline: seed 000's nine-screen index, for comparison only. Per entity type a
// std::map<uint32, std::set<entity*>> from screen to entities, a set of all entities per type, the
// precomputed screen list of each view (get_view), and the effective screens as ten
// std::map<screen, count> batches refreshed on every screen change of a player. The seed shows no
// enter/leave code; a move that changes screen reports the entities of the screens in one view but
// not in the other, found with std::find over the two screen lists.

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace scenert::bench::baseline {

class screen_index {
 public:
  enum object_type { object_player = 0, object_npc = 1, object_item = 2, object_max = 3 };
  static constexpr std::uint32_t max_npc_group = 10;
  static constexpr std::uint32_t invalid_screen = 0xFFFFFFFFu;

  struct entity {
    std::uint32_t id;
    std::uint32_t x;
    std::uint32_t y;
    object_type type;
  };

  screen_index(std::uint32_t width, std::uint32_t height, std::uint32_t screen_w, std::uint32_t screen_h,
               std::uint32_t rx, std::uint32_t ry)
      : screen_w_(screen_w), screen_h_(screen_h) {
    screens_x_ = (width + screen_w - 1) / screen_w;
    screens_y_ = (height + screen_h - 1) / screen_h;
    views_.resize(static_cast<std::size_t>(screens_x_) * screens_y_);
    for (std::uint32_t s = 0; s < views_.size(); ++s) {
      const auto sx = static_cast<std::int64_t>(s % screens_x_),
                 sy = static_cast<std::int64_t>(s / screens_x_);
      for (std::int64_t y = sy - ry; y <= sy + static_cast<std::int64_t>(ry); ++y)
        for (std::int64_t x = sx - rx; x <= sx + static_cast<std::int64_t>(rx); ++x)
          if (x >= 0 && y >= 0 && x < screens_x_ && y < screens_y_)
            views_[s].push_back(static_cast<std::uint32_t>(y * screens_x_ + x));
    }
  }
  ~screen_index() {
    for (entity* e : owned_) delete e;
  }
  screen_index(const screen_index&) = delete;
  screen_index& operator=(const screen_index&) = delete;

  std::uint32_t screen_of(std::uint32_t x, std::uint32_t y) const {
    return screens_x_ * (y / screen_h_) + x / screen_w_;
  }
  const std::vector<std::uint32_t>& get_view(std::uint32_t screen) const { return views_[screen]; }

  template <class V>
  void add(std::uint32_t id, std::uint32_t x, std::uint32_t y, V& v) {
    auto* e = new entity{id, x, y, object_player};
    owned_.push_back(e);
    if (by_id_.size() <= id) by_id_.resize(id + 1);
    by_id_[id] = e;
    const std::uint32_t screen = screen_of(x, y);
    posi_index_[e->type][screen].insert(e);
    all_[e->type].insert(e);
    if (e->type == object_player) fresh_effect_screen(invalid_screen, screen);
    for (std::uint32_t s : get_view(screen)) visit_screen(s, e, [&](std::uint32_t other) { v.enter(other); });
  }

  template <class V>
  bool move(std::uint32_t id, std::uint32_t x, std::uint32_t y, V& v) {
    entity* e = by_id_[id];
    const std::uint32_t old_screen = screen_of(e->x, e->y);
    const std::uint32_t new_screen = screen_of(x, y);
    e->x = x;
    e->y = y;
    if (old_screen == new_screen) return false;
    posi_index_[e->type][old_screen].erase(e);
    posi_index_[e->type][new_screen].insert(e);
    if (e->type == object_player) fresh_effect_screen(old_screen, new_screen);
    const auto& before = get_view(old_screen);
    const auto& after = get_view(new_screen);
    for (std::uint32_t s : before)
      if (std::find(after.begin(), after.end(), s) == after.end())
        visit_screen(s, e, [&](std::uint32_t other) { v.leave(other); });
    for (std::uint32_t s : after)
      if (std::find(before.begin(), before.end(), s) == before.end())
        visit_screen(s, e, [&](std::uint32_t other) { v.enter(other); });
    return true;
  }

  /// Estimated heap bytes: red-black nodes of 48 bytes (+ malloc header) in the screen sets and in
  /// `all`, a map node per used screen, the entity, the precomputed views.
  std::size_t bytes() const {
    std::size_t b = owned_.size() * (2 * 56 + sizeof(entity) + 16 + 2 * sizeof(void*));
    for (const auto& per_type : posi_index_) b += per_type.size() * (64 + 48);
    for (const auto& batch : posi_effect_) b += batch.size() * 56;
    for (const auto& view : views_) b += view.capacity() * sizeof(std::uint32_t) + sizeof(view);
    return b;
  }

 private:
  template <class F>
  void visit_screen(std::uint32_t screen, const entity* self, F&& f) const {
    for (std::uint32_t t = 0; t < object_max; ++t) {
      auto it = posi_index_[t].find(screen);
      if (it == posi_index_[t].end()) continue;
      for (const entity* other : it->second)
        if (other != self) f(other->id);
    }
  }

  void fresh_effect_screen(std::uint32_t old_screen, std::uint32_t new_screen) {
    if (old_screen != invalid_screen) {
      for (std::uint32_t s : get_view(old_screen)) {
        auto& batch = posi_effect_[s % max_npc_group];
        auto it = batch.find(s);
        if (it != batch.end() && it->second > 0 && --it->second == 0) batch.erase(it);
      }
    }
    if (new_screen != invalid_screen)
      for (std::uint32_t s : get_view(new_screen)) ++posi_effect_[s % max_npc_group][s];
  }

  std::uint32_t screen_w_, screen_h_;
  std::uint32_t screens_x_ = 0, screens_y_ = 0;
  std::vector<std::vector<std::uint32_t>> views_;
  std::map<std::uint32_t, std::set<entity*>> posi_index_[object_max];
  std::set<entity*> all_[object_max];
  std::map<std::uint32_t, std::uint32_t> posi_effect_[max_npc_group];
  std::vector<entity*> owned_;
  std::vector<entity*> by_id_;
};

}  // namespace scenert::bench::baseline
