#pragma once
// `scenert run TABLE.json [--workers W] [--realtime P] [--admin HOST:PORT] [--tcp HOST:PORT]`: host
// the world until SIGINT/SIGTERM.

#include <CLI/CLI.hpp>

#include <scenert/admin/server.hpp>

#include <scenert/net/front.hpp>
#include <scenert/scene/module_registry.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace scenert::apps {

/// `scenert run`'s admission: off until `--admit on` (measured all the same), at the lines
/// docs/operators.md explains. Off by default while a server shares its machine's cores with its load
/// generator (the main job, the tests): the I/O lag there is the bots', which the server cannot tell
/// from its own.
[[nodiscard]] inline net::admission_options default_admission() { return {}; }

/// What `run` was asked to do; filled in by the command-line parser.
struct run_options {
  std::string table;
  unsigned workers = 0;         ///< 0: the table's runtime.workers
  int realtime = 0;             ///< SCHED_FIFO priority of the pool's threads; 0: the normal scheduler
  std::string admin;            ///< HOST:PORT of the admin endpoint; empty: none
  std::string tcp;              ///< HOST:PORT where game clients connect; empty: none
  std::string ws;               ///< HOST:PORT where WebSocket clients connect; empty: none
  std::string web;              ///< HOST:PORT of the web pages, their WebSocket and JSON; empty: none
  std::string web_root;         ///< where the pages are; empty: the install tree, else the source tree
  std::uint32_t max_frame = 0;  ///< a frame's payload limit; 0: the table's network.max_frame_bytes
  std::int64_t resume_ms = -1;  ///< a dropped player's wait for its resume; -1: the table's
  std::size_t max_connections = 10'000;
  std::int64_t read_timeout_ms = -1;  ///< half a frame held this long closes it; -1: the front's 10 s
  std::int64_t guest_wait_ms = -1;  ///< a TCP client silent this long plays as a guest; -1: the front's 50 ms
  std::int64_t max_outbound_bytes = -1;  ///< a reader this far behind is cut; -1: the front's 1 MiB
  std::size_t send_buffer_bytes = 0;     ///< each client socket's SO_SNDBUF; 0: the kernel's
  std::size_t io_threads = 1;            ///< the front's I/O threads
  /// Admission before overload (--admit and --admit-*): off by default, at the front's lines.
  net::admission_options admission = default_admission();
  std::string cluster;                ///< nats://HOST:PORT of the cluster's NATS server; empty: one process
  std::string node;                   ///< this node's name in the cluster
  std::int64_t dead_after_ms = 3000;  ///< a cluster node silent this long is declared dead
  std::vector<std::string> hosts;     ///< the scene kinds this node hosts; empty: every scene
  std::vector<std::string> modules;   ///< libraries of game modules (--module PATH.so)
  /// The player store's file; empty: the cluster's bucket with --cluster, else beside the table (when a
  /// scene names a module).
  std::string store;
  const module_registry* registry = nullptr;  ///< the modules built into this executable
};

/// The log's format, on stderr; once per process.
void set_up_logging();

/// The front's options from the flags: endpoints checked, the table's network settings unless given.
[[nodiscard]] result<net::front_options, admin::admin_errc> front_options_for(const run_options& o);

/// `--guest-wait-ms` (run and gateway): how long a silent TCP client waits before it plays as a guest.
void add_guest_wait_option(CLI::App* cmd, run_options& o);

/// Adds the `run` subcommand to `app`; `options` is filled in when it is parsed.
CLI::App* add_run_command(CLI::App& app, run_options& options);

/// Runs `run` until SIGINT or SIGTERM; returns the exit code (0 clean stop, 1 invalid table,
/// 2 usage error, unreadable file, an admin or client endpoint that cannot be bound or a pool that
/// cannot start, e.g. a real-time priority the system refuses).
int run_host(const run_options& options);

}  // namespace scenert::apps
