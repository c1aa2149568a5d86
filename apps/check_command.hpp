#pragma once
// `scenert check TABLE.json [--json]`: validate a scene table and print a summary or every error.

#include <CLI/CLI.hpp>

#include <string>

namespace scenert::apps {

/// What `check` was asked to do; filled in by the command-line parser.
struct check_options {
  std::string table;  ///< path of the scene table
  bool json = false;  ///< print the summary or the errors as JSON on stdout
};

/// Adds the `check` subcommand to `app`; `options` is filled in when it is parsed.
CLI::App* add_check_command(CLI::App& app, check_options& options);

/// Runs `check`; returns the process exit code (0 valid, 1 invalid table, 2 unreadable file).
int run_check(const check_options& options);

}  // namespace scenert::apps
