// The fight itself: the boss's phases by health, its walk along nav/'s searched paths, its adds'
// steering, its strikes, and its death (the chest). All on the line's thread, from the module's
// timers and from attacks.
#include <dungeon/crypt_boss.hpp>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "cells.hpp"

namespace dungeon {

namespace {

using detail::cells_apart;

using scenert::grid::cell_point;

scenert::nav::cell to_nav(cell_point p) { return {p.x, p.y}; }
cell_point to_grid(scenert::nav::cell p) { return {p.x, p.y}; }

std::uint16_t code(boss_phase p) { return static_cast<std::uint16_t>(p); }

}  // namespace

void crypt_boss::arm_timers(scenert::module_context& c) {
  for (const auto t : timers_) (void)c.cancel(t);
  timers_.clear();
  // Enraged, the boss walks and strikes twice as often.
  const int pace = phase_ == boss_phase::enraged ? 2 : 1;
  timers_.push_back(c.every(params_.boss_step / pace, [this](scenert::module_context& m) { walk_boss(m); }));
  timers_.push_back(c.every(params_.strike_every / pace, [this](scenert::module_context& m) { strike(m); }));
  timers_.push_back(c.every(params_.add_step, [this](scenert::module_context& m) { steer_adds(m); }));
}

void crypt_boss::hurt(scenert::module_context& c, scenert::player_id p, scenert::monster_id target,
                      std::int32_t damage) {
  auto look = c.look(target);
  if (!look) return;
  look->health = std::max(0, look->health - damage);
  (void)c.set_look(target, *look);
  c.send_to_viewers(target, hit_opcode, encode(hit{p, target, damage, look->health}));
  if (boss_ && target == *boss_) {
    if (look->health == 0) return boss_died(c);
    return advance_phase(c, look->health);
  }
  if (look->health > 0) return;
  (void)c.remove(target);
  std::erase_if(adds_, [&](const add_state& a) { return a.id == target; });
  ++stats_.adds_killed;
}

// A hit may cross both thresholds at once: the phases are still entered in order.
void crypt_boss::advance_phase(scenert::module_context& c, std::int32_t health) {
  const double share = static_cast<double>(health) / params_.boss_health;
  if (phase_ == boss_phase::alone && share <= params_.adds_at) enter_phase(c, boss_phase::adds);
  if (phase_ == boss_phase::adds && share <= params_.enrage_at) enter_phase(c, boss_phase::enraged);
}

void crypt_boss::enter_phase(scenert::module_context& c, boss_phase next) {
  phase_ = next;
  stats_.phases.push_back(next);
  auto look = c.look(*boss_);
  look->state = code(next);
  (void)c.set_look(*boss_, *look);
  std::string payload;
  put(payload, *boss_, 8);
  put(payload, code(next), 1);
  c.send_to_line(phase_opcode, payload);
  if (next == boss_phase::adds) summon_adds(c);
  if (next == boss_phase::enraged) arm_timers(c);
}

// Adds come on the free cells nearest the boss, ring by ring.
void crypt_boss::summon_adds(scenert::module_context& c) {
  const auto at = c.where_entity(*boss_);
  const auto& nav = *c.nav();
  const scenert::entity_look look{static_cast<std::uint16_t>(kind::add), 0, params_.add_health};
  for (int ring = 1; ring <= 4 && adds_.size() < params_.adds; ++ring) {
    for (int dy = -ring; dy <= ring && adds_.size() < params_.adds; ++dy) {
      for (int dx = -ring; dx <= ring && adds_.size() < params_.adds; ++dx) {
        if (std::max(std::abs(dx), std::abs(dy)) != ring) continue;
        const auto x = static_cast<std::int64_t>(at->x) + dx, y = static_cast<std::int64_t>(at->y) + dy;
        if (!nav.passable(x, y)) continue;
        const cell_point cell{static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)};
        if (auto add = c.spawn({cell, look, false}))
          adds_.push_back({*add, {to_nav(cell), to_nav(cell), false}});
      }
    }
  }
}

void crypt_boss::boss_died(scenert::module_context& c) {
  const auto at = *c.where_entity(*boss_);
  (void)c.remove(*boss_);
  boss_.reset();
  ++stats_.kills;
  for (const auto t : timers_) (void)c.cancel(t);
  timers_.clear();
  for (const auto& a : adds_) (void)c.remove(a.id);  // the adds fall with their master
  adds_.clear();
  const scenert::entity_look closed{static_cast<std::uint16_t>(kind::chest),
                                    static_cast<std::uint16_t>(chest_state::closed), 0};
  chest_ = c.spawn({at, closed, false});
  if (!chest_) return;
  std::string payload;
  put(payload, *chest_, 8);
  c.send_to_line(chest_opcode, payload);
}

std::optional<cell_point> crypt_boss::nearest_player(scenert::module_context& c, cell_point from) const {
  std::optional<cell_point> best;
  std::uint32_t best_apart = std::numeric_limits<std::uint32_t>::max();
  for (const auto p : c.players()) {
    const auto at = c.where(p);
    if (!at) continue;
    const auto apart = cells_apart(from, *at);
    // Ties go to the lower cell, not to the set's order: the walk replays.
    if (apart < best_apart || (apart == best_apart && std::pair(at->y, at->x) < std::pair(best->y, best->x)))
      best = at, best_apart = apart;
  }
  return best;
}

// The boss follows a path searched on the map (jump point search), searched again only when its
// target moved off the path's end or a step failed; it stops next to its target.
void crypt_boss::walk_boss(scenert::module_context& c) {
  if (!boss_) return;
  const auto from = *c.where_entity(*boss_);
  const auto target = nearest_player(c, from);
  if (!target || cells_apart(from, *target) <= 1) return;
  if (path_.empty() || to_grid(path_.back()) != *target || next_ >= path_.size() ||
      cells_apart(to_grid(path_[next_]), from) > 1) {
    ++stats_.searches;
    const auto found =
        search_.find(*c.nav(), to_nav(from), to_nav(*target), scenert::nav::algorithm::jps, path_);
    next_ = 1;
    if (found.status != scenert::nav::search_status::found) return path_.clear();
  }
  if (next_ + 1 >= path_.size()) return;  // the next step is the target's own cell
  if (c.move(*boss_, to_grid(path_[next_])))
    ++next_;
  else
    path_.clear();
}

// Each add steps toward the player nearest it, at most one add on a cell, never onto a player.
void crypt_boss::steer_adds(scenert::module_context& c) {
  const scenert::nav::steer_rules rules{40, 1};
  auto crowd = [&](scenert::nav::cell at) -> std::uint32_t {
    return static_cast<std::uint32_t>(std::count_if(
        adds_.begin(), adds_.end(), [&](const add_state& a) { return a.steer.position == at; }));
  };
  const scenert::nav::cell_counter counts(crowd);
  for (auto& add : adds_) {
    const auto target = nearest_player(c, to_grid(add.steer.position));
    if (!target || cells_apart(to_grid(add.steer.position), *target) <= 1) continue;
    const auto before = add.steer.position;
    const auto step = scenert::nav::steer(*c.nav(), add.steer, to_nav(*target), rules, counts);
    if (step != scenert::nav::steer_result::moved && step != scenert::nav::steer_result::leashed) continue;
    if (to_grid(add.steer.position) == *target || !c.move(add.id, to_grid(add.steer.position))) {
      add.steer.position = before;
      continue;
    }
    ++stats_.add_steps;
  }
}

void crypt_boss::strike(scenert::module_context& c) {
  if (!boss_) return;
  const auto from = *c.where_entity(*boss_);
  auto party = c.players();
  std::sort(party.begin(), party.end());
  for (const auto p : party) {
    const auto at = c.where(p);
    if (!at || cells_apart(from, *at) > 1) continue;
    std::string payload;
    put(payload, *boss_, 8);
    put(payload, p, 8);
    put(payload, static_cast<std::uint32_t>(params_.strike_damage), 4);
    c.send_to_viewers(*boss_, strike_opcode, payload);
    ++stats_.strikes;
    return;
  }
}

}  // namespace dungeon
