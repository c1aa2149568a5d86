#pragma once
// player_book: what every I/O thread of the front may read of any player — its name and the position
// its client last asked for — for the frames that tell its viewers about it, whichever thread owns
// their connections. Striped locks: the owner writes an asked position per accepted move, every thread reads
// one card per event it encodes.

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include <scenert/net/messages.hpp>
#include <scenert/scene/grid/types.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::net {

/// The position a client asked for (a move the front accepted), and the cell it was in: its viewers
/// hear that position while the player stands in that cell.
struct asked_position {
  grid::cell_point cell{};
  position at;
};

// Thread-safety: any thread; a stripe's mutex guards its cards, another the list of the gone.
class player_book {
 public:
  using clock = std::chrono::steady_clock;
  struct card {
    std::string name;
    std::optional<asked_position> asked;
  };
  /// How long a player's card outlives its leaving: its line's last events may still be on their
  /// way to the other threads' mirrors, and their frames name it.
  static constexpr std::chrono::seconds grace{30};

  void admit(player_id p, std::string name);
  void ask(player_id p, const asked_position& asked);
  void forget_asked(player_id p);
  /// The player left the world: its card goes `grace` after `now`.
  void gone(player_id p, clock::time_point now);
  /// Forgets the cards of players gone for longer than `grace`.
  void forget_gone(clock::time_point now);
  /// A copy of the card, when the player is known.
  [[nodiscard]] std::optional<card> card_of(player_id p) const;
  [[nodiscard]] std::size_t size() const;

 private:
  static constexpr std::size_t stripes = 16;
  struct stripe {
    mutable std::mutex m;
    std::unordered_map<player_id, card> cards;
  };
  stripe& of(player_id p) { return stripes_[p % stripes]; }
  const stripe& of(player_id p) const { return stripes_[p % stripes]; }
  std::array<stripe, stripes> stripes_;
  std::mutex gone_mutex_;
  std::deque<std::pair<clock::time_point, player_id>> gone_;  // in the order they left
};

}  // namespace scenert::net
