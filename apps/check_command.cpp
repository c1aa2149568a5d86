#include "check_command.hpp"

#include "check_summary.hpp"
#include "exit_codes.hpp"
#include "module_loading.hpp"

#include <scenert/config/table_loader.hpp>

#include <fmt/format.h>

#include <cstdio>

namespace scenert::apps {

CLI::App* add_check_command(CLI::App& app, check_options& options) {
  CLI::App* cmd = app.add_subcommand("check", "Validate a scene table and print a summary of it");
  cmd->add_option("table", options.table, "Scene table (JSON), e.g. examples/mmo.json")->required();
  cmd->add_flag("--json", options.json, "Print the summary, or the errors, as JSON on stdout");
  cmd->add_option(
      "--module", options.modules,
      "A library of game modules (PATH.so) whose parameters the table's modules are checked against");
  cmd->footer(
      "Exit status: 0 valid; 1 invalid table (every error on stderr as TABLE:/json/pointer: reason);\n"
      "2 usage error or unreadable file.");
  return cmd;
}

int run_check(const check_options& options) {
  const load_result loaded = load_table_file(options.table);
  if (loaded.ok()) {
    module_registry modules = options.registry ? *options.registry : module_registry{};
    if (int code = load_module_libraries(options.modules, modules); code != exit_ok) return code;
    if (int code = report_module_problems(*loaded.table, loaded.source, modules); code != exit_ok)
      return code;
    fmt::print("{}", options.json ? summary_json(loaded) + "\n" : summary_text(loaded));
    return exit_ok;
  }
  // Errors always go to stderr, one per line; --json also puts them on stdout for tools.
  if (options.json) fmt::print("{}\n", errors_json(loaded));
  for (const auto& d : loaded.diagnostics) fmt::print(stderr, "{}\n", format_diagnostic(loaded.source, d));
  return loaded.status == load_status::unreadable ? exit_usage : exit_invalid_table;
}

std::shared_ptr<const scene_table> load_table_or_report(const std::string& path, int& exit_code) {
  const load_result loaded = load_table_file(path);
  if (loaded.ok()) {
    exit_code = exit_ok;
    return loaded.table;
  }
  for (const auto& d : loaded.diagnostics) fmt::print(stderr, "{}\n", format_diagnostic(loaded.source, d));
  exit_code = loaded.status == load_status::unreadable ? exit_usage : exit_invalid_table;
  return nullptr;
}

}  // namespace scenert::apps
