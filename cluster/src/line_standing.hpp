#pragma once
// Who stands on one view (a line, or one phase of a town line) of one generation, as its events said.
// A scene node keeps one per view for the gateways that missed a batch; a gateway keeps one per view
// it hears, to hand its front what changed when it reads a view again. One type, so that both count
// an event the same way.

#include <scenert/scene/line_event.hpp>
#include <scenert/scene/view_key.hpp>

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace scenert::cluster {

/// Thread-safety: none; its owner's lock.
class line_standing {
 public:
  /// Applies a tick's events: entered and moved stand (as entered, where they are), left are gone.
  void apply(std::span<const line_event> events);
  /// Everyone standing, as `entered` events.
  [[nodiscard]] std::vector<line_event> entered() const;
  /// Everyone standing, as `left` events (a view retired: nobody of it lingers).
  [[nodiscard]] std::vector<line_event> left() const;
  /// Takes `now` as who stands; returns the events that lead from before to it (left, entered, moved).
  [[nodiscard]] std::vector<line_event> replace(std::span<const line_event> now);
  /// Of those standing, players (not monsters).
  [[nodiscard]] std::uint32_t players() const noexcept { return players_; }
  [[nodiscard]] bool empty() const noexcept { return by_entity_.empty(); }
  /// Whether player `p` stands here.
  [[nodiscard]] bool holds(player_id p) const { return by_entity_.contains(p); }

 private:
  static std::uint64_t key_of(const line_event& e) noexcept { return entity_of(e); }
  std::unordered_map<std::uint64_t, line_event> by_entity_;
  std::uint32_t players_ = 0;
};

}  // namespace scenert::cluster
