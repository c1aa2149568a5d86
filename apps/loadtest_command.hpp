#pragma once
// `scenert loadtest TABLE.json [--players N] [--seconds S] [--seed K] [--workers W] [--rate R]
// [--report FILE] [--threshold EXPR]...`: simulated players against an in-process world.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace scenert::apps {

/// What `loadtest` was asked to do; filled in by the command-line parser.
struct loadtest_options {
  std::string table;
  std::uint32_t players = 2000;
  double seconds = 10;
  std::uint64_t seed = 1;
  unsigned workers = 0;  ///< 0: the table's runtime.workers
  double rate = 0;       ///< arrivals per second; 0: every player arrives within the first quarter
  double move_period = 1.0;
  int idle_grace_ms = -1;  ///< overrides the table's runtime.idle_grace_ms when >= 0
  std::string report;      ///< JSON report file; empty: none
  std::vector<std::string> thresholds;
  bool quiet = false;  ///< no progress lines
};

/// Adds the `loadtest` subcommand to `app`; `options` is filled in when it is parsed.
CLI::App* add_loadtest_command(CLI::App& app, loadtest_options& options);

/// Runs `loadtest`; returns the exit code (0 held, 1 invalid table, 2 usage, 3 invariant or threshold).
int run_loadtest(const loadtest_options& options);

}  // namespace scenert::apps
