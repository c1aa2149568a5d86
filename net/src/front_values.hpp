#pragma once
// The small values the front's parts pass each other: a line's batch of events, the view a player
// stands in, a player waiting for its resume.

#include <chrono>
#include <string>
#include <vector>

#include <scenert/scene/line_event.hpp>
#include <scenert/scene/view_key.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::net {

// One line's (or phase's) events of one tick.
struct line_batch {
  line_handle line;
  phase_id phase = 0;  // a phase of that town line (0: the line itself)
  std::vector<line_event> events;
  // Not 0: no events; the world says this player stands on this view still (front::on_stands_on).
  player_id stands = 0;
  std::vector<module_frame> frames{};  // a game module's frames of the tick, after the events
};

// Where a player stands, as its view's events said.
struct standing_line {
  line_handle line;
  phase_id phase = 0;
  [[nodiscard]] view_key key() const { return view_key::of(line, phase); }
};

// A player whose connection dropped, keeping its place until `until` for its resume token.
struct waiting {
  std::string name, token;
  placement place;
  bool placed = false;
  std::chrono::steady_clock::time_point until;
};

}  // namespace scenert::net
