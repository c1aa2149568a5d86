// `scenert run`: the world, its pool, its front, its node in a cluster and its admin endpoint,
// wired in the order they depend on each other, each step its own function; then the wait for
// SIGINT or SIGTERM and a clean stop.

#include "change_log.hpp"
#include "check_command.hpp"
#include "exit_codes.hpp"
#include "module_loading.hpp"
#include "run_command.hpp"
#include "shutdown_signal.hpp"

#include <scenert/admin/cluster_metrics.hpp>
#include <scenert/admin/history_ring.hpp>
#include <scenert/admin/store_metrics.hpp>
#include <scenert/admin/web_files.hpp>
#include <scenert/admin/world_admin.hpp>
#include <scenert/cluster/kv_player_store.hpp>
#include <scenert/cluster/scene_node.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/world.hpp>
#include <scenert/space/space_module.hpp>
#include <scenert/store/sqlite_store.hpp>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>

namespace scenert::apps {
namespace {

using std::chrono::milliseconds;
using namespace scenert::admin;

// Everything `run` wires together, declared in the order it is built: destroyed in reverse.
struct hosting {
  explicit hosting(const run_options& options) : o(options) {}
  const run_options& o;
  std::shared_ptr<const scene_table> table;
  std::vector<scene_id> hosted;  // a node's part of the table: its world knows no other scene
  module_registry modules;       // the executable's own and the --module libraries'
  // The player store, one of the two, counted for /metrics: outlives the world and the front (and
  // the count outlives the store, whose last answers it times).
  std::unique_ptr<measured_store> measured;
  std::unique_ptr<store::sqlite_store> file_store;
  std::unique_ptr<cluster::kv_player_store> cluster_store;
  player_store* items = nullptr;
  std::unique_ptr<processor_pool> pool;
  world_options wo;
  std::optional<web_files> pages;
  std::filesystem::path web_root;
  std::unique_ptr<net::front> door;
  std::unique_ptr<cluster::scene_node> node;
  std::shared_ptr<world> w;
  std::atomic<bool> stopping{false};
  history_ring history;
  std::unique_ptr<admin_server> admin, web;
  change_log changes;
};

pool_options pool_options_for(const scene_table& t, const run_options& o) {
  pool_options p;
  p.workers = o.workers ? o.workers : t.runtime.workers;
  p.quarantine_after = t.runtime.quarantine_after;
  p.stall_threshold = t.runtime.stall_threshold;
  p.realtime_priority = o.realtime;
  p.log = [](log_level level, std::string_view message) {
    spdlog::log(level == log_level::info   ? spdlog::level::info
                : level == log_level::warn ? spdlog::level::warn
                                           : spdlog::level::err,
                "pool: {}", message);
  };
  return p;
}

// The table, or a node's part of it (`--hosts`).
int load_table(hosting& h) {
  int code = exit_ok;
  h.table = load_table_or_report(h.o.table, code);
  if (!h.table || h.o.hosts.empty()) return code;
  auto part = cluster::hosted_part(*h.table, h.o.hosts);
  if (!part) {
    spdlog::error("--hosts {}: {} has no scene of {}", fmt::join(h.o.hosts, ","), h.o.table,
                  h.o.hosts.size() == 1 ? "that kind" : "those kinds");
    return exit_usage;
  }
  for (const auto& s : part->scenes) h.hosted.push_back(s.id);
  h.table = std::make_shared<const scene_table>(std::move(part).value());
  return exit_ok;
}

// The game modules: the executable's, then the libraries'; the table's modules checked against them.
int load_modules(hosting& h) {
  if (h.o.registry != nullptr) h.modules = *h.o.registry;
  if (int code = load_module_libraries(h.o.modules, h.modules); code != exit_ok) return code;
  return report_module_problems(*h.table, h.o.table, h.modules);
}

// The player store, when the table's modules may grant (a scene names one) or --store names it: in
// a cluster the cluster's (every node and gateway finds every account), unless --store names a file.
int open_store(hosting& h) {
  const bool modules = std::any_of(h.table->scenes.begin(), h.table->scenes.end(),
                                   [](const scene_def& s) { return s.module.has_value(); });
  if (h.o.store.empty() && !modules) return exit_ok;
  if (!h.o.cluster.empty() && h.o.store.empty()) {
    cluster::kv_store_options ko;
    ko.url = h.o.cluster;
    ko.name = fmt::format("{}-store", h.o.node);
    auto opened = cluster::kv_player_store::open(std::move(ko));
    if (!opened) {
      spdlog::error("--cluster {}: {}", h.o.cluster, opened.error().message);
      return exit_usage;
    }
    h.cluster_store = std::move(*opened);
    h.measured = std::make_unique<measured_store>(*h.cluster_store,
                                                  [s = h.cluster_store.get()] { return s->stats().writes; });
    h.items = h.measured.get();
    spdlog::info("player store: the cluster's, bucket {} at {}", h.cluster_store->bucket(), h.o.cluster);
    return exit_ok;
  }
  const std::string path = h.o.store.empty() ? store::default_store_path(h.o.table) : h.o.store;
  auto opened = store::sqlite_store::open(path);
  if (!opened) {
    spdlog::error("--store {}: {}", path, opened.error().message);
    return exit_usage;
  }
  h.file_store = std::move(*opened);
  h.measured = std::make_unique<measured_store>(*h.file_store,
                                                [s = h.file_store.get()] { return s->stats().commits; });
  h.items = h.measured.get();
  spdlog::info("player store: {}", path);
  return exit_ok;
}

// Each new line object: a town's phases, then the game module its scene names.
std::function<void(scene&)> new_line_modules(hosting& h) {
  return [phases = attach_space_modules(*h.table),
          games = attach_game_modules(*h.table, h.modules, h.items)](scene& l) {
    phases(l);
    games(l);
  };
}

int load_pages(hosting& h) {
  if (h.o.web.empty()) return exit_ok;
  h.web_root = h.o.web_root.empty() ? default_web_root() : std::filesystem::path(h.o.web_root);
  auto loaded = web_files::load(h.web_root);
  if (!loaded) {
    spdlog::error("--web {}: {}", h.o.web, loaded.error().message);
    return exit_usage;
  }
  for (const auto& name : loaded->missing())
    spdlog::warn("--web: /vendor/{} not found: run scripts/setup.sh (it installs the pages' scripts)", name);
  h.pages = std::move(*loaded);
  return exit_ok;
}

// A scene node of the cluster: its lines' events and module frames go to the gateways.
int join_cluster(hosting& h) {
  if (h.o.cluster.empty()) return exit_ok;
  cluster::scene_node_options no;
  no.url = h.o.cluster;
  no.name = h.o.node;
  no.dead_after = milliseconds(h.o.dead_after_ms);
  no.resume = h.table->network.resume_ms;
  no.scenes = h.hosted;
  no.warn = [](std::string_view what) { spdlog::warn("{}", what); };
  no.error = [](std::string_view what) { spdlog::error("{}", what); };
  auto joined = cluster::scene_node::join(*h.table, std::move(no));
  if (!joined) {
    spdlog::error("--cluster {} --node {}: {}", h.o.cluster, h.o.node, joined.error().message);
    return exit_usage;
  }
  h.node = std::move(joined).value();
  h.wo.directory = h.node->take_directory();
  h.wo.on_line_events = h.node->on_line_events();
  h.wo.on_module_frames = h.node->on_module_frames();
  spdlog::info("node {} joined the cluster at {} with epoch {}", h.o.node, h.o.cluster, h.node->self().epoch);
  return exit_ok;
}

// Calls `first` (when set), then `second`, with the same arguments.
template <class... Args>
std::function<void(Args...)> both(std::function<void(Args...)> first, std::function<void(Args...)> second) {
  if (!first) return second;
  return [first = std::move(first), second = std::move(second)](Args... args) {
    first(args...);
    second(args...);
  };
}

// A node's own front numbers its players from a block of the cluster's counter, as a gateway does:
// from 1 they would be the first gateway's ids, two players under one id on the cluster's lines.
bool take_node_player_ids(hosting& h, net::front_options& f) {
  if (!h.node) return true;
  auto ids = h.node->take_player_ids(cluster::player_ids_per_start);
  if (!ids) {
    spdlog::error("--cluster {} --node {}: {}", h.o.cluster, h.o.node, ids.error().message);
    return false;
  }
  f.first_player_id = ids->first;
  f.last_player_id = ids->last;
  spdlog::info("node {}'s own front gives out player ids {}-{}", h.o.node, ids->first, ids->last);
  return true;
}

// The front, after the node's join (a node's front takes its player ids from the cluster): the lines'
// events and module frames go to the gateways and to this front.
int open_door(hosting& h) {
  if (h.o.tcp.empty() && h.o.ws.empty() && !h.pages) return exit_ok;
  auto options = front_options_for(h.o);
  if (!options) {
    spdlog::error("{}", options.error().message);
    return exit_usage;
  }
  options->store = h.items;
  if (!take_node_player_ids(h, *options)) return exit_usage;
  h.door = net::front::create(*h.table, std::move(*options));
  h.wo.on_line_events = both(std::move(h.wo.on_line_events), h.door->on_line_events());
  h.wo.on_module_frames = both(std::move(h.wo.on_module_frames), h.door->on_module_frames());
  return exit_ok;
}

std::unique_ptr<admin_server> serve(hosting& h, const std::string& flag, const std::string& text,
                                    bool pages) {
  auto handlers = world_admin_handlers(*h.table, *h.pool, *h.w, h.stopping, h.door.get());
  if (h.node || h.measured)
    handlers.metrics = [world_metrics = std::move(handlers.metrics), node = h.node.get(),
                        items = h.measured.get()] {
      auto r = world_metrics();
      prometheus_text out;
      if (node) render_node_metrics(out, node->stats());
      if (items) render_store_metrics(out, items->measures());
      r.body += out.text();
      return r;
    };
  handlers.history = [&h] { return admin_response{200, "application/json", h.history.json()}; };
  if (pages) {
    handlers.page = [&h](std::string_view path) { return h.pages->find(path); };
    handlers.websocket = [&h](int socket, std::string bytes) {
      h.door->adopt_websocket(socket, std::move(bytes));
    };
  }
  auto at = parse_endpoint(text);
  auto started = at ? admin_server::start(*at, std::move(handlers), flag.substr(2))
                    : result<std::unique_ptr<admin_server>, admin_errc>(at.error());
  if (!started) spdlog::error("{} {}: {}", flag, text, started.error().message);
  return started ? std::move(*started) : nullptr;
}

// Stops taking requests, closes every line, stops the pool; the admin endpoint answers throughout.
void stop_hosting(hosting& h) {
  const auto begun = std::chrono::steady_clock::now();
  spdlog::info("stopping: no new players; closing every line");
  if (h.w->shutdown().wait_for(std::chrono::seconds(4)) != std::future_status::ready)
    spdlog::error("the world did not finish closing its lines within 4 s");
  const auto last = h.w->snapshot();
  h.changes.update(*last);
  (void)h.pool->stop();
  std::uint64_t opened = 0, closed = 0;
  for (const auto& s : last->scenes) {
    opened += s.lines_opened;
    closed += s.lines_closed;
  }
  spdlog::info("stopped in {} ms: {} lines opened and {} closed over the run",
               std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - begun).count(),
               opened, closed);
}

// The pool, the world, the node's part and the front, in that order; a failure stops what started.
int start_serving(hosting& h) {
  if (auto started = h.pool->start(); !started) {
    spdlog::error("{}", started.error().message);
    return exit_usage;
  }
  h.w->start();
  if (h.node) {
    if (auto started = h.node->start(*h.w); !started) {
      spdlog::error("--cluster {} --node {}: {}", h.o.cluster, h.o.node, started.error().message);
      stop_hosting(h);
      return exit_usage;
    }
  }
  if (h.door) {
    if (auto started = h.door->start(*h.w); !started) {
      spdlog::error("{}", started.error().message);
      if (h.node) h.node->stop();
      stop_hosting(h);
      return exit_usage;
    }
  }
  return exit_ok;
}

// After the lines closed: what they granted last is written before the process ends.
void stop_store(hosting& h) {
  if (h.file_store) {
    h.file_store->stop();
    const auto s = h.file_store->stats();
    spdlog::info("player store {}: {} grants written, {} repeats, {} failed in {} commits",
                 h.file_store->path(), s.grants, s.repeats, s.failed, s.commits);
  }
  if (h.cluster_store) {
    h.cluster_store->stop();
    const auto s = h.cluster_store->stats();
    spdlog::info(
        "player store (bucket {}): {} grants written, {} repeats, {} failed in {} account writes ({} "
        "races lost to other stores)",
        h.cluster_store->bucket(), s.grants, s.repeats, s.failed, s.writes, s.conflicts);
  }
}

void say_hosting(const hosting& h) {
  const auto& o = h.o;
  auto where = [](const std::string& text) { return parse_endpoint(text)->host; };
  spdlog::info(
      "hosting {} scene definitions from {} on {} workers{}{}{}{}{}", h.table->scenes.size(), o.table,
      h.pool->options().workers,
      h.admin ? fmt::format("; admin endpoint http://{}:{}", where(o.admin), h.admin->port()) : "",
      h.door && !o.tcp.empty() ? fmt::format("; clients on tcp://{}:{}", where(o.tcp), h.door->tcp_port())
                               : "",
      h.door && !o.ws.empty()
          ? fmt::format("; WebSocket clients on ws://{}:{}", where(o.ws), h.door->ws_port())
          : "",
      h.web ? fmt::format("; web pages on http://{}:{}/ ({} files from {})", where(o.web), h.web->port(),
                          h.pages->size(), h.web_root.string())
            : "",
      h.door ? fmt::format("; {} I/O thread{} for clients", o.io_threads, o.io_threads == 1 ? "" : "s") : "");
}

front_headroom headroom_of(const net::front_stats& s) {
  return {s.room.io_busy, static_cast<double>(s.room.write_queue_bytes) / 1024.0,
          s.admitting,    std::string(net::headroom_measure_names[static_cast<std::size_t>(s.over)]),
          s.busy_refused, std::chrono::duration<double, std::milli>(s.room.io_lag).count()};
}

// Until SIGINT or SIGTERM, or until the cluster fenced this node: logs the world's changes and
// records a sample a second for /history. False when fenced.
bool serve_until_stopped(hosting& h) {
  auto sampled = std::chrono::steady_clock::now();
  histogram_snapshot lateness_before;
  while (!wait_for_shutdown(milliseconds(250))) {
    const auto snapshot = h.w->snapshot();
    h.changes.update(*snapshot);
    if (h.node && h.node->fenced()) return false;
    auto pool = h.pool->metrics();
    if (h.door) {  // the front's admission weighs the ticks' lateness of this quarter second
      h.door->report_tick_lateness(std::chrono::duration_cast<std::chrono::microseconds>(
          interval_p99(pool.lateness, lateness_before)));
      lateness_before = pool.lateness;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - sampled < std::chrono::seconds(1)) continue;
    sampled = now;
    h.history.record(
        std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count(),
        snapshot->players, h.door ? h.door->stats().connections : 0, snapshot->requests, pool,
        h.door ? headroom_of(h.door->stats()) : front_headroom{});
  }
  return true;
}

int host(hosting& h) {
  for (auto step : {load_table, load_modules, load_pages, open_store}) {
    if (int code = step(h); code != exit_ok || !h.table) return code;
  }
  h.pool = std::make_unique<processor_pool>(pool_options_for(*h.table, h.o));
  h.wo.on_new_line = new_line_modules(h);
  h.wo.on_evicted = [](player_id p, line_handle from, std::string_view reason) {
    spdlog::warn("player {} evicted from scene {} line {}: {}", p, from.scene, from.line, reason);
  };
  // The maps before the node's join: its join starts the other nodes' watch of its beats.
  h.wo.maps = world_maps::build(*h.table);
  for (auto step : {join_cluster, open_door}) {
    const int code = step(h);
    if (code == exit_ok) continue;
    if (h.node) h.node->leave();  // joined, but never served: nobody need wait for its silence
    return code;
  }
  h.w = world::create(*h.table, *h.pool, std::move(h.wo));
  if (!h.o.admin.empty() && !(h.admin = serve(h, "--admin", h.o.admin, false))) return exit_usage;
  if (h.pages && !(h.web = serve(h, "--web", h.o.web, true))) return exit_usage;
  if (int code = start_serving(h); code != exit_ok) return code;
  say_hosting(h);
  const bool fenced = !serve_until_stopped(h);
  h.stopping.store(true);
  if (h.door) {
    const auto s = h.door->stats();
    spdlog::info("saying goodbye to {} clients ({} accepted over the run)", s.connections, s.accepted);
    h.door->stop();
  }
  if (h.node) h.node->stop();
  stop_hosting(h);
  stop_store(h);
  if (fenced) return exit_fenced;
  if (h.node) h.node->leave();
  return exit_ok;
}

}  // namespace

int run_host(const run_options& o) {
  block_shutdown_signals();  // before any thread starts: every thread inherits the mask
  set_up_logging();
  hosting h(o);
  return host(h);
}

}  // namespace scenert::apps
