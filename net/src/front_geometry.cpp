// The table's geometry as the front sends it: maps, world units, a scene's 1006, positions.
#include "front_geometry.hpp"

#include <algorithm>

namespace scenert::net {

const std::shared_ptr<const grid::map_data>& scene_geometry::map_of(const scene_def& s) {
  auto& m = maps_[s.map];
  if (!m)
    if (const map_def* md = table_.find_map(s.map)) m = make_map_data(*md);
  return m;
}

const map_def& scene_geometry::units_of(const scene_def& d) const {
  if (const map_def* m = table_.find_map(d.map)) return *m;
  static const map_def unit{};  // the loader guarantees every scene's map exists
  return unit;
}

server_message scene_geometry::info_of(const scene_def& def, const placement& p, player_state& told) {
  const auto& map = *map_of(def);
  scene_info i;
  i.scene = def.id, i.name = def.name,
  i.kind = std::string(scene_kind_names[static_cast<std::size_t>(def.kind)]);
  i.line = p.line.line, i.phase = p.phase;
  i.width = static_cast<std::int32_t>(map.width()), i.height = static_cast<std::int32_t>(map.height());
  i.area_size = static_cast<std::int32_t>(map.area_width());
  i.eyesight_x = static_cast<std::int32_t>(map.eyesight_x());
  i.eyesight_z = static_cast<std::int32_t>(map.eyesight_y());
  const map_def& u = units_of(def);
  i.cell_size = static_cast<float>(u.cell_size), i.origin_x = static_cast<float>(u.origin_x),
  i.origin_z = static_cast<float>(u.origin_z);
  const map_on_wire& w = wire_of(def);
  i.map_digest = w.digest;
  i.blocks_omitted = std::ranges::find(told.maps_held, w.digest) != told.maps_held.end();
  if (!i.blocks_omitted) {
    i.block_rows = w.blocks.rows, i.blocked = w.blocks.bits;
    told.maps_held.push_back(w.digest);
  }
  return server_message{std::move(i)};
}

// A map's digest and blocks: built once per map (a 512 x 512 map walks 262,144 cells), then
// copied into the first 1006 of each connection that goes there.
const scene_geometry::map_on_wire& scene_geometry::wire_of(const scene_def& def) {
  auto [it, fresh] = wire_.try_emplace(def.map);
  if (!fresh) return it->second;
  const auto& map = *map_of(def);
  block_bits bits((std::uint64_t{map.cell_count()} + 7) / 8, '\0');
  for (std::uint32_t y = 0; y < map.height(); ++y)
    for (std::uint32_t x = 0; x < map.width(); ++x)
      if (map.is_block({x, y})) {
        const std::uint32_t bit = map.cell_index({x, y});
        bits[bit / 8] = static_cast<char>(bits[bit / 8] | (1 << (bit % 8)));
      }
  auto rows = encode_block_rows(map.width(), map.height(), bits);
  it->second.digest = map_digest(
      {map.width(), map.height(), map.area_width(), map.area_height(), map.eyesight_x(), map.eyesight_y()},
      rows);
  it->second.blocks = shorter_form(map.width(), map.height(), bits, std::move(rows));
  return it->second;
}

position scene_geometry::centre(grid::cell_point c, const map_def& u) {
  return {static_cast<float>(u.origin_x + (c.x + 0.5) * u.cell_size), 0,
          static_cast<float>(u.origin_z + (c.y + 0.5) * u.cell_size), 0, 0};
}

position scene_geometry::position_of(const player_state& p, grid::cell_point c, const map_def& u) {
  if (p.asked && p.asked->cell == c) return p.asked->at;
  return centre(c, u);
}

// The last move the front accepted (its line may not have applied it yet), or where its line holds it.
position scene_geometry::last_accepted(const player_state& p, grid::cell_point c, const map_def& u) {
  return p.asked ? p.asked->at : position_of(p, c, u);
}

position scene_geometry::position_of(const std::optional<player_book::card>& card, grid::cell_point c,
                                     const map_def& u) {
  if (card && card->asked && card->asked->cell == c) return card->asked->at;
  return centre(c, u);
}

}  // namespace scenert::net
