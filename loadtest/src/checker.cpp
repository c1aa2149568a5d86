#include <scenert/loadtest/checker.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace scenert::loadtest {
namespace {

const char* state_name(location::state s) {
  switch (s) {
    case location::state::none:
      return "nowhere";
    case location::state::in_line:
      return "on a line";
    case location::state::switching:
      return "switching";
  }
  return "?";
}

}  // namespace

invariant_checker::invariant_checker(const scene_table& table) : table_(table) {
  for (const auto& d : table.scenes)
    if (d.kind != scene_kind::space) scenes_.push_back({&d, 0, 0});
}

void invariant_checker::add_violation(std::string message) {
  ++violations_;
  if (messages_.size() < max_messages) messages_.push_back(std::move(message));
}

void invariant_checker::check(const line_directory& dir, const std::vector<std::uint8_t>& online) {
  ++checks_;
  seen_.assign(online.size(), 0);
  strangers_ = 0;
  for (auto& w : scenes_) check_lines(dir, w);
  check_players(dir, online);
}

void invariant_checker::check_lines(const line_directory& dir, scene_watch& w) {
  const scene_def& d = *w.def;
  const auto counts = dir.counts(d.id);
  w.max_open_lines = std::max(w.max_open_lines, counts.open);
  if (counts.open < d.min_lines || counts.live > d.max_lines)
    add_violation(fmt::format("scene {} ({}): {} open / {} live lines, outside min_lines {} .. max_lines {}",
                              d.id, d.name, counts.open, counts.live, d.min_lines, d.max_lines));
  const std::uint32_t hard = std::max(d.capacity, d.hard_capacity);
  dir.for_each_line(d.id, [&](const line_info& line) {
    w.max_players_on_line = std::max(w.max_players_on_line, line.players);
    if (line.players > hard)
      add_violation(fmt::format("scene {} line {}: {} players, above hard capacity {}", d.id,
                                line.handle.line, line.players, hard));
    if (d.kind == scene_kind::town) check_phases(dir, w, line);
    for (player_id p : dir.players(line.handle)) {
      if (p == 0 || p > seen_.size())
        ++strangers_;
      else
        ++seen_[p - 1];
    }
  });
}

void invariant_checker::check_phases(const line_directory& dir, scene_watch& w, const line_info& line) {
  std::map<std::pair<scene_id, std::uint32_t>, std::uint32_t> phases;  // (space, phase) -> players
  for (player_id p : dir.players(line.handle)) {
    const location loc = dir.locate(p);
    if (loc.where == location::state::in_line && loc.line == line.handle && loc.phase != 0)
      ++phases[{loc.space, loc.phase}];
  }
  w.max_phases_on_line = std::max(w.max_phases_on_line, static_cast<std::uint32_t>(phases.size()));
  std::map<scene_id, std::uint32_t> per_space;
  for (const auto& entry : phases) ++per_space[entry.first.first];
  for (const auto& [space, running] : per_space) {
    const scene_def* def = table_.find_scene(space);
    if (!def || !def->space || def->space->bind_town != w.def->id)
      add_violation(
          fmt::format("scene {} line {}: players in a phase of {}, which is not a space of this town",
                      w.def->id, line.handle.line, space));
    else if (def->space->max_spaces != 0 && running > def->space->max_spaces)
      add_violation(fmt::format("scene {} line {}: {} phases of space {} running, above max_spaces {}",
                                w.def->id, line.handle.line, running, space, def->space->max_spaces));
  }
}

void invariant_checker::check_players(const line_directory& dir, const std::vector<std::uint8_t>& online) {
  std::size_t placed = 0;
  for (std::size_t i = 0; i < online.size(); ++i) {
    const player_id p = i + 1;
    const location loc = dir.locate(p);
    const std::uint32_t expected = loc.where == location::state::none      ? 0
                                   : loc.where == location::state::in_line ? 1
                                                                           : 2;
    placed += online[i];
    if (online[i] && loc.where == location::state::none)
      add_violation(fmt::format("player {}: lost (entered, never left, but in no scene)", p));
    else if (!online[i] && loc.where != location::state::none)
      add_violation(
          fmt::format("player {}: {} although no answer placed it (or it left)", p, state_name(loc.where)));
    if (seen_[i] != expected)
      add_violation(fmt::format("player {}: {} but listed on {} lines (duplicated or lost)", p,
                                state_name(loc.where), seen_[i]));
  }
  if (strangers_ != 0) add_violation(fmt::format("{} unknown players on lines", strangers_));
  if (dir.player_count() != placed)
    add_violation(
        fmt::format("the directory holds {} players, the answers placed {}", dir.player_count(), placed));
}

void invariant_checker::check_closed(const world_snapshot& last) {
  ++checks_;
  if (!last.shut_down) add_violation("the world did not finish its shutdown");
  for (const auto& s : last.scenes)
    if (s.open_lines != 0)
      add_violation(fmt::format("scene {} ({}): {} lines still open after shutdown", s.def->id, s.def->name,
                                s.open_lines));
}

}  // namespace scenert::loadtest
