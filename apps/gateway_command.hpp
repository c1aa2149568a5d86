#pragma once
// `scenert gateway TABLE --cluster nats://HOST:PORT [--name NAME] [--tcp HOST:PORT] [--ws HOST:PORT]
// [--admin HOST:PORT]`: the network front of a cluster. It holds the clients' connections and mirrors
// the lines they stand on; the lines themselves run on the scene nodes (`scenert run --cluster`).

#include <CLI/CLI.hpp>

#include "run_command.hpp"

namespace scenert::apps {

/// The gateway's flags: run's front and admin flags, the cluster's address and the gateway's name.
struct gateway_options {
  run_options front;  ///< table, tcp, ws, admin, max_frame, resume_ms, max_connections, io_threads, cluster
  std::string name;   ///< empty: gateway-PID
  std::int64_t answer_timeout_ms = 5000;
  bool journeys = true;
  bool hand_off = true;  // on SIGTERM its players stay for their clients to resume elsewhere
  std::string open_lines_on = "least-loaded";  ///< or "player-node"
};

/// Adds the `gateway` subcommand to `app`; `options` is filled in when it is parsed.
CLI::App* add_gateway_command(CLI::App& app, gateway_options& options);

/// Runs `gateway` until SIGINT or SIGTERM; returns the exit code (0 clean stop, 1 invalid table,
/// 2 usage error, an endpoint that cannot be bound or a cluster that cannot be reached).
int run_gateway(const gateway_options& options);

}  // namespace scenert::apps
