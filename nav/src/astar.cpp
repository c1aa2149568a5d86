// A*: the plain baseline every JPS figure is compared against.
#include "search_state.hpp"

namespace scenert::nav {

void expand_astar(search_state& s, std::uint32_t index) {
  const cell c = s.map->at(index);
  const path_cost g = s.nodes[index].g;
  const std::int64_t x = c.x, y = c.y;
  const std::uint32_t w = s.map->width();
  const bool open_w = can_stand(*s.map, x - 1, y, s.filter), open_e = can_stand(*s.map, x + 1, y, s.filter);
  const bool open_n = can_stand(*s.map, x, y - 1, s.filter), open_s = can_stand(*s.map, x, y + 1, s.filter);
  if (open_w) s.relax(index - 1, {c.x - 1, c.y}, index, g.plus(1, 0));
  if (open_e) s.relax(index + 1, {c.x + 1, c.y}, index, g.plus(1, 0));
  if (open_n) s.relax(index - w, {c.x, c.y - 1}, index, g.plus(1, 0));
  if (open_s) s.relax(index + w, {c.x, c.y + 1}, index, g.plus(1, 0));
  // A diagonal needs both orthogonal neighbours open: no corner cutting.
  if (open_n && open_w && can_stand(*s.map, x - 1, y - 1, s.filter))
    s.relax(index - w - 1, {c.x - 1, c.y - 1}, index, g.plus(0, 1));
  if (open_n && open_e && can_stand(*s.map, x + 1, y - 1, s.filter))
    s.relax(index - w + 1, {c.x + 1, c.y - 1}, index, g.plus(0, 1));
  if (open_s && open_w && can_stand(*s.map, x - 1, y + 1, s.filter))
    s.relax(index + w - 1, {c.x - 1, c.y + 1}, index, g.plus(0, 1));
  if (open_s && open_e && can_stand(*s.map, x + 1, y + 1, s.filter))
    s.relax(index + w + 1, {c.x + 1, c.y + 1}, index, g.plus(0, 1));
}

}  // namespace scenert::nav
