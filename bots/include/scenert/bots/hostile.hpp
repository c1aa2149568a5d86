#pragma once
/// Hostile bots (`scenert bots --hostile P`): P percent of the plan's bots misbehave, each in one
/// seeded way, so that a run shows what the server does with them (it cuts each with its reason,
/// or answers it harmlessly) while the other bots' figures are measured apart.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/bots/plan.hpp>

namespace scenert::bots {

/// How a hostile bot misbehaves.
enum class hostile_kind : std::uint8_t {
  garbage,        ///< random bytes from the first one
  oversize,       ///< a header announcing a payload far over any limit
  lying_length,   ///< headers whose lengths are too short for their ids' payloads
  half_frame,     ///< logs in, sends half a frame, then nothing
  flood,          ///< logs in, then moves, chats, requests and heartbeats far past the rate limits
  never_reading,  ///< logs in and never reads what the server sends (a tiny receive buffer)
  slow_login,     ///< trickles its login a byte at a time
  guessed_token,  ///< logs in with a resume token it made up
  module_junk,    ///< logs in, then sends game-module messages of unknown ids and over the size limit
  count_
};
inline constexpr std::size_t hostile_kind_count = static_cast<std::size_t>(hostile_kind::count_);
inline constexpr std::string_view hostile_kind_names[] = {"garbage",    "oversize",      "lying_length",
                                                          "half_frame", "flood",         "never_reading",
                                                          "slow_login", "guessed_token", "module_junk"};
static_assert(std::size(hostile_kind_names) == hostile_kind_count, "hostile_kind: name every kind");

/// Which of the plan's bots misbehave and how: round(size * percent / 100) of them, chosen by a
/// shuffle seeded from the plan's digest, their kinds dealt in turn from a seeded start (so a run
/// of at least hostile_kind_count hostile bots has every kind). Same plan and percent, same picks.
[[nodiscard]] std::vector<std::optional<hostile_kind>> pick_hostile(const bots_plan& plan, double percent);

/// How one kind's bots ended.
struct hostile_outcomes {
  std::uint64_t bots = 0;
  /// By ending: "cut" (the server closed it, with or without a goodbye), "answered" (the server
  /// served it harmlessly: a fresh login, 1012 refusals), "open at the end" (neither, when the run
  /// ended), "not started" (its arrival came after the run's end).
  std::map<std::string, std::uint64_t> endings;
  /// By the server's reason as the bot saw it: the goodbye's reason, "no goodbye" for a close
  /// without one, or what answered it ("login_ok afresh", "1012 too_large", ...).
  std::map<std::string, std::uint64_t> reasons;
  std::uint64_t unexpected = 0;  ///< endings the server should not allow (a flood served to the end)
};

/// The hostile bots of a run, apart from the well-behaved ones.
struct hostile_report {
  double percent = 0;
  std::uint64_t bots = 0;
  std::map<std::string, hostile_outcomes> by_kind;  ///< by hostile_kind_names
  std::vector<std::string> unexpected_examples;
  [[nodiscard]] std::uint64_t unexpected() const noexcept {
    std::uint64_t n = 0;
    for (const auto& [kind, o] : by_kind) n += o.unexpected;
    return n;
  }
};

}  // namespace scenert::bots
