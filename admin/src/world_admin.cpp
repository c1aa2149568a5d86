#include <scenert/admin/world_admin.hpp>

#include <scenert/config/table_loader.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/space/space_module.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <future>
#include <memory>
#include <optional>
#include <span>

namespace scenert::admin {
namespace {

std::vector<label> scene_labels(const scene_def& d) {
  return {{"scene", std::to_string(d.id)}, {"kind", std::string(to_string(d.kind))}};
}

// Samples of one family must stay together: one pass over the scenes per family.
template <class Fn>
void per_scene(prometheus_text& out, const world_snapshot& s, bool counter, std::string_view name,
               std::string_view help, Fn value) {
  for (const auto& sc : s.scenes) {
    const double v = static_cast<double>(value(sc));
    if (counter)
      out.counter(name, help, v, scene_labels(*sc.def));
    else
      out.gauge(name, help, v, scene_labels(*sc.def));
  }
}

nlohmann::json phases_on(const phase_census& census, scene_id scene, std::uint32_t line) {
  auto list = nlohmann::json::array();
  auto it = census.find({scene, line});
  if (it != census.end())
    for (const auto& p : it->second)
      list.push_back({{"space", p.space}, {"phase", p.phase}, {"players", p.players}});
  return list;
}

nlohmann::json lines_json(const scene_snapshot& sc, const phase_census& census,
                          const connection_census* connections) {
  auto lines = nlohmann::json::array();
  for (const auto& l : sc.lines) {
    nlohmann::json j{{"line", l.line},
                     {"generation", l.generation},
                     {"state", std::string(to_string(l.state))},
                     {"players", l.players}};
    if (l.owner != 0) j["party"] = l.owner;  // a private instance
    if (sc.def->kind == scene_kind::town) j["running_phases"] = phases_on(census, sc.def->id, l.line);
    if (connections != nullptr) {
      const auto c = connections->find({sc.def->id, l.line});
      j["connections"] = c == connections->end() ? 0u : c->second;
    }
    lines.push_back(std::move(j));
  }
  return lines;
}

// The space definitions bound to a town (their running copies are the lines' running_phases).
nlohmann::json spaces_json(const scene_table& table, const scene_def& town) {
  auto spaces = nlohmann::json::array();
  for (const auto& d : table.scenes)
    if (d.space && d.space->bind_town == town.id)
      spaces.push_back({{"id", d.id},
                        {"name", d.name},
                        {"capacity", d.capacity},
                        {"min_spaces", d.space->min_spaces},
                        {"max_spaces", d.space->max_spaces}});
  return spaces;
}

nlohmann::json scene_json(const scene_table& table, const scene_snapshot& sc, const phase_census& census,
                          const connection_census* connections) {
  const scene_def& d = *sc.def;
  nlohmann::json j{{"id", d.id},
                   {"name", d.name},
                   {"kind", std::string(to_string(d.kind))},
                   {"structure", std::string(to_string(d.structure))},
                   {"capacity", d.capacity},
                   {"hard_capacity", d.hard_capacity},
                   {"instances", std::string(to_string(d.instances))},
                   {"min_lines", d.min_lines},
                   {"max_lines", d.max_lines},
                   {"frame_rate", d.frame_rate},
                   {"open_lines", sc.open_lines},
                   {"players", sc.players},
                   {"lines_opened", sc.lines_opened},
                   {"lines_closed", sc.lines_closed},
                   {"line_full", sc.line_full},
                   {"line_full_at_max_lines", sc.line_full_at_max},
                   {"open_private", sc.open_private},
                   {"opened_private", sc.opened_private},
                   {"quarantined", sc.quarantined},
                   {"lines", lines_json(sc, census, connections)}};
  if (d.structure == scene_structure::group)
    j["slots_per_group"] = group_slots(table.runtime.group_budget, d.capacity);
  if (d.kind == scene_kind::town) j["spaces"] = spaces_json(table, d);
  if (!sc.overrunning.empty()) j["overrunning"] = sc.overrunning;
  return j;
}

// ---- /lines/SCENE/LINE ------------------------------------------------------------------------
// nlohmann's ordered_json keeps the keys in the order written: the document reads as documented.
using ordered_json = nlohmann::ordered_json;

admin_response text(int status, std::string body) {
  return {status, "text/plain; charset=utf-8", std::move(body) + "\n"};
}

admin_response no_open_line(line_target t) {
  return text(404, fmt::format("scene {} has no open line {}", t.scene, t.line));
}

std::optional<std::uint32_t> decimal(std::string_view s) {
  std::uint32_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// A map as the clients see it: cells from the grid's map data, world units from the map definition.
// The table's blocked rectangles, as it gives them (a spectator draws them without a bit per cell).
ordered_json blocks_json(const map_def& m) {
  auto list = ordered_json::array();
  for (const auto& b : m.blocks) list.push_back({{"x", b.x}, {"y", b.y}, {"w", b.width}, {"h", b.height}});
  return list;
}

ordered_json geometry_json(const grid::map_data& map, const map_def* units) {
  const map_def unit{};  // the loader guarantees every scene's map exists
  const map_def& u = units != nullptr ? *units : unit;
  return {{"width", map.width()},
          {"height", map.height()},
          {"cell_size", u.cell_size},
          {"origin_x", u.origin_x},
          {"origin_z", u.origin_z},
          {"area_width", map.area_width()},
          {"area_height", map.area_height()},
          {"eyesight_x", map.eyesight_x()},
          {"eyesight_y", map.eyesight_y()},
          {"blocks", blocks_json(u)}};
}

ordered_json cell_json(std::uint64_t id, grid::cell_point at) {
  return {{"id", id}, {"x", at.x}, {"y", at.y}};
}

// Of `players` (sorted), those standing on the scene's grid, where they stand.
ordered_json players_json(const scene& s, std::span<const player_id> players) {
  auto list = ordered_json::array();
  for (player_id p : players)
    if (auto e = s.entity_of(p)) list.push_back(cell_json(p, s.grid().position_of(*e)));
  return list;
}

ordered_json monsters_json(const scene& s) {
  std::vector<grid::entity_id> ids = s.monsters();
  std::sort(ids.begin(), ids.end());
  auto list = ordered_json::array();
  for (auto id : ids) {
    if (!s.grid().contains(id)) continue;
    ordered_json m = cell_json(id, s.grid().position_of(id));
    if (auto brain = s.monster(id)) {  // what it is doing, and where its path goes
      m["state"] = to_string(brain->state);
      if (brain->goal) m["goal"] = {{"x", brain->goal->x}, {"y", brain->goal->y}};
    }
    list.push_back(std::move(m));
  }
  return list;
}

// The running phases of a town line that hold any of `players` (sorted). A phase's grid runs on its
// town's map data, and the front draws a phase's view with its town line's units: so does this.
ordered_json phases_json(scene& town, std::span<const player_id> players, const map_def* units) {
  auto list = ordered_json::array();
  const space_module* spaces = find_space_module(town);
  if (spaces == nullptr) return list;
  std::map<phase_id, std::vector<player_id>> in_phase;
  for (player_id p : players)
    if (auto id = spaces->phase_of(p)) in_phase[*id].push_back(p);
  for (const auto& [id, phased] : in_phase)
    if (const scene* phase = spaces->phase(id))
      list.push_back({{"phase", id},
                      {"space", phase->def().id},
                      {"geometry", geometry_json(phase->grid().map(), units)},
                      {"players", players_json(*phase, phased)}});
  return list;
}

// On the line's thread. `players` (sorted) are the line's players as the world's directory has them:
// a scene names its grid's entities, not its players, so the directory says whom to look for and
// the scene says whether and where each stands.
std::string line_json(const scene_table& table, scene& line, std::span<const player_id> players) {
  const scene_def& d = line.def();
  const map_def* units = table.find_map(d.map);
  const ordered_json j{{"scene", d.id},
                       {"line", line.line().line},
                       {"name", d.name},
                       {"kind", std::string(to_string(d.kind))},
                       {"geometry", geometry_json(line.grid().map(), units)},
                       {"players", players_json(line, players)},
                       {"monsters", monsters_json(line)},
                       {"phases", phases_json(line, players, units)}};
  return j.dump();
}

// One /lines request on its way: the world's thread finds the line, the line's thread reads it.
struct line_read {
  const scene_table& table;
  line_target target;
  admin_reply reply;
  scene* line = nullptr;  // valid on the line's thread: the read runs in its mailbox
  line_handle handle{};
  std::vector<player_id> players;
  bool settled = false;
};

// On the line's thread. The mailbox runs before the roster, so the changes the world sent before
// it found the line may still wait: the read runs on the next tick, after they were applied. A
// mailbox that no longer takes posts is closing: it runs what it holds before the line clears.
void read_line(const std::shared_ptr<line_read>& r) {
  if (!std::exchange(r->settled, true) && r->line->post([r] { read_line(r); })) return;
  if (r->line->line() != r->handle) return r->reply.answer(no_open_line(r->target));
  r->reply.answer({200, "application/json", line_json(r->table, *r->line, r->players)});
}

// On the world's thread (inside world::query): the open line's object and its players.
void find_line(const world& w, const std::shared_ptr<line_read>& r, const line_directory& dir) {
  std::optional<line_handle> open;
  dir.for_each_line(r->target.scene, [&](const line_info& l) {
    if (l.handle.line == r->target.line && l.state == line_state::open) open = l.handle;
  });
  const auto obj = open ? w.line_object(*open) : nullptr;
  if (obj == nullptr) return r->reply.answer(no_open_line(r->target));
  r->line = obj.get();
  r->handle = *open;
  r->players = dir.players(*open);
  std::sort(r->players.begin(), r->players.end());
  if (!obj->post([r] { read_line(r); })) r->reply.answer(no_open_line(r->target));
}

}  // namespace

result<line_target, admin_errc> parse_line_target(std::string_view rest) {
  const auto slash = rest.find('/');
  const auto scene = decimal(rest.substr(0, slash));
  const auto line = slash == std::string_view::npos ? std::nullopt : decimal(rest.substr(slash + 1));
  if (!scene || !line)
    return fail(admin_errc::bad_path,
                fmt::format("/lines/{}: expected /lines/SCENE/LINE with decimal scene and line ids", rest));
  return line_target{*scene, *line};
}

void render_world_metrics(prometheus_text& out, const world_snapshot& s) {
  out.gauge("scenert_world_players", "Players placed on a line or switching between two.",
            static_cast<double>(s.players));
  out.gauge("scenert_world_group_services", "Scene group services in the pool.",
            static_cast<double>(s.group_services));
  out.counter("scenert_world_requests_total", "World requests answered.", static_cast<double>(s.requests));
  out.counter("scenert_world_request_errors_total", "World requests answered with an error.",
              static_cast<double>(s.errors));
  out.counter("scenert_world_stale_posts_total",
              "Client moves and module messages dropped as meant for a line the player no longer stood on.",
              static_cast<double>(s.stale_posts));
  out.gauge("scenert_world_shutting_down", "1 once the world stopped taking requests.",
            s.shutting_down ? 1 : 0);
  using sc = scene_snapshot;
  per_scene(out, s, false, "scenert_scene_open_lines", "Open lines of a scene definition.",
            [](const sc& x) { return x.open_lines; });
  per_scene(out, s, false, "scenert_scene_players", "Players on the lines of a scene definition.",
            [](const sc& x) { return x.players; });
  per_scene(out, s, false, "scenert_scene_max_players_on_line", "Highest player count seen on one line.",
            [](const sc& x) { return x.max_players_on_line; });
  per_scene(out, s, true, "scenert_scene_lines_opened_total", "Lines opened.",
            [](const sc& x) { return x.lines_opened; });
  per_scene(out, s, true, "scenert_scene_lines_closed_total", "Lines closed.",
            [](const sc& x) { return x.lines_closed; });
  per_scene(out, s, true, "scenert_scene_line_full_total", "Requests answered line_full.",
            [](const sc& x) { return x.line_full; });
  per_scene(out, s, true, "scenert_scene_quarantined_lines_total", "Lines quarantined after failing ticks.",
            [](const sc& x) { return x.quarantined; });
  per_scene(out, s, true, "scenert_scene_evicted_players_total",
            "Players of a failed line that found no other line.", [](const sc& x) { return x.evicted; });
  per_scene(out, s, true, "scenert_scene_tick_overruns_total", "Grouped member ticks over their budget.",
            [](const sc& x) { return x.overruns; });
}

namespace {

// The front's headroom at its last sample (a quarter second) and what admission made of it.
void render_headroom_metrics(prometheus_text& out, const net::front_stats& s) {
  out.gauge("scenert_net_admitting",
            "1 while new logins are admitted, 0 while they are refused (server_busy).", s.admitting ? 1 : 0);
  out.gauge("scenert_net_headroom_tick_lateness_seconds",
            "p99 of how late the lines' ticks started over the last quarter second.",
            std::chrono::duration<double>(s.room.tick_lateness).count());
  out.gauge("scenert_net_headroom_io_busy_ratio", "The busiest client I/O thread's CPU time per wall time.",
            s.room.io_busy);
  out.gauge("scenert_net_headroom_io_lag_seconds",
            "How late the most lagging client I/O thread ran its timer.",
            std::chrono::duration<double>(s.room.io_lag).count());
  out.gauge("scenert_net_headroom_write_queue_bytes",
            "p90 over connections of the bytes queued to a client and not yet written.",
            static_cast<double>(s.room.write_queue_bytes));
  for (std::size_t i = 1; i < std::size(net::headroom_measure_names); ++i)
    out.gauge("scenert_net_headroom_over", "1 for the measure over its admission line in the last sample.",
              static_cast<std::size_t>(s.over) == i ? 1 : 0,
              {{"measure", std::string(net::headroom_measure_names[i])}});
  out.counter("scenert_net_logins_refused_busy_total", "New logins refused while admission was closed.",
              static_cast<double>(s.busy_refused));
  out.counter("scenert_net_admission_closings_total", "Times admission closed (a measure over its line).",
              static_cast<double>(s.admission_closings));
}

}  // namespace

void render_front_metrics(prometheus_text& out, const net::front_stats& s) {
  render_headroom_metrics(out, s);
  out.gauge("scenert_net_connections", "Client connections open now.", static_cast<double>(s.connections));
  out.gauge("scenert_net_detached_players", "Players of dropped connections waiting for their resume.",
            static_cast<double>(s.detached));
  const struct {
    const char* name;
    const char* help;
    std::uint64_t value;
  } counters[] = {
      {"scenert_net_connections_accepted_total", "Client connections accepted.", s.accepted},
      {"scenert_net_connections_refused_total", "Connections refused at max_connections.", s.refused},
      {"scenert_net_oversize_frames_total", "Frames over the size limit (each closes its connection).",
       s.oversize},
      {"scenert_net_bad_frames_total", "Frames with an unknown id, a bad payload or not allowed now.",
       s.bad_frames},
      {"scenert_net_rate_limited_total", "Messages dropped over their connection's rate.", s.rate_limited},
      {"scenert_net_moves_refused_total", "Moves refused (off the map, blocked, too fast, not in a scene).",
       s.moves_refused},
      {"scenert_net_moves_stale_total", "Walks (1011) made on a view the player had left since, dropped.",
       s.moves_stale},
      {"scenert_net_logins_total", "Explicit logins (1000) that made a new player.", s.logins},
      {"scenert_net_guests_total", "Connections logged in as guests.", s.guests},
      {"scenert_net_resumes_total", "Logins that got their player back with a resume token.", s.resumed},
      {"scenert_net_claims_total", "Of the resumes: players another gateway of the cluster held.", s.claimed},
      {"scenert_net_frames_in_total", "Frames read from clients.", s.frames_in},
      {"scenert_net_frames_out_total", "Frames queued to clients.", s.frames_out},
      {"scenert_net_bytes_in_total", "Bytes read from clients.", s.bytes_in},
      {"scenert_net_bytes_out_total", "Bytes written to clients.", s.bytes_out},
      {"scenert_net_writes_total", "Writes to client sockets (TCP gathers a batch's frames in one).",
       s.writes},
  };
  for (const auto& c : counters) out.counter(c.name, c.help, static_cast<double>(c.value));
  for (std::size_t i = 0; i < s.closed_by.size(); ++i)
    out.counter("scenert_net_connections_closed_total", "Client connections closed, by reason.",
                static_cast<double>(s.closed_by[i]), {{"reason", std::string(net::close_reason_names[i])}});
  const struct {
    const char* name;
    const char* help;
    const std::array<net::message_counts, std::size(net::all_message_ids)>& by_id;
    bool bytes;
  } by_message[] = {
      {"scenert_net_message_frames_in_total", "Frames read from clients, by message.", s.in_by_id, false},
      {"scenert_net_message_bytes_in_total", "Bytes of frames read from clients, by message.", s.in_by_id,
       true},
      {"scenert_net_message_frames_out_total", "Frames queued to clients, by message.", s.out_by_id, false},
      {"scenert_net_message_bytes_out_total", "Bytes of frames queued to clients, by message.", s.out_by_id,
       true},
  };
  for (const auto& f : by_message)
    for (std::size_t i = 0; i < f.by_id.size(); ++i)
      out.counter(f.name, f.help, static_cast<double>(f.bytes ? f.by_id[i].bytes : f.by_id[i].frames),
                  {{"message", std::string(net::name_of(net::all_message_ids[i]))}});
}

phase_census take_phase_census(const scene_table& table, const line_directory& dir) {
  phase_census census;
  for (const auto& d : table.scenes) {
    if (d.kind != scene_kind::town) continue;
    dir.for_each_line(d.id, [&](const line_info& line) {
      std::map<std::pair<scene_id, std::uint32_t>, std::uint32_t> phases;
      for (player_id p : dir.players(line.handle)) {
        const location loc = dir.locate(p);
        if (loc.where == location::state::in_line && loc.line == line.handle && loc.phase != 0)
          ++phases[{loc.space, loc.phase}];
      }
      auto& out = census[{d.id, line.handle.line}];
      for (const auto& [key, players] : phases) out.push_back({key.first, key.second, players});
    });
  }
  return census;
}

connection_census take_connection_census(const net::front& door) {
  connection_census census;
  for (const auto& c : door.connections_by_line()) census[{c.line.scene, c.line.line}] += c.connections;
  return census;
}

std::string scenes_json(const scene_table& table, const world_snapshot& s, const phase_census& phases,
                        const connection_census* connections) {
  auto scenes = nlohmann::json::array();
  for (const auto& sc : s.scenes) scenes.push_back(scene_json(table, sc, phases, connections));
  nlohmann::json j{{"players", s.players},
                   {"group_services", s.group_services},
                   {"shutting_down", s.shutting_down},
                   {"scenes", scenes}};
  return j.dump(2);
}

health judge_health(const pool_metrics& m, std::chrono::nanoseconds progress_limit) {
  health h;
  if (m.since_progress > progress_limit)
    h.reason += fmt::format("no pool worker finished work for {:.1f} s\n",
                            std::chrono::duration<double>(m.since_progress).count());
  for (const auto& s : m.stalled_now) h.reason += fmt::format("stalled: {}\n", s);
  h.ok = h.reason.empty();
  if (h.ok) h.reason = "ok\n";
  return h;
}

admin_handlers world_admin_handlers(const scene_table& table, processor_pool& pool, world& w,
                                    const std::atomic<bool>& stopping, const net::front* door,
                                    std::chrono::milliseconds lines_timeout) {
  const auto limit =
      std::max<std::chrono::nanoseconds>(std::chrono::seconds(2), 2 * table.runtime.stall_threshold);
  admin_handlers h;
  h.livez = [] { return admin_response{200, "text/plain; charset=utf-8", "ok\n"}; };
  h.readyz = [&stopping] {
    return stopping.load() ? admin_response{503, "text/plain; charset=utf-8", "shutting down\n"}
                           : admin_response{200, "text/plain; charset=utf-8", "ready\n"};
  };
  h.healthz = [&pool, limit] {
    const health verdict = judge_health(pool.metrics(), limit);
    return admin_response{verdict.ok ? 200 : 503, "text/plain; charset=utf-8", verdict.reason};
  };
  h.metrics = [&pool, &w, door] {
    prometheus_text out;
    render_pool_metrics(out, pool.metrics());
    render_world_metrics(out, *w.snapshot());
    if (door != nullptr) render_front_metrics(out, door->stats());
    return admin_response{200, "text/plain; version=0.0.4; charset=utf-8", out.text()};
  };
  h.scenes = [&table, &w, door] {
    // Phases are read from the world's directory on its thread; a busy world answers without them.
    std::promise<phase_census> promise;
    auto census = promise.get_future();
    w.query([&table, p = std::move(promise)](const line_directory& dir) mutable {
      p.set_value(take_phase_census(table, dir));
    });
    const bool fresh = census.wait_for(std::chrono::seconds(1)) == std::future_status::ready;
    const auto connections = door != nullptr ? take_connection_census(*door) : connection_census{};
    return admin_response{200, "application/json",
                          scenes_json(table, *w.snapshot(), fresh ? census.get() : phase_census{},
                                      door != nullptr ? &connections : nullptr)};
  };
  h.lines = [&table, &w, lines_timeout](std::string_view rest, admin_reply reply) {
    auto target = parse_line_target(rest);
    if (!target) return reply.answer(text(400, target.error().message));
    if (table.find_scene(target->scene) == nullptr)
      return reply.answer(text(404, fmt::format("no scene {}", target->scene)));
    reply.on_timeout(text(503, fmt::format("scene {} line {} did not answer within {} ms", target->scene,
                                           target->line, lines_timeout.count())));
    auto r = std::make_shared<line_read>(line_read{table, *target, std::move(reply), nullptr, {}, {}, false});
    w.query([&w, r](const line_directory& dir) { find_line(w, r, dir); });
  };
  h.lines_timeout = lines_timeout;
  return h;
}

}  // namespace scenert::admin
