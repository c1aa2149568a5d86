#pragma once
/// The simulated players of `scenert loadtest`: every request of a run, computed from the seed
/// before the run starts, so the request sequence never depends on timing or on the answers.

#include <chrono>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/scene/fwd.hpp>

namespace scenert::loadtest {

/// What a simulated player does at one moment of its plan.
enum class step_kind : std::uint8_t {
  enter,
  move,
  transfer,
  join_team,
  enter_instance,
  enter_phase,
  leave_phase,
  leave,
  count_
};

/// How many step kinds there are (for per-kind counters).
inline constexpr std::size_t step_kind_count = static_cast<std::size_t>(step_kind::count_);
/// Their names, as in the report.
inline constexpr enum_names<step_kind> step_kind_names{
    "enter", "move", "transfer", "join_team", "enter_instance", "enter_phase", "leave_phase", "leave"};
static_assert(detail::all_named(step_kind_names), "step_kind: name every value");

/// Name of a step kind, as in the report ("enter", "join_team", ...).
[[nodiscard]] std::string_view to_string(step_kind k) noexcept;

/// One request of the plan, due `at` after the run started.
struct plan_step {
  std::chrono::nanoseconds at{};
  player_id player = 0;
  step_kind what = step_kind::enter;
  scene_id scene = 0;          ///< enter, transfer, enter_phase
  player_id mate = 0;          ///< join_team: the party leader
  party_id party = 0;          ///< enter_instance: the party (one per dungeon run)
  std::uint32_t x = 0, y = 0;  ///< move: the target cell
};

/// What the plan is made from.
struct plan_options {
  std::uint32_t players = 1000;
  double seconds = 10;
  double rate = 0;  ///< arrivals per second; 0 = all players arrive within the first quarter
  std::uint64_t seed = 1;
  double move_period = 1.0;  ///< mean seconds between two walks of one player
  bool phases = false;       ///< plan enter_phase / leave_phase steps (when the world hosts phases)
};

/// Every request of a run, in issue order (by due time, ties in the order they were planned).
struct load_plan {
  std::vector<plan_step> steps;
  std::uint32_t players = 0;
  double rate = 0;                               ///< arrivals per second actually used
  std::uint64_t counts[step_kind_count]{};       ///< steps per kind
  std::uint64_t digest = 0;                      ///< FNV-1a over every step: equal plans, equal digests
  std::map<scene_id, std::uint64_t> party_runs;  ///< dungeon runs planned into private instances, per scene
};

/// Plans a run on `table`: players arrive at the rate, enter a town or a field, walk, form parties
/// that enter dungeons together (into a private instance where the dungeon has them: every member
/// asks for the party's instance; else the leader transfers and the mates join it), change scenes,
/// and leave
/// (or stay online past the end). One RNG seeded with `seed` makes every decision.
[[nodiscard]] load_plan make_plan(const scene_table& table, const plan_options& options);

}  // namespace scenert::loadtest
