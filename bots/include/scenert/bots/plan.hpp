#pragma once
/// The plan of `scenert bots`: when each bot connects, how long it stays, and what it does besides
/// walking, computed from the seed before the run, so the same seed gives the same plan. What a
/// step means at run time (which scene, which line) depends on the server's answers.

#include <array>
#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include <scenert/config/scene_table.hpp>  // enum_names

namespace scenert::bots {

/// What a bot does at one moment of its plan, besides walking and heartbeats.
enum class bot_action : std::uint8_t {
  chat,           ///< world chat (both protocols)
  enter_field,    ///< go to a field scene (the world's transfer): the server's policy picks the line
  enter_dungeon,  ///< the bot's party enters a dungeon together, in a private instance
  join_team,      ///< follow the party's leader to its line
  transfer,       ///< go to another town or field scene
  enter_phase,    ///< a phase of the town it stands in
  leave_phase,
  back_to_town,  ///< the town it landed in
  count_
};
inline constexpr std::size_t bot_action_count = static_cast<std::size_t>(bot_action::count_);
inline constexpr enum_names<bot_action> bot_action_names{"chat",        "enter_field", "enter_dungeon",
                                                         "join_team",   "transfer",    "enter_phase",
                                                         "leave_phase", "back_to_town"};
static_assert(detail::all_named(bot_action_names), "bot_action: name every value");

/// One planned action, due `at` after the run started; `pick` chooses among the candidates the
/// bot finds at run time (pick % count), so choices are planned too.
struct bot_step {
  std::chrono::nanoseconds at{};
  bot_action what = bot_action::chat;
  std::uint32_t pick = 0;
  std::uint64_t party = 0;  ///< enter_dungeon: the party's run (shared by its members)
};

/// One bot: arrives, stays until `leave` (the run's end or its session's), acts, walks.
struct bot_plan {
  std::chrono::nanoseconds arrive{}, leave{};
  std::uint64_t seed = 0;       ///< its own random walk
  std::uint32_t leader = 0;     ///< index of its party's leader (itself when it leads)
  std::vector<bot_step> steps;  ///< by time
};

/// What the plan is made from.
struct bots_plan_options {
  std::uint32_t clients = 100;
  double seconds = 10;
  double rate = 0;  ///< arrivals per second; 0 = all within the first quarter
  std::uint64_t seed = 1;
  double session_seconds = 0;  ///< mean session length (exponential); 0 = until the run ends
  double chat_every = 10;      ///< mean seconds between two chats of one bot; 0 = never
  double act_every = 5;        ///< mean seconds between two world requests of one bot; 0 = never
  /// Relative weights of the world requests (the chat entry is unused: chat_every sets it).
  std::array<double, bot_action_count> mix{0, 3, 2, 1, 1, 2, 1, 2};
  std::uint32_t party_size = 3;  ///< bots per party (consecutive indices)
};

struct bots_plan {
  std::vector<bot_plan> bots;
  std::chrono::nanoseconds length{};  ///< the run's: bots leaving then stay to the end
  double rate = 0;                    ///< arrivals per second, as planned
  std::uint64_t digest = 0;           ///< of everything above: same seed and options, same digest
};

[[nodiscard]] bots_plan make_bots_plan(const bots_plan_options& o);

}  // namespace scenert::bots
