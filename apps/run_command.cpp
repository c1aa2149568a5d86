#include "run_command.hpp"

#include <scenert/admin/server.hpp>
#include <scenert/net/front.hpp>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <tuple>

namespace scenert::apps {

using std::chrono::milliseconds;
using namespace scenert::admin;

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
  if (o.read_timeout_ms >= 0) f.read_timeout = milliseconds(o.read_timeout_ms);
  if (o.guest_wait_ms >= 0) f.guest_wait = milliseconds(o.guest_wait_ms);
  if (o.max_outbound_bytes >= 0) f.max_outbound_bytes = static_cast<std::size_t>(o.max_outbound_bytes);
  f.send_buffer_bytes = o.send_buffer_bytes;
  f.io_threads = o.io_threads;
  f.admission = o.admission;  // each --admit-* flag is checked on its own: together they are good
  return f;
}

namespace {

// --cluster, --node, --hosts and --dead-after-ms: a scene node of a cluster.
void add_cluster_options(CLI::App* cmd, run_options& o) {
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
}

}  // namespace

void add_guest_wait_option(CLI::App* cmd, run_options& o) {
  cmd->add_option(
         "--guest-wait-ms", o.guest_wait_ms,
         "A TCP client that sends nothing this long after connecting plays as a guest, as seed 002's "
         "clients do (default 50); raise it where every client logs in from a loaded machine")
      ->check(CLI::Range(std::int64_t{10}, std::int64_t{60'000}));
}

namespace {

// The limits a client meets beyond the table's network settings: timeouts and write buffers.
void add_client_limit_options(CLI::App* cmd, run_options& o) {
  add_guest_wait_option(cmd, o);
  cmd->add_option("--read-timeout-ms", o.read_timeout_ms,
                  "A client holding half a frame this long is closed (half_frame; default 10000)")
      ->check(CLI::Range(std::int64_t{100}, std::int64_t{600'000}));
  cmd->add_option("--max-outbound-bytes", o.max_outbound_bytes,
                  "A client this many bytes behind in reading is cut (slow_reader; default 1048576)")
      ->check(CLI::Range(std::int64_t{4096}, std::int64_t{1} << 30));
  cmd->add_option("--send-buffer-bytes", o.send_buffer_bytes,
                  "Each client socket's kernel send buffer (SO_SNDBUF; default: the kernel's, megabytes on "
                  "loopback): what a client that does not read holds beside --max-outbound-bytes")
      ->check(CLI::Range(std::size_t{0}, std::size_t{64} << 20));
}

// --admit and its lines: when new logins are refused (server_busy) so that the players in keep theirs.
void add_admission_options(CLI::App* cmd, run_options& o) {
  using ms = std::chrono::milliseconds;
  auto& a = o.admission;
  cmd->add_option_function<std::string>(
         "--admit", [&a](const std::string& v) { a.enabled = v == "on"; },
         "on: past an --admit-* line new logins are refused with server_busy and a retry-after, the players "
         "in are served; off (default): every login is admitted (the headroom is measured all the same)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option_function<std::int64_t>(
         "--admit-tick-lateness-ms", [&a](std::int64_t v) { a.max_tick_lateness = ms(v); },
         "Refuse new logins while the p99 of how late the lines' ticks start stays over this (default 50)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{10'000}));
  cmd->add_option("--admit-io-busy", a.max_io_busy,
                  "Refuse new logins while the busiest client I/O thread works more than this share of the "
                  "time (0.01-1; default 0.85)")
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_option_function<std::int64_t>(
         "--admit-io-lag-ms", [&a](std::int64_t v) { a.max_io_lag = ms(v); },
         "Refuse new logins while a client I/O thread runs its work this late (its quarter-second timer; "
         "default 50)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{10'000}));
  cmd->add_option("--admit-write-queue-bytes", a.max_write_queue_bytes,
                  "Refuse new logins while a tenth of the clients have more than this many bytes queued "
                  "unwritten (default 65536)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
  cmd->add_option_function<std::int64_t>(
         "--admit-close-after-ms", [&a](std::int64_t v) { a.close_after = ms(v); },
         "How long a measure stays over its line before new logins are refused (default 1000)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{600'000}));
  cmd->add_option_function<std::int64_t>(
         "--admit-reopen-after-ms", [&a](std::int64_t v) { a.reopen_after = ms(v); },
         "How long every measure stays under 70% of its line before logins are admitted again (default 3000)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{600'000}));
  cmd->add_option_function<std::int64_t>(
         "--admit-retry-after-ms", [&a](std::int64_t v) { a.retry_after = ms(v); },
         "What a refused client is told to wait before trying again, plus up to half of it at random "
         "(default 2000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{3'600'000}));
}

}  // namespace

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
  add_client_limit_options(cmd, o);
  add_admission_options(cmd, o);
  cmd->add_option("--io-threads", o.io_threads,
                  "Threads for the clients' sockets, apart from the pool's workers; connections are "
                  "dealt to them in turn and each fans the lines' events out to its own (default 1)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
  cmd->add_option("--module", o.modules,
                  "A library of game modules (PATH.so) for the scenes that name them; repeatable. A library "
                  "built against another scenert is refused (exit 2)");
  cmd->add_option(
      "--store", o.store,
      "The player store: a SQLite file where what game modules give players is kept (made when "
      "absent). Default: beside the table, TABLE.store.sqlite, when a scene of it names a module; with "
      "--cluster, the cluster's JetStream bucket scenert-players instead, shared by every node and gateway "
      "(give --store FILE to keep a node's own file: its players' items are then found on that node only)");
  add_cluster_options(cmd, o);
  cmd->footer(
      "Exit status: 0 stopped cleanly; 1 invalid table; 2 usage error, unreadable file, admin or\n"
      "client endpoint that cannot be bound, a pool that cannot start (e.g. --realtime refused) or a\n"
      "cluster that cannot be joined, or a player store that cannot be opened; 4 a cluster node fenced "
      "(declared dead or replaced).");
  return cmd;
}

}  // namespace scenert::apps
