#include <scenert/nav/flow_field.hpp>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <limits>

namespace scenert::nav {
namespace {

constexpr double infinite = std::numeric_limits<double>::infinity();
// A cell's state in done_: its distance is this build's only once written (reached or finished).
constexpr std::uint8_t untouched = 0, reached = 1, finished = 2;

constexpr int neighbours[8][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {1, 1}, {-1, 1}, {-1, -1}, {1, -1}};

cell offset(cell c, int k) {
  return {static_cast<std::uint32_t>(std::int64_t{c.x} + neighbours[k][0]),
          static_cast<std::uint32_t>(std::int64_t{c.y} + neighbours[k][1])};
}

}  // namespace

// Distances are >= 0, so their IEEE bits sort as they do. The settling order is a pure function of
// map and target (equal distances leave last in first out); the distances do not depend on it.
unsigned flow_field::bucket_of(double d) const noexcept {
  const auto bits = std::bit_cast<std::uint64_t>(d);
  return bits <= last_ ? 0 : 64 - static_cast<unsigned>(std::countl_zero(bits ^ last_));
}

void flow_field::push(entry e) {
  const unsigned b = bucket_of(e.d);
  buckets_[b].push_back(e);
  used_ |= std::uint64_t{1} << b;
  ++open_;
}

flow_field::entry flow_field::pop() {
  if ((used_ & 1) == 0) split_least();
  std::vector<entry>& zero = buckets_[0];
  const entry e = zero.back();
  zero.pop_back();
  if (zero.empty()) used_ &= ~std::uint64_t{1};
  --open_;
  return e;
}

// The least nonempty bucket moves down: its least distance becomes the last, its entries spread.
void flow_field::split_least() {
  const auto b = static_cast<unsigned>(std::countr_zero(used_));
  std::vector<entry>& from = buckets_[b];
  std::uint64_t least = std::bit_cast<std::uint64_t>(from.front().d);
  for (const entry& e : from) least = std::min(least, std::bit_cast<std::uint64_t>(e.d));
  last_ = least;
  for (const entry& e : from) {
    const unsigned to = bucket_of(e.d);
    buckets_[to].push_back(e);
    used_ |= std::uint64_t{1} << to;
  }
  from.clear();
  used_ &= ~(std::uint64_t{1} << b);
}

void flow_field::begin(const nav_map& map, cell target, cell_filter filter, double reach) {
  map_ = &map, filter_ = filter, target_ = target, reach_ = reach;
  settled_ = 0;
  complete_ = false;
  restart_pending_ = true;
}

void flow_field::restart() {
  restart_pending_ = false;
  clear_states();
  for (std::uint64_t m = used_; m != 0; m &= m - 1) buckets_[std::countr_zero(m)].clear();
  used_ = 0, last_ = 0, open_ = 0;
  if (!can_stand(*map_, target_.x, target_.y, filter_)) return void(complete_ = true);
  const std::uint32_t at = local(target_.x, target_.y);
  dist_[at] = 0, done_[at] = reached;
  push({0, at});
}

// The arrays cover the build's window alone: a path of length at most reach moves at most
// floor(reach) cells along each axis (every step costs at least 1), so a build touches only the
// square of that half-side around its target, clamped to the map (the whole map when unbounded;
// nothing for a target off the map). Only the states are cleared (a byte each): a distance is read
// only where its state says this build wrote it.
void flow_field::clear_states() {
  const std::uint32_t w = map_->width(), h = map_->height();
  const double half = std::min(std::floor(reach_), static_cast<double>(std::max(w, h)));
  const auto r = static_cast<std::uint32_t>(half);
  if (!map_->contains(target_.x, target_.y)) {
    win_x0_ = win_y0_ = win_w_ = win_h_ = 0;
  } else {
    const auto last = [r](std::uint32_t at, std::uint32_t size) {
      return static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{at} + r, size - 1));
    };
    win_x0_ = target_.x > r ? target_.x - r : 0, win_y0_ = target_.y > r ? target_.y - r : 0;
    win_w_ = last(target_.x, w) - win_x0_ + 1, win_h_ = last(target_.y, h) - win_y0_ + 1;
  }
  const std::size_t cells = std::size_t{win_w_} * win_h_;
  if (dist_.size() < cells) dist_.resize(cells);  // what the largest window needed stays
  done_.assign(cells, untouched);
}

bool flow_field::build(std::uint32_t budget) {
  if (restart_pending_) restart();
  for (std::uint32_t n = 0; n < budget && open_ != 0;) {
    const entry e = pop();
    if (done_[e.index] == finished || e.d > dist_[e.index]) continue;
    done_[e.index] = finished;
    ++settled_, ++n;
    relax_neighbours(e.index);
  }
  return complete_ = complete_ || open_ == 0;
}

// Moves are symmetric (can_step(a, b) == can_step(b, a)), so the distance from the target is the
// distance to it. The four sides are tested once and the diagonals read them (no corner cutting),
// as A* does: the same moves as can_step, at a fraction of its calls.
void flow_field::relax_neighbours(std::uint32_t index) {
  const cell c = cell_at(index);
  const std::int64_t x = c.x, y = c.y;
  const auto open = [&](std::int64_t cx, std::int64_t cy) {
    return filter_.empty() ? map_->passable(cx, cy) : can_stand(*map_, cx, cy, filter_);
  };
  bool side[4];
  for (int k = 0; k < 4; ++k) side[k] = open(x + neighbours[k][0], y + neighbours[k][1]);
  const double d = dist_[index];
  for (int k = 0; k < 8; ++k) {
    // Diagonal k (4..7) lies between sides k-4 and (k-3)%4 of `neighbours`.
    if (k < 4 ? !side[k]
              : !(side[k - 4] && side[(k - 3) % 4] && open(x + neighbours[k][0], y + neighbours[k][1])))
      continue;
    const double nd = d + (k < 4 ? 1.0 : diagonal_cost);
    if (nd > reach_) continue;
    // On the map (open) and at most reach away: inside the window (see clear_states).
    assert(in_window(offset(c, k)));
    const auto ni =
        static_cast<std::uint32_t>(index + neighbours[k][0] + neighbours[k][1] * std::int64_t{win_w_});
    if (done_[ni] != untouched && nd >= dist_[ni]) continue;
    dist_[ni] = nd, done_[ni] = reached;
    push({nd, ni});
  }
}

double flow_field::distance(cell at) const noexcept {
  if (map_ == nullptr || restart_pending_ || !in_window(at)) return infinite;
  const std::uint32_t i = local(at.x, at.y);
  return done_[i] == finished ? dist_[i] : infinite;
}

std::optional<cell> flow_field::next_step(cell from, const cell_counter& counts,
                                          std::uint32_t cell_cap) const {
  if (!complete_ || from == target_) return std::nullopt;
  if (filter_.empty() && from.x > win_x0_ && from.y > win_y0_ && from.x + 1 < win_x0_ + win_w_ &&
      from.y + 1 < win_y0_ + win_h_)
    return next_step_inside(from, counts, cell_cap);
  std::optional<cell> best;
  double best_d = distance(from);
  for (int k = 0; k < 8; ++k) {
    const cell n = offset(from, k);
    const double d = distance(n);
    if (d < best_d && can_step(*map_, from, n, filter_) && counts.count(n) < cell_cap) best = n, best_d = d;
  }
  return best;
}

// next_step for a cell away from the window's edge (so from the map's), the field without a filter:
// the same answer, read by index. A finished cell is passable (the map does not change), so only a diagonal's
// two sides are looked up, and only for a neighbour nearer than the best so far (the same tests, in the same
// order).
std::optional<cell> flow_field::next_step_inside(cell from, const cell_counter& counts,
                                                 std::uint32_t cell_cap) const {
  if (!map_->passable(from.x, from.y)) return std::nullopt;
  const std::uint32_t at = local(from.x, from.y);
  const auto w = static_cast<std::int64_t>(win_w_);
  std::optional<cell> best;
  double best_d = done_[at] == finished ? dist_[at] : infinite;
  for (int k = 0; k < 8; ++k) {
    const auto ni = static_cast<std::uint32_t>(at + neighbours[k][0] + neighbours[k][1] * w);
    if (done_[ni] != finished || !(dist_[ni] < best_d)) continue;
    if (k >= 4 && !(map_->passable(std::int64_t{from.x} + neighbours[k][0], from.y) &&
                    map_->passable(from.x, std::int64_t{from.y} + neighbours[k][1])))
      continue;
    const cell n = offset(from, k);
    if (counts.count(n) < cell_cap) best = n, best_d = dist_[ni];
  }
  return best;
}

}  // namespace scenert::nav
