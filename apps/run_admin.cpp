#include "run_admin.hpp"

#include <scenert/config/table_loader.hpp>

#include <scenert/runtime/processor_pool.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <future>

namespace scenert::apps {
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

}  // namespace

void render_world_metrics(prometheus_text& out, const world_snapshot& s) {
  out.gauge("scenert_world_players", "Players placed on a line or switching between two.",
            static_cast<double>(s.players));
  out.gauge("scenert_world_group_services", "Scene group services in the pool.",
            static_cast<double>(s.group_services));
  out.counter("scenert_world_requests_total", "World requests answered.", static_cast<double>(s.requests));
  out.counter("scenert_world_request_errors_total", "World requests answered with an error.",
              static_cast<double>(s.errors));
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

void render_front_metrics(prometheus_text& out, const net::front_stats& s) {
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
      {"scenert_net_logins_total", "Explicit logins (1000) that made a new player.", s.logins},
      {"scenert_net_guests_total", "Connections logged in as guests.", s.guests},
      {"scenert_net_resumes_total", "Logins that got their player back with a resume token.", s.resumed},
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
                                    const std::atomic<bool>& stopping, const net::front* door) {
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
  return h;
}

}  // namespace scenert::apps
