#pragma once
/// `scenert bots --play NAME`: parties of bots that play a game's dungeon through its registered
/// party script (party_script.hpp): each bot logs in by name, the party enters a private instance
/// of the dungeon together, its script fights, the bots hear their loot (1013), log in again and find
/// it in their accounts (1014). The report counts what the parties did and names each failure.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <scenert/bots/admin_client.hpp>  // endpoint
#include <scenert/bots/latency_histogram.hpp>
#include <scenert/bots/party_script.hpp>

namespace scenert::bots {

/// What a play run is asked to do.
struct party_play_options {
  endpoint target;  ///< the server's TCP listener
  std::string script_name;
  const party_script_factory* script = nullptr;
  std::uint32_t scene = 0;  ///< the dungeon scene the parties enter (enter_instance)
  std::uint32_t parties = 1;
  std::uint32_t party_size = 3;
  std::uint64_t seed = 1;  ///< names the bots' accounts and parties (a run with another seed starts afresh)
  std::chrono::milliseconds deadline{60'000};  ///< a party not through by then failed
  double move_hz = 10;
  /// A member done waits until a grant came and none for this long before it logs in again...
  std::chrono::milliseconds loot_quiet{500};
  /// ... or, with no grant heard, this long after it was done.
  std::chrono::milliseconds loot_wait{5000};
  bool progress = true;  ///< a line a second on stderr
};

/// A party's boss phases as its members hear them: each in the order the party first heard it, and
/// again when a member hears an earlier phase after a later one (the boss went back). Members read
/// the same frames at their own pace, so one that is behind adds nothing.
struct party_phases {
  std::vector<std::uint32_t> order;
  /// `member_last`: the latest phase that member heard (0 before the first), kept by the member.
  void heard(std::uint32_t& member_last, std::uint32_t phase) {
    const bool went_back = phase < member_last;
    member_last = std::max(member_last, phase);
    if (went_back || std::find(order.begin(), order.end(), phase) == order.end()) order.push_back(phase);
  }
};

/// What the parties did.
struct party_play_report {
  std::string target, script;
  std::uint32_t scene = 0, parties = 0, party_size = 0;
  std::uint64_t seed = 0;
  double wall_seconds = 0;
  std::uint32_t parties_through = 0;  ///< fought, looted and found their loot again
  std::uint32_t parties_failed = 0;
  std::uint64_t kills = 0, chests_opened = 0;
  /// Phases each party saw, in the order seen ("2,3") -> parties.
  std::map<std::string, std::uint32_t> phase_orders;
  std::uint32_t phases_in_order = 0;             ///< parties whose phases rose one by one from the first
  std::uint64_t grants = 0, items_granted = 0;   ///< 1013 frames, and the counts they carried
  std::uint64_t items_found = 0;                 ///< of those, held by the accounts after logging in again
  std::uint64_t items_missing = 0;               ///< granted but not held after logging in again
  std::map<std::string, std::uint64_t> refused;  ///< module messages refused (1012), by code
  std::uint64_t module_messages = 0;
  latency_histogram fight;  ///< a party's entry to its first chest opened
  std::uint64_t errors = 0;
  std::vector<std::string> error_examples;
};

/// Plays until every party is through or failed (or the deadline); returns when every bot closed.
[[nodiscard]] party_play_report run_party_play(const party_play_options& o);

/// The summary printed at the end of a play run.
[[nodiscard]] std::string party_play_text(const party_play_report& r);
/// The JSON report of a play run (`--report FILE`).
[[nodiscard]] std::string party_play_json(const party_play_report& r);

}  // namespace scenert::bots
