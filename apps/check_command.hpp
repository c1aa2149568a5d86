#pragma once
// `scenert check TABLE.json [--json]`: validate a scene table and print a summary or every error.

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include <scenert/config/scene_table.hpp>
#include <scenert/scene/module_registry.hpp>

namespace scenert::apps {

/// What `check` was asked to do; filled in by the command-line parser.
struct check_options {
  std::string table;                          ///< path of the scene table
  bool json = false;                          ///< print the summary or the errors as JSON on stdout
  std::vector<std::string> modules;           ///< libraries of game modules (--module)
  const module_registry* registry = nullptr;  ///< the modules built into this executable
};

/// Adds the `check` subcommand to `app`; `options` is filled in when it is parsed.
CLI::App* add_check_command(CLI::App& app, check_options& options);

/// Runs `check`; returns the process exit code (0 valid, 1 invalid table or module parameters,
/// 2 unreadable file or a --module library that cannot be loaded).
int run_check(const check_options& options);

/// Loads a table for `run` and `loadtest`. On failure prints every error as `check` does and
/// returns null with `exit_code` set (1 invalid table, 2 unreadable file).
[[nodiscard]] std::shared_ptr<const scene_table> load_table_or_report(const std::string& path,
                                                                      int& exit_code);

}  // namespace scenert::apps
