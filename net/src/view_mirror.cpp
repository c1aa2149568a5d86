#include <scenert/net/view_mirror.hpp>

#include <algorithm>
#include <string>

namespace scenert::net {

view_mirror::view_mirror(std::shared_ptr<const grid::map_data> map) : map_(std::move(map)) {
  players_.areas.resize(map_->area_count());
  monsters_.areas.resize(map_->area_count());
}

view_mirror::rect view_mirror::view_rect(std::uint32_t area) const noexcept {
  const auto [ax, ay] = map_->area_at(area);
  const std::uint32_t ex = map_->eyesight_x(), ey = map_->eyesight_y();
  return {ax > ex ? ax - ex : 0, ay > ey ? ay - ey : 0, std::min(ax + ex, map_->areas_x() - 1),
          std::min(ay + ey, map_->areas_y() - 1)};
}

void view_mirror::layer::place(std::uint64_t id, standing& s, std::uint32_t area) {
  s.area = area;
  s.slot = static_cast<std::uint32_t>(areas[area].size());
  areas[area].push_back(id);
}

// Swap-and-pop: the last one of the area takes the leaver's slot.
void view_mirror::layer::unplace(const standing& s) {
  auto& here = areas[s.area];
  const std::uint64_t last = here.back();
  here[s.slot] = last;
  at.find(last)->second.slot = s.slot;
  here.pop_back();
}

std::optional<grid::cell_point> view_mirror::layer::where(std::uint64_t id) const {
  auto it = at.find(id);
  if (it == at.end()) return std::nullopt;
  return it->second.at;
}

// The ids of `l` in the view of player `p` but `except`, sorted; empty when `p` is not here.
std::vector<std::uint64_t> view_mirror::seen_by(player_id p, const layer& l, std::uint64_t except) const {
  std::vector<std::uint64_t> out;
  auto it = players_.at.find(p);
  if (it == players_.at.end()) return out;
  for_each_in(l, view_rect(it->second.area), except, [&](std::uint64_t q) { out.push_back(q); });
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<player_id> view_mirror::view_of(player_id p) const { return seen_by(p, players_, p); }

std::vector<monster_id> view_mirror::monsters_seen_by(player_id p) const {
  return seen_by(p, monsters_, nobody);
}

std::optional<entity_look> view_mirror::look_of(monster_id m) const {
  auto it = monsters_.at.find(m);
  if (it == monsters_.at.end()) return std::nullopt;
  return it->second.look;
}

std::vector<player_id> view_mirror::viewers_of(monster_id m) const {
  std::vector<player_id> out;
  auto it = monsters_.at.find(m);
  if (it == monsters_.at.end()) return out;
  for_each_in(players_, view_rect(it->second.area), nobody, [&](player_id q) { out.push_back(q); });
  return out;
}

std::vector<player_id> view_mirror::players() const {
  std::vector<player_id> out;
  out.reserve(players_.at.size());
  for (const auto& [p, s] : players_.at) out.push_back(p);
  return out;
}

result<void, mirror_errc> view_mirror::refuse(mirror_errc code, const line_event& e,
                                              std::string_view why) const {
  return fail(code, std::string("view mirror: ") + (e.monster ? "monster " : "player ") +
                        std::to_string(e.player) + ": " + std::string(why));
}

}  // namespace scenert::net
