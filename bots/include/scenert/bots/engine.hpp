#pragma once
/// The bots of `scenert bots`: real clients over real sockets (TCP or WebSocket), one event loop per
/// thread, playing a plan, keeping their views, measuring what they see, and checking their views
/// against the server's truth (the admin endpoint) at checkpoints and at the end.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <scenert/admin/server.hpp>
#include <scenert/bots/admin_client.hpp>
#include <scenert/bots/plan.hpp>
#include <scenert/bots/report.hpp>

namespace scenert::bots {

enum class bots_protocol : std::uint8_t { scenert, seed002 };

/// A rectangle on the ground plane, in world units: seed002 bots never step outside it.
struct walk_box {
  float x0 = 0, z0 = 0, x1 = 0, z1 = 0;
};

struct bots_options {
  std::vector<endpoint> targets;  ///< bot i connects to targets[i % size] (a cluster's gateways)
  bool ws = false;
  bots_protocol protocol = bots_protocol::scenert;
  std::optional<walk_box> box;  ///< seed002: required; scenert: the map's own bounds otherwise
  float step = 0;               ///< world units per move; 0 = 0.9 cell (scenert) or 0.5 (seed002)
  unsigned threads = 1;
  double move_hz = 10;
  double heartbeat_every = 1;             ///< seconds (scenert)
  std::vector<endpoint> admins;           ///< where the truth is read (--verify-views; a cluster's nodes)
  std::vector<scene_entry> scenes;        ///< the scenes bots travel to (from the admin's /scenes)
  std::uint32_t checkpoints = 0;          ///< views checked during the run, movement paused
  std::chrono::milliseconds settle{500};  ///< no view-changing frame for this long before reading the truth
  std::chrono::milliseconds login_timeout{10000};
  /// A bot its server drops (no goodbye, or shutting_down) connects to the next target and logs in
  /// with its resume token, as a client of a cluster whose gateway died would; it has login_timeout
  /// to get its player back.
  bool resume = false;
  /// Percent of the bots (0-100, chosen by the plan's seed) that misbehave, each in one seeded way
  /// (hostile.hpp); their outcomes are reported apart and their disconnects are no errors.
  double hostile = 0;
  bool progress = true;               ///< a line a second on stderr
  bool keep_request_samples = false;  ///< every answered request in the report (`--request-log`)
  /// Asked about every 100 ms during the run (on the caller's thread): true ends the run there, with
  /// its last view check and its report as at the planned end (`scenert bots` on SIGINT or SIGTERM).
  std::function<bool()> stop_early;
};

/// Plays `plan` against the server and reports; returns when the run is over and every bot closed.
[[nodiscard]] bots_report run_bots(const bots_options& o, const bots_plan& plan);

}  // namespace scenert::bots
