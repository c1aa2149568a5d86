#include <scenert/net/view_mirror.hpp>

#include <algorithm>
#include <string>

namespace scenert::net {

view_mirror::view_mirror(std::shared_ptr<const grid::map_data> map)
    : map_(std::move(map)), areas_(map_->area_count()) {}

view_mirror::rect view_mirror::view_rect(std::uint32_t area) const noexcept {
  const auto [ax, ay] = map_->area_at(area);
  const std::uint32_t ex = map_->eyesight_x(), ey = map_->eyesight_y();
  return {ax > ex ? ax - ex : 0, ay > ey ? ay - ey : 0, std::min(ax + ex, map_->areas_x() - 1),
          std::min(ay + ey, map_->areas_y() - 1)};
}

void view_mirror::place(player_id p, standing& s, std::uint32_t area) {
  s.area = area;
  s.slot = static_cast<std::uint32_t>(areas_[area].size());
  areas_[area].push_back(p);
}

// Swap-and-pop: the last player of the area takes the leaver's slot.
void view_mirror::unplace(const standing& s) {
  auto& here = areas_[s.area];
  const player_id last = here.back();
  here[s.slot] = last;
  players_.find(last)->second.slot = s.slot;
  here.pop_back();
}

std::vector<player_id> view_mirror::view_of(player_id p) const {
  std::vector<player_id> out;
  auto it = players_.find(p);
  if (it == players_.end()) return out;
  for_each_in(view_rect(it->second.area), p, [&](player_id q) { out.push_back(q); });
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<grid::cell_point> view_mirror::where(player_id p) const {
  auto it = players_.find(p);
  if (it == players_.end()) return std::nullopt;
  return it->second.at;
}

result<void, mirror_errc> view_mirror::refuse(mirror_errc code, player_id p, std::string_view why) const {
  return fail(code, "view mirror: player " + std::to_string(p) + ": " + std::string(why));
}

}  // namespace scenert::net
