#include "gateway_command.hpp"

#include <scenert/admin/gateway_admin.hpp>
#include <scenert/admin/server.hpp>
#include <scenert/admin/world_admin.hpp>
#include "check_command.hpp"
#include "exit_codes.hpp"
#include "shutdown_signal.hpp"

#include <unistd.h>

#include <scenert/cluster/gateway.hpp>
#include <scenert/cluster/kv_player_store.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <optional>

namespace scenert::apps {

using namespace scenert::admin;
namespace {

using std::chrono::milliseconds;

std::string name_of(const gateway_options& o) {
  return o.name.empty() ? fmt::format("gateway-{}", ::getpid()) : o.name;
}

// The gateway's options from the flags: the table read, a listener given, the front's options.
std::optional<cluster::gateway_options> cluster_gateway_options(const gateway_options& o, int& code) {
  auto table = load_table_or_report(o.front.table, code);
  if (!table) return std::nullopt;
  if (o.front.tcp.empty() && o.front.ws.empty()) {
    spdlog::error("gateway: give --tcp or --ws (or both): a gateway without listeners serves nobody");
    code = exit_usage;
    return std::nullopt;
  }
  auto front = front_options_for(o.front);
  if (!front) {
    spdlog::error("{}", front.error().message);
    code = exit_usage;
    return std::nullopt;
  }
  front->hand_off_on_stop = o.hand_off;
  cluster::gateway_options g;
  g.name = name_of(o);
  g.cluster = o.front.cluster;
  g.table = std::move(table);
  g.front = std::move(*front);
  g.answer_timeout = milliseconds(o.answer_timeout_ms);
  g.journeys = o.journeys;
  g.open_lines_on = o.open_lines_on == "player-node" ? cluster::line_opening::player_node
                                                     : cluster::line_opening::least_loaded_node;
  g.info = [](std::string_view what) { spdlog::info("{}", what); };
  g.warn = [](std::string_view what) { spdlog::warn("{}", what); };
  return g;
}

// /livez, /readyz (503 once `stopping`) and /metrics on `at`.
result<std::unique_ptr<admin_server>, admin_errc> start_admin(const std::string& at_text,
                                                              const cluster::gateway& gateway,
                                                              const std::atomic<bool>& stopping) {
  auto at = parse_endpoint(at_text);
  if (!at) return at.error();
  return admin_server::start(*at, gateway_admin_handlers(gateway, stopping), "admin");
}

void log_started(const gateway_options& o, const cluster::gateway& gateway, const admin_server* admin) {
  const auto ids = gateway.player_ids();
  spdlog::info(
      "gateway {} on the cluster at {} ({} live scene nodes; player ids {}-{}){}{}{}", name_of(o),
      o.front.cluster, gateway.stats().world.live_nodes, ids.first, ids.last,
      o.front.tcp.empty()
          ? ""
          : fmt::format("; clients on tcp://{}:{}", parse_endpoint(o.front.tcp)->host, gateway.tcp_port()),
      o.front.ws.empty() ? ""
                         : fmt::format("; WebSocket clients on ws://{}:{}", parse_endpoint(o.front.ws)->host,
                                       gateway.ws_port()),
      admin ? fmt::format("; admin endpoint http://{}:{}", parse_endpoint(o.front.admin)->host, admin->port())
            : "");
}

// The cluster's player store, when a scene of the table names a game module: the players logged in
// here sign in as their accounts (the nodes' grants find them there) and hear what they hold (1014).
result<std::unique_ptr<cluster::kv_player_store>, store_errc> open_store(const gateway_options& o,
                                                                         const scene_table& table) {
  if (std::none_of(table.scenes.begin(), table.scenes.end(),
                   [](const scene_def& s) { return s.module.has_value(); }))
    return std::unique_ptr<cluster::kv_player_store>();
  cluster::kv_store_options ko;
  ko.url = o.front.cluster;
  ko.name = fmt::format("{}-store", name_of(o));
  return cluster::kv_player_store::open(std::move(ko));
}

}  // namespace

CLI::App* add_gateway_command(CLI::App& app, gateway_options& o) {
  CLI::App* cmd = app.add_subcommand(
      "gateway",
      "Hold the game clients of a cluster: their connections here, their lines on the scene nodes");
  cmd->add_option("table", o.front.table, "Scene table (JSON), the same the nodes host")->required();
  cmd->add_option("--cluster", o.front.cluster, "The cluster's NATS server (JetStream on), nats://HOST:PORT")
      ->required();
  cmd->add_option("--name", o.name,
                  "This gateway's name in the cluster (1-53 letters, digits, '-', '_'; default gateway-PID)");
  cmd->add_option("--tcp", o.front.tcp, "Let game clients connect on HOST:PORT (port 0 = any)");
  cmd->add_option("--ws", o.front.ws, "Let WebSocket clients connect on HOST:PORT");
  cmd->add_option("--admin", o.front.admin, "Serve /livez /readyz /metrics on HOST:PORT");
  add_guest_wait_option(cmd, o.front);
  cmd->add_option("--max-frame", o.front.max_frame,
                  "Largest frame payload in bytes (default: the table's network.max_frame_bytes)")
      ->check(CLI::Range(16u, 16u * 1024 * 1024));
  cmd->add_option("--resume-ms", o.front.resume_ms,
                  "How long a dropped player keeps its place for its resume token (default: the table's)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{3'600'000}));
  cmd->add_option("--max-connections", o.front.max_connections, "Client connections at once")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  cmd->add_option("--io-threads", o.front.io_threads, "Threads for the clients' sockets (default 1)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
  cmd->add_option("--answer-timeout-ms", o.answer_timeout_ms,
                  "A request its node has not answered this soon is answered node_unavailable (default 5000)")
      ->check(CLI::Range(std::int64_t{100}, std::int64_t{600'000}));
  cmd->add_flag("!--no-journeys", o.journeys,
                "A team join to a mate on another node, or a line switch to a line hosted there, is answered "
                "by the player's own node as if that line were not open (default: the player travels there)");
  cmd->add_flag(
      "!--no-hand-off", o.hand_off,
      "On SIGTERM the gateway's players leave the world (default: they stay, and their clients, told "
      "to, log in again through another gateway with their resume tokens within resume_ms: a "
      "rolling restart)");
  cmd->add_option("--open-lines-on", o.open_lines_on,
                  "Where a scene's next line opens once all its lines are full: least-loaded (the node with "
                  "the fewest players; default) or player-node (the node the player stands on: no journey)")
      ->check(CLI::IsMember({"least-loaded", "player-node"}));
  cmd->footer(
      "When a scene of the table names a game module, players logged in by name sign in to the cluster's\n"
      "player store (the JetStream bucket scenert-players), where the nodes keep what their modules grant.\n"
      "Exit status: 0 stopped cleanly; 1 invalid table; 2 usage error, unreadable file, an endpoint that\n"
      "cannot be bound or a cluster that cannot be reached.");
  return cmd;
}

int run_gateway(const gateway_options& o) {
  block_shutdown_signals();  // before any thread starts: every thread inherits the mask
  set_up_logging();
  int code = exit_ok;
  auto options = cluster_gateway_options(o, code);
  if (!options) return code;
  auto items = open_store(o, *options->table);  // outlives the gateway: declared before it
  if (!items) {
    spdlog::error("--cluster {}: {}", o.front.cluster, items.error().message);
    return exit_usage;
  }
  options->front.store = items->get();
  auto started = cluster::gateway::start(std::move(*options));
  if (!started) {
    spdlog::error("{}", started.error().message);
    return exit_usage;
  }
  cluster::gateway& gateway = **started;
  std::atomic<bool> stopping{false};
  std::unique_ptr<admin_server> admin;
  if (!o.front.admin.empty()) {
    auto served = start_admin(o.front.admin, gateway, stopping);
    if (!served) {
      spdlog::error("--admin {}: {}", o.front.admin, served.error().message);
      return exit_usage;
    }
    admin = std::move(served).value();
  }
  log_started(o, gateway, admin.get());
  while (!wait_for_shutdown(std::chrono::hours(1))) {
  }
  stopping.store(true);
  const auto s = gateway.stats().front;
  spdlog::info("saying goodbye to {} clients ({} accepted over the run){}", s.connections, s.accepted,
               o.hand_off ? "; their players stay for them to resume through another gateway" : "");
  gateway.stop();
  if (*items) (*items)->stop();
  return exit_ok;
}

}  // namespace scenert::apps
