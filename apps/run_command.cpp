#include "run_command.hpp"

#include "admin_server.hpp"
#include "check_command.hpp"
#include "exit_codes.hpp"
#include "history_ring.hpp"
#include "prometheus_text.hpp"
#include "run_admin.hpp"
#include "run_cluster.hpp"
#include "shutdown_signal.hpp"
#include "web_files.hpp"

#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/net/front.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/world.hpp>
#include <scenert/space/space_module.hpp>

#include <fmt/ranges.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace scenert::apps {
namespace {

using std::chrono::milliseconds;
using line_key = std::tuple<std::uint32_t, std::uint32_t>;  // line id, generation

// Logs what changed between two world snapshots: lines opened, closed and quarantined.
class change_log {
 public:
  void update(const world_snapshot& s) {
    for (const auto& sc : s.scenes) update_scene(sc);
  }

 private:
  // Beyond this many changes of one scene between two looks, one summary line says it.
  static constexpr std::size_t detail_limit = 8;

  void update_scene(const scene_snapshot& sc) {
    std::set<line_key> open, quarantined;
    for (const auto& l : sc.lines) {
      if (l.state == line_state::open) open.emplace(l.line, l.generation);
      if (l.state == line_state::quarantined) quarantined.emplace(l.line, l.generation);
    }
    auto& before = open_[sc.def->id];
    std::vector<line_key> opened, closed;
    for (const auto& k : open)
      if (!before.count(k)) opened.push_back(k);
    for (const auto& k : before)
      if (!open.count(k)) closed.push_back(k);
    report(sc, opened, closed);
    auto& seen = quarantined_[sc.def->id];
    for (const auto& k : quarantined)
      if (seen.insert(k).second)
        spdlog::warn("scene {} ({}) line {}: quarantined (its ticks kept failing); players moved out",
                     sc.def->id, sc.def->name, std::get<0>(k));
    before = std::move(open);
  }

  static void report(const scene_snapshot& sc, const std::vector<line_key>& opened,
                     const std::vector<line_key>& closed) {
    if (opened.size() + closed.size() > detail_limit) {
      spdlog::info("scene {} ({}): {} lines opened, {} closed; {} open, {} players", sc.def->id, sc.def->name,
                   opened.size(), closed.size(), sc.open_lines, sc.players);
      return;
    }
    for (const auto& [line, gen] : opened)
      spdlog::info("scene {} ({}) line {} opened (generation {}); {} open", sc.def->id, sc.def->name, line,
                   gen, sc.open_lines);
    for (const auto& [line, gen] : closed)
      spdlog::info("scene {} ({}) line {} closed (generation {}); {} open", sc.def->id, sc.def->name, line,
                   gen, sc.open_lines);
  }

  std::map<scene_id, std::set<line_key>> open_, quarantined_;
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

// Stops taking requests, closes every line, stops the pool; the admin endpoint answers throughout.
void stop_hosting(processor_pool& pool, world& w, change_log& changes) {
  const auto begun = std::chrono::steady_clock::now();
  spdlog::info("stopping: no new players; closing every line");
  if (w.shutdown().wait_for(std::chrono::seconds(4)) != std::future_status::ready)
    spdlog::error("the world did not finish closing its lines within 4 s");
  const auto last = w.snapshot();
  changes.update(*last);
  (void)pool.stop();
  std::uint64_t opened = 0, closed = 0;
  for (const auto& s : last->scenes) {
    opened += s.lines_opened;
    closed += s.lines_closed;
  }
  spdlog::info("stopped in {} ms: {} lines opened and {} closed over the run",
               std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - begun).count(),
               opened, closed);
}

}  // namespace

void set_up_logging() {
  auto logger = spdlog::stderr_color_mt("scenert");
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  spdlog::set_default_logger(logger);
}

// The front's options from the flags: endpoints checked, the table's network settings unless given.
result<net::front_options, admin_errc> front_options_for(const run_options& o) {
  net::front_options f;
  f.tcp = !o.tcp.empty();
  f.ws = !o.ws.empty();
  for (auto [flag, text, host, port] : {std::tuple{"--tcp", &o.tcp, &f.tcp_host, &f.tcp_port},
                                        std::tuple{"--ws", &o.ws, &f.ws_host, &f.ws_port}}) {
    if (text->empty()) continue;
    auto at = parse_endpoint(*text);
    if (!at) return fail(admin_errc::bad_endpoint, fmt::format("{} {}: {}", flag, *text, at.error().message));
    *host = at->host, *port = at->port;
  }
  f.max_payload = o.max_frame;
  if (o.resume_ms >= 0) f.resume = milliseconds(o.resume_ms);
  f.max_connections = o.max_connections;
  f.io_threads = o.io_threads;
  return f;
}

CLI::App* add_run_command(CLI::App& app, run_options& o) {
  CLI::App* cmd = app.add_subcommand("run", "Host the world of a scene table until SIGINT or SIGTERM");
  cmd->add_option("table", o.table, "Scene table (JSON), e.g. examples/mmo.json")->required();
  cmd->add_option("--workers", o.workers, "Pool workers (default: the table's runtime.workers)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--realtime", o.realtime,
                  "Run the pool's threads on SCHED_FIFO at this priority (1-99), so that ticks start on "
                  "time on a busy machine; needs CAP_SYS_NICE or an rtprio limit")
      ->check(CLI::Range(1, 99));
  cmd->add_option(
      "--admin", o.admin,
      "Serve /livez /readyz /healthz /metrics /scenes on HOST:PORT (e.g. 127.0.0.1:9100; port 0 = any)");
  cmd->add_option(
      "--tcp", o.tcp,
      "Let game clients connect on HOST:PORT (seed 002's protocol and scenert's own; e.g. "
      "127.0.0.1:8899; port 0 = any): each logs in (or lands as a guest) on the table's first town");
  cmd->add_option("--ws", o.ws,
                  "Let WebSocket clients connect on HOST:PORT: the same frames, one per binary message");
  cmd->add_option("--web", o.web,
                  "Serve the play page (/), the operator's dashboard (/dashboard.html), their WebSocket "
                  "(/ws) and the admin JSON (/scenes, /lines/SCENE/LINE, /history) on HOST:PORT");
  cmd->add_option("--web-root", o.web_root,
                  "Folder of the web pages (default: PREFIX/share/scenert/web beside the binary, else the "
                  "source tree's web/)");
  cmd->add_option("--max-frame", o.max_frame,
                  "Largest frame payload in bytes (default: the table's network.max_frame_bytes)")
      ->check(CLI::Range(16u, 16u * 1024 * 1024));
  cmd->add_option("--resume-ms", o.resume_ms,
                  "How long a dropped player keeps its place for its resume token (default: the table's "
                  "network.resume_ms)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{3'600'000}));
  cmd->add_option("--max-connections", o.max_connections,
                  "Client connections at once; over it a new one gets a goodbye and a close")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  cmd->add_option("--io-threads", o.io_threads,
                  "Threads for the clients' sockets, apart from the pool's workers; connections are "
                  "dealt to them in turn and each fans the lines' events out to its own (default 1)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
  auto* cluster = cmd->add_option("--cluster", o.cluster,
                                  "Run as a scene node of the cluster whose NATS server (JetStream on) is at "
                                  "nats://HOST:PORT: lines open through the cluster's directory");
  auto* node =
      cmd->add_option("--node", o.node, "This node's name in the cluster (letters, digits, '-', '_')");
  cluster->needs(node);
  node->needs(cluster);
  cmd->add_option("--hosts", o.hosts,
                  "The kinds of scene this node hosts, e.g. town,field on some nodes and dungeon on others "
                  "(a town's phases come with it; default: every scene)")
      ->delimiter(',')
      ->check(CLI::IsMember({"town", "field", "dungeon", "guild"}))
      ->needs(cluster);
  cmd->add_option("--dead-after-ms", o.dead_after_ms,
                  "Declare a cluster node dead once its heartbeat stood still this long (default 3000)")
      ->check(CLI::Range(std::int64_t{500}, std::int64_t{600'000}));
  cmd->footer(
      "Exit status: 0 stopped cleanly; 1 invalid table; 2 usage error, unreadable file, admin or\n"
      "client endpoint that cannot be bound, a pool that cannot start (e.g. --realtime refused) or a\n"
      "cluster that cannot be joined; 4 a cluster node fenced (declared dead or replaced).");
  return cmd;
}

int run_host(const run_options& o) {
  block_shutdown_signals();  // before any thread starts: every thread inherits the mask
  set_up_logging();
  int code = exit_ok;
  auto table = load_table_or_report(o.table, code);
  if (!table) return code;
  std::vector<scene_id> hosted;  // a node's part of the table: its world knows no other scene
  if (!o.hosts.empty()) {
    auto part = hosted_part(*table, o.hosts);
    if (!part) {
      spdlog::error("--hosts {}: {} has no scene of {}", fmt::join(o.hosts, ","), o.table,
                    o.hosts.size() == 1 ? "that kind" : "those kinds");
      return exit_usage;
    }
    for (const auto& s : part->scenes) hosted.push_back(s.id);
    table = std::make_shared<const scene_table>(std::move(part).value());
  }
  processor_pool pool(pool_options_for(*table, o));
  world_options wo;
  wo.on_new_line = attach_space_modules(*table);  // town lines get their phases
  wo.on_evicted = [](player_id p, line_handle from, std::string_view reason) {
    spdlog::warn("player {} evicted from scene {} line {}: {}", p, from.scene, from.line, reason);
  };
  std::optional<web_files> pages;
  std::filesystem::path web_root;
  if (!o.web.empty()) {
    web_root = o.web_root.empty() ? default_web_root() : std::filesystem::path(o.web_root);
    auto loaded = web_files::load(web_root);
    if (!loaded) {
      spdlog::error("--web {}: {}", o.web, loaded.error().message);
      return exit_usage;
    }
    for (const auto& name : loaded->missing())
      spdlog::warn("--web: /vendor/{} not found: run scripts/setup.sh (it installs the pages' scripts)",
                   name);
    pages = std::move(*loaded);
  }
  std::unique_ptr<net::front> door;
  if (!o.tcp.empty() || !o.ws.empty() || pages) {
    auto options = front_options_for(o);
    if (!options) {
      spdlog::error("{}", options.error().message);
      return exit_usage;
    }
    door = net::front::create(*table, std::move(*options));
    wo.on_line_events = door->on_line_events();
  }
  std::unique_ptr<cluster_node> node;
  std::unique_ptr<cluster::node_endpoint> gateways;
  if (!o.cluster.empty()) {
    auto joined = cluster_node::join(
        *table, {o.cluster, o.node, std::chrono::seconds(1), milliseconds(o.dead_after_ms), hosted});
    if (!joined) {
      spdlog::error("--cluster {} --node {}: {}", o.cluster, o.node, joined.error().message);
      return exit_usage;
    }
    node = std::move(joined).value();
    wo.directory = node->take_directory();
    gateways = std::make_unique<cluster::node_endpoint>(
        node->link(), o.node, node->self().epoch,
        cluster::node_endpoint_options{milliseconds(o.dead_after_ms), table->network.resume_ms});
    // The lines' events go to the gateways, and to this process's own front when it has one.
    wo.on_line_events = [to_gateways = gateways->on_line_events(), to_front = std::move(wo.on_line_events)](
                            line_handle l, phase_id p, std::span<const line_event> events) {
      to_gateways(l, p, events);
      if (to_front) to_front(l, p, events);
    };
    spdlog::info("node {} joined the cluster at {} with epoch {}", o.node, o.cluster, node->self().epoch);
  }
  auto w = world::create(*table, pool, std::move(wo));
  std::atomic<bool> stopping{false};
  history_ring history;
  auto serve = [&](const std::string& flag, const std::string& text, bool with_pages) {
    auto h = world_admin_handlers(*table, pool, *w, stopping, door.get());
    if (node) {
      h.metrics = [world_metrics = std::move(h.metrics), &node, &gateways] {
        auto r = world_metrics();
        prometheus_text out;
        node->render_metrics(out);
        render_endpoint_metrics(out, gateways->stats());
        r.body += out.text();
        return r;
      };
    }
    h.history = [&history] { return admin_response{200, "application/json", history.json()}; };
    if (with_pages) {
      h.page = [&pages](std::string_view path) { return pages->find(path); };
      h.websocket = [&door](int socket, std::string bytes) {
        door->adopt_websocket(socket, std::move(bytes));
      };
    }
    auto at = parse_endpoint(text);
    auto started = at ? admin_server::start(*at, std::move(h), flag.substr(2))
                      : result<std::unique_ptr<admin_server>, admin_errc>(at.error());
    if (!started) spdlog::error("{} {}: {}", flag, text, started.error().message);
    return started ? std::move(*started) : nullptr;
  };
  std::unique_ptr<admin_server> admin, web;
  if (!o.admin.empty() && !(admin = serve("--admin", o.admin, false))) return exit_usage;
  if (pages && !(web = serve("--web", o.web, true))) return exit_usage;
  if (auto started = pool.start(); !started) {
    spdlog::error("{}", started.error().message);
    return exit_usage;
  }
  w->start();
  change_log changes;
  if (gateways) {
    auto where = [&w](player_id p) {
      auto at = w->locate(p);
      return at.wait_for(std::chrono::seconds(1)) == std::future_status::ready ? at.get() : location{};
    };
    if (auto started = gateways->start(*w, where); !started) {
      spdlog::error("--cluster {} --node {}: {}", o.cluster, o.node, started.error().message);
      stop_hosting(pool, *w, changes);
      return exit_usage;
    }
  }
  if (door) {
    if (auto started = door->start(*w); !started) {
      spdlog::error("{}", started.error().message);
      stop_hosting(pool, *w, changes);
      return exit_usage;
    }
  }
  spdlog::info(
      "hosting {} scene definitions from {} on {} workers{}{}{}{}{}", table->scenes.size(), o.table,
      pool.options().workers,
      admin ? fmt::format("; admin endpoint http://{}:{}", parse_endpoint(o.admin)->host, admin->port()) : "",
      door && !o.tcp.empty()
          ? fmt::format("; clients on tcp://{}:{}", parse_endpoint(o.tcp)->host, door->tcp_port())
          : "",
      door && !o.ws.empty()
          ? fmt::format("; WebSocket clients on ws://{}:{}", parse_endpoint(o.ws)->host, door->ws_port())
          : "",
      web ? fmt::format("; web pages on http://{}:{}/ ({} files from {})", parse_endpoint(o.web)->host,
                        web->port(), pages->size(), web_root.string())
          : "",
      door ? fmt::format("; {} I/O thread{} for clients", o.io_threads, o.io_threads == 1 ? "" : "s") : "");
  auto sampled = std::chrono::steady_clock::now();
  bool fenced = false;
  while (!wait_for_shutdown(milliseconds(250))) {
    const auto snapshot = w->snapshot();
    changes.update(*snapshot);
    const auto now = std::chrono::steady_clock::now();
    if (gateways) gateways->poll(now);
    if (node && !node->poll(static_cast<std::uint32_t>(snapshot->players), now)) {
      fenced = true;
      break;
    }
    if (now - sampled >= std::chrono::seconds(1)) {
      sampled = now;
      history.record(
          std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count(),
          snapshot->players, door ? door->stats().connections : 0, snapshot->requests, pool.metrics());
    }
  }
  stopping.store(true);
  if (door) {
    const auto s = door->stats();
    spdlog::info("saying goodbye to {} clients ({} accepted over the run)", s.connections, s.accepted);
    door->stop();
  }
  if (gateways) gateways->stop();
  stop_hosting(pool, *w, changes);
  if (fenced) return exit_fenced;
  if (node) node->leave();
  return exit_ok;
}

}  // namespace scenert::apps
