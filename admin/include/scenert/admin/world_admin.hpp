#pragma once
/// What the admin endpoint of `scenert run` answers about a world: Prometheus families per scene,
/// the /scenes and /lines/SCENE/LINE documents, and the /healthz verdict.

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/net/front.hpp>
#include <scenert/runtime/metrics.hpp>
#include <scenert/scene/world.hpp>

#include <scenert/admin/prometheus_text.hpp>
#include <scenert/admin/server.hpp>

namespace scenert::admin {

/// Appends the world's families (scenert_world_*, and scenert_scene_* labelled by scene id and kind).
void render_world_metrics(prometheus_text& out, const world_snapshot& s);

/// One running phase of a town line, as the world's directory sees it.
struct running_phase {
  scene_id space = 0;
  phase_id phase = 0;  ///< the phase it is in on its line (0: none)
  std::uint32_t players = 0;
};
/// Running phases (those with players) per town line: (scene id, line id) -> phases.
using phase_census = std::map<std::pair<scene_id, std::uint32_t>, std::vector<running_phase>>;

/// Counts the running phases of every town line; on the world's thread (inside world::query).
[[nodiscard]] phase_census take_phase_census(const scene_table& table, const line_directory& dir);

/// Client connections per line: (scene id, line id) -> connections.
using connection_census = std::map<std::pair<scene_id, std::uint32_t>, std::uint32_t>;
/// The front's connections per line, for /scenes.
[[nodiscard]] connection_census take_connection_census(const net::front& door);

/// The /scenes document: per scene definition its kind, structure, capacities, open lines with
/// their players, (towns) running phases and (with a front) client connections, its phase
/// definitions, and the world's group services.
[[nodiscard]] std::string scenes_json(const scene_table& table, const world_snapshot& s,
                                      const phase_census& phases = {},
                                      const connection_census* connections = nullptr);

/// The /healthz verdict and, when unhealthy, why.
struct health {
  bool ok = true;
  std::string reason;  ///< "ok", or each problem on its own line
};

/// Healthy while a pool worker finished work within `progress_limit` and no tick is stalled.
[[nodiscard]] health judge_health(const pool_metrics& m, std::chrono::nanoseconds progress_limit);

/// Appends the network front's families (scenert_net_*).
void render_front_metrics(prometheus_text& out, const net::front_stats& s);

/// The line a /lines/SCENE/LINE request names.
struct line_target {
  scene_id scene = 0;
  std::uint32_t line = 0;
};
/// Parses "SCENE/LINE" (the path after /lines/; decimal ids); bad_path says what is wrong.
[[nodiscard]] result<line_target, admin_errc> parse_line_target(std::string_view rest);

/// The admin endpoint's handlers for a hosted world (and its network front, when there is one);
/// /readyz answers 503 once `stopping` is set. /lines/SCENE/LINE reads the line's players, monsters
/// and (towns) phases as its scene holds them, on the scene's own thread, or 503 when that took
/// longer than `lines_timeout`. Everything passed in must outlive the handlers (destroy the admin
/// server first) and the world must outlive the requests it was handed.
[[nodiscard]] admin_handlers world_admin_handlers(
    const scene_table& table, processor_pool& pool, world& w, const std::atomic<bool>& stopping,
    const net::front* door = nullptr, std::chrono::milliseconds lines_timeout = std::chrono::seconds(1));

}  // namespace scenert::admin
