#include <scenert/nav/flow_field.hpp>

#include <algorithm>
#include <limits>

namespace scenert::nav {
namespace {

constexpr double infinite = std::numeric_limits<double>::infinity();

constexpr int neighbours[8][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {1, 1}, {-1, 1}, {-1, -1}, {1, -1}};

cell offset(cell c, int k) {
  return {static_cast<std::uint32_t>(std::int64_t{c.x} + neighbours[k][0]),
          static_cast<std::uint32_t>(std::int64_t{c.y} + neighbours[k][1])};
}

}  // namespace

// A min-heap on distance, then index: the settling order is a pure function of map and target.
bool flow_field::heap_after(const entry& a, const entry& b) noexcept {
  return a.d != b.d ? a.d > b.d : a.index > b.index;
}

void flow_field::begin(const nav_map& map, cell target, cell_filter filter) {
  map_ = &map, filter_ = filter, target_ = target;
  dist_.assign(map.cell_count(), infinite);
  done_.assign(map.cell_count(), 0);
  heap_.clear();
  settled_ = 0;
  complete_ = false;
  if (!can_stand(map, target.x, target.y, filter)) return void(complete_ = true);
  dist_[map.index(target)] = 0;
  heap_.push_back({0, map.index(target)});
}

bool flow_field::build(std::uint32_t budget) {
  for (std::uint32_t n = 0; n < budget && !heap_.empty();) {
    std::pop_heap(heap_.begin(), heap_.end(), heap_after);
    const entry e = heap_.back();
    heap_.pop_back();
    if (done_[e.index] != 0 || e.d > dist_[e.index]) continue;
    done_[e.index] = 1;
    ++settled_, ++n;
    relax_neighbours(e.index);
  }
  return complete_ = complete_ || heap_.empty();
}

// Moves are symmetric (can_step(a, b) == can_step(b, a)), so the distance from the target is the
// distance to it.
void flow_field::relax_neighbours(std::uint32_t index) {
  const cell c = map_->at(index);
  const double d = dist_[index];
  for (int k = 0; k < 8; ++k) {
    const cell n = offset(c, k);
    if (!can_step(*map_, c, n, filter_)) continue;
    const double nd = d + (k < 4 ? 1.0 : diagonal_cost);
    const std::uint32_t ni = map_->index(n);
    if (nd >= dist_[ni]) continue;
    dist_[ni] = nd;
    heap_.push_back({nd, ni});
    std::push_heap(heap_.begin(), heap_.end(), heap_after);
  }
}

double flow_field::distance(cell at) const noexcept {
  if (map_ == nullptr || !map_->contains(at.x, at.y)) return infinite;
  const std::uint32_t i = map_->index(at);
  return done_[i] != 0 ? dist_[i] : infinite;
}

std::optional<cell> flow_field::next_step(cell from, const cell_counter& counts, std::uint32_t cell_cap) const {
  if (!complete_ || from == target_) return std::nullopt;
  std::optional<cell> best;
  double best_d = distance(from);
  for (int k = 0; k < 8; ++k) {
    const cell n = offset(from, k);
    const double d = distance(n);
    if (d < best_d && can_step(*map_, from, n, filter_) && counts.count(n) < cell_cap) best = n, best_d = d;
  }
  return best;
}

}  // namespace scenert::nav
