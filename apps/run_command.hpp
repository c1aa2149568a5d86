#pragma once
// `scenert run TABLE.json [--workers W] [--admin HOST:PORT]`: host the world until SIGINT/SIGTERM.

#include <CLI/CLI.hpp>

#include <string>

namespace scenert::apps {

/// What `run` was asked to do; filled in by the command-line parser.
struct run_options {
  std::string table;
  unsigned workers = 0;  ///< 0: the table's runtime.workers
  std::string admin;     ///< HOST:PORT of the admin endpoint; empty: none
};

/// Adds the `run` subcommand to `app`; `options` is filled in when it is parsed.
CLI::App* add_run_command(CLI::App& app, run_options& options);

/// Runs `run` until SIGINT or SIGTERM; returns the exit code (0 clean stop, 1 invalid table,
/// 2 usage error, unreadable file or an admin endpoint that cannot be bound).
int run_host(const run_options& options);

}  // namespace scenert::apps
