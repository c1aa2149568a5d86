#pragma once
/// world: owns every scene definition's lines; places players on them. Requests come from any
/// thread, are applied on the world's own thread in large batches, and are answered through a
/// callback or a future with a result value.

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/runtime/service.hpp>
#include <scenert/runtime/unique_function.hpp>
#include <scenert/scene/fwd.hpp>
#include <scenert/scene/grid/types.hpp>
#include <scenert/scene/line_directory.hpp>
#include <scenert/scene/line_event.hpp>
#include <scenert/scene/world_port.hpp>

namespace scenert::grid {
class map_data;
}
namespace scenert::nav {
class nav_map;
}

namespace scenert {

/// Where a request put the player.
struct placement {
  line_handle line{};
  scene_id space = 0;  ///< phase requests: the space of the phase entered (0: the line itself)
  phase_id phase = 0;  ///< phase requests: the phase entered on the line (0: the line itself)
};

/// The answer to a request: Ok{line} or an error with a message naming the player and the line.
using world_result = result<placement, world_errc>;

/// One request to the world. Build it with the named constructors.
struct world_request {
  enum class kind : std::uint8_t {
    enter,
    enter_line,
    leave,
    transfer,
    transfer_line,
    join_team,
    move,
    enter_phase,
    leave_phase,
    enter_instance,
    leave_party,
    message
  };
  kind what = kind::enter;
  player_id player = 0;
  scene_id scene = 0;     ///< enter, transfer, enter_instance; enter_phase: the space
  line_handle line{};     ///< enter_line, transfer_line (generation 0: the line open now under that number)
  player_id mate = 0;     ///< join_team
  grid::cell_point to{};  ///< move
  party_id party = 0;     ///< enter_instance (0: alone)
  phase_id phase = 0;     ///< move_on: the phase of `line` (0: the line itself)
  std::uint32_t opcode = 0;  ///< message: the module's opcode (from 2000 up)
  /// message: its payload, opaque to scenert (out of line: the world's inbox streams requests).
  std::shared_ptr<const std::string> bytes{};

  /// Enter a scene on a line chosen by its policy (soft capacity).
  static world_request enter(player_id p, scene_id s) { return {kind::enter, p, s, {}, 0, {}, 0}; }
  /// Enter a given line (soft capacity).
  static world_request enter_line(player_id p, line_handle l) {
    return {kind::enter_line, p, 0, l, 0, {}, 0};
  }
  /// Leave the world.
  static world_request leave(player_id p) { return {kind::leave, p, 0, {}, 0, {}, 0}; }
  /// Move to another scene (soft capacity), switching on the way.
  static world_request transfer(player_id p, scene_id s) { return {kind::transfer, p, s, {}, 0, {}, 0}; }
  /// Move to a given line (another line of the same scene, or of another scene).
  static world_request transfer_line(player_id p, line_handle l) {
    return {kind::transfer_line, p, 0, l, 0, {}, 0};
  }
  /// Go to a team-mate's line, up to its hard capacity (enters when the player is nowhere).
  static world_request join_team(player_id p, player_id mate) {
    return {kind::join_team, p, 0, {}, mate, {}, 0};
  }
  /// Walk to a cell of the player's scene (an AOI move).
  static world_request move(player_id p, grid::cell_point to) { return {kind::move, p, 0, {}, 0, to, 0}; }
  /// A move meant for a line and phase (where the client saw itself): refused (stale_line) when the
  /// player stands on another line by then, dropped by the line when it is in another phase; never
  /// walked where the client did not mean it. Through to_line (a front's way) the line checks both.
  static world_request move_on(player_id p, line_handle line, phase_id phase, grid::cell_point to) {
    return {kind::move, p, 0, line, 0, to, 0, phase};
  }
  /// Go into a new phase of a space bound to the player's town (a private copy of that town).
  static world_request enter_phase(player_id p, scene_id space) {
    return {kind::enter_phase, p, space, {}, 0, {}, 0};
  }
  /// Come back from the phase to the town line, where the player stood in the phase.
  static world_request leave_phase(player_id p) { return {kind::leave_phase, p, 0, {}, 0, {}, 0}; }
  /// Enter a dungeon with a party (seed 004's doEnterCopyScene with needTeam): by the scene's
  /// `instances`, the party's own instance (opened for its first member, joined by the others up
  /// to hard capacity), or a shared line. From a line, the player switches; from nowhere, it enters.
  static world_request enter_instance(player_id p, scene_id s, party_id party) {
    return {kind::enter_instance, p, s, {}, 0, {}, party};
  }
  /// enter_instance for a player from nowhere here that stood in scene `came_from` elsewhere (handed
  /// over from another node): that scene is its way home when it leaves the party.
  static world_request enter_instance_from(player_id p, scene_id s, party_id party, scene_id came_from) {
    return {kind::enter_instance, p, s, {came_from, 0, 0}, 0, {}, party};
  }
  /// The player left its party: off the party's instance, back to the scene it came from (or the
  /// table's first town when it came from nowhere).
  static world_request leave_party(player_id p) { return {kind::leave_party, p, 0, {}, 0, {}, 0}; }
  /// A client's message to the game module of `line` (where the client saw itself), applied on that
  /// line in the order the player's messages and moves came; stale_line when it stands elsewhere now.
  static world_request message(player_id p, line_handle line, std::uint32_t opcode, std::string bytes) {
    return {kind::message,
            p,
            0,
            line,
            0,
            {},
            0,
            0,
            opcode,
            std::make_shared<const std::string>(std::move(bytes))};
  }
};

/// One live line at the last snapshot.
struct line_snapshot {
  std::uint32_t line = 0;
  std::uint32_t generation = 0;
  line_state state = line_state::open;
  std::uint32_t players = 0;
  party_id owner = 0;  ///< the party of a private instance (0: shared)
};

/// One scene definition at the last snapshot.
struct scene_snapshot {
  const scene_def* def = nullptr;
  std::vector<line_snapshot> lines;  ///< live lines (open, quarantined, closing), by line id
  std::uint32_t open_lines = 0;
  std::uint32_t players = 0;
  std::uint64_t lines_opened = 0, lines_closed = 0;
  std::uint64_t line_full = 0;            ///< line_full answers
  std::uint64_t line_full_at_max = 0;     ///< of those, answered because max_lines were open
  std::uint32_t open_private = 0;         ///< open lines that are a party's private instance
  std::uint64_t opened_private = 0;       ///< private instances opened
  std::uint64_t quarantined = 0;          ///< lines quarantined
  std::uint64_t evicted = 0;              ///< players moved out of a failed line that found no other line
  std::uint64_t overruns = 0;             ///< member ticks over budget (grouped scenes)
  std::vector<std::string> overrunning;   ///< names of lines with overruns ("name#id line 3: 5")
  std::uint32_t max_players_on_line = 0;  ///< highest player count seen on one line
};

/// The whole world at one instant of its thread.
struct world_snapshot {
  time_point at{};
  std::vector<scene_snapshot> scenes;  ///< one per non-space scene definition, table order
  std::size_t players = 0;             ///< players placed or switching
  std::size_t group_services = 0;      ///< scene groups in the pool
  std::uint64_t requests = 0;          ///< requests answered
  std::uint64_t errors = 0;            ///< requests answered with an error
  std::uint64_t busy_ns = 0;           ///< CPU time the world's thread spent applying its inbox
  /// Client moves and module messages meant for a line the player no longer stood on (or an opening of
  /// it that closed), dropped by the world or by the line (to_line).
  std::uint64_t stale_posts = 0;
  bool shutting_down = false;
  bool shut_down = false;  ///< every line closed after shutdown()
};

/// Each map's static data and its monsters' passability (JPS's tables among it), built once and
/// shared by every line of the map. Building them takes a while on large maps (a second or more
/// for 1024x1024 in a debug build): a cluster node builds them before it joins, since its join
/// starts the other nodes' watch of its beats.
struct world_maps {
  struct shared_map {
    std::shared_ptr<const grid::map_data> data;
    std::shared_ptr<const nav::nav_map> nav;
  };
  std::unordered_map<map_id, shared_map> by_id;

  /// Every map of `table` (which must be valid).
  [[nodiscard]] static std::shared_ptr<const world_maps> build(const scene_table& table);
};

struct world_options {
  double hz = 100;  ///< the world's own tick rate: each tick applies everything queued since the last
  std::uint32_t line_pool = 64;  ///< closed line objects kept per scene for reuse
  nanoseconds snapshot_period = std::chrono::milliseconds(100);  ///< how often snapshot() is refreshed
  /// Called once per new line object, before its on_init: add modules (e.g. a town's phases).
  std::function<void(scene&)> on_new_line;
  /// A player whose failed line could not be replaced by another line (sent to the gateway).
  std::function<void(player_id, line_handle from, std::string_view reason)> on_evicted;
  /// Each line's (or phase's: `phase` != 0 on that town line) events of a tick (players entered, left,
  /// moved), called on the line's thread: hand them to another thread (the network front), keep it
  /// short. Empty: lines and phases collect none.
  std::function<void(line_handle, phase_id, std::span<const line_event>)> on_line_events;
  /// Each line's game-module frames of a tick, after its events, on the line's thread (as above).
  std::function<void(line_handle, std::span<const module_frame>)> on_module_frames;
  /// Null: the in-process directory.
  std::shared_ptr<line_directory> directory;
  /// The table's maps built beforehand (world_maps::build of the same table). Null: built by create().
  std::shared_ptr<const world_maps> maps;
};

/// Thread-safety: submit, the request helpers, shutdown, snapshot and query from any thread.
/// Lifetime: keep the world alive until its pool stopped (scenes and callbacks point back to it).
class world final : public service, public world_port {
 public:
  /// A world over `table` (which must outlive it) hosting its lines on `pool`.
  static std::shared_ptr<world> create(const scene_table& table, processor_pool& pool,
                                       world_options options = {});
  ~world() override;

  /// Adds the world to its pool; min_lines of every scene open on its first activation.
  void start();

  /// Queues a request; `reply` (may be empty) is called once with the answer, on the world's thread.
  void submit(const world_request& request, world_reply reply) override;
  /// A move_on or message posted straight to its line (see world_port::to_line); other requests are
  /// submitted. Dropped (stale_line, counted in world_snapshot::stale_posts) when that opening of the
  /// line is not live.
  void to_line(const world_request& request, world_reply reply) override;
  /// Queues a request; the future gets the answer.
  [[nodiscard]] std::future<world_result> submit(const world_request& request);

  /// Stops taking requests, takes every player off (their pending requests answer shutting_down),
  /// closes every line (each on_inactive once) and the groups, then calls `done` (world thread).
  void shutdown(unique_function<void()> done);
  /// shutdown() with a future.
  [[nodiscard]] std::future<void> shutdown();

  /// The last published snapshot (refreshed every snapshot_period and on shutdown). Never null.
  [[nodiscard]] std::shared_ptr<const world_snapshot> snapshot() const;
  /// Runs `fn` on the world's thread between two batches, with its directory (consistent view).
  void query(unique_function<void(const line_directory&)> fn);
  /// Where a player is, read on the world's thread.
  [[nodiscard]] std::future<location> locate(player_id player);

  /// The scene object running a live line (world thread only; for queries and tests).
  [[nodiscard]] std::shared_ptr<scene> line_object(line_handle line) const;

  struct impl;

 protected:
  void on_active() override;
  void on_tick(const tick_context& ctx) override;

 private:
  world(const scene_table& table, processor_pool& pool, world_options options);
  std::unique_ptr<impl> impl_;
  std::weak_ptr<world> self_;
};

}  // namespace scenert
