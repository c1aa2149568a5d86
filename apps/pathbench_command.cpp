#include "pathbench_command.hpp"

#include "exit_codes.hpp"

#include <scenert/nav/pathbench.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <fstream>

namespace scenert::apps {

CLI::App* add_pathbench_command(CLI::App& app, pathbench_command_options& o) {
  CLI::App* cmd = app.add_subcommand(
      "pathbench", "Run every scenario of a Moving AI benchmark (.map and .scen): lengths and paths checked");
  cmd->add_option("map", o.map, "The map (.map)")->required();
  cmd->add_option("scen", o.scen, "Its scenarios (.scen)")->required();
  cmd->add_option("--algo", o.algo,
                  "Which searches: astar, jps or all (JPS's speedup over A* from the same run)")
      ->capture_default_str()
      ->check(CLI::IsMember({"astar", "jps", "all"}));
  cmd->add_option(
         "--budget", o.budget,
         "Run each search sliced, this many expansions per step, and check it equals the unsliced one")
      ->check(CLI::Range(0u, 100'000'000u));
  cmd->add_option("--repeat", o.repeat, "Timed runs per scenario and algorithm (the median is kept)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--report", o.report, "Write the report as JSON to this file");
  cmd->add_flag("--json", o.json, "Print the report as JSON instead of the table");
  cmd->footer("Exit status: 0 every path exact; 2 usage error or unreadable file; 3 a wrong length or path.");
  return cmd;
}

int run_pathbench_command(const pathbench_command_options& c) {
  nav::pathbench_options o;
  o.map_path = c.map;
  o.scen_path = c.scen;
  o.algos = c.algo == "astar" ? nav::pathbench_algos::astar
            : c.algo == "jps" ? nav::pathbench_algos::jps
                              : nav::pathbench_algos::all;
  o.budget = c.budget;
  o.repeat = c.repeat;
  const auto report = nav::pathbench(o);
  if (!report.error.empty()) {
    fmt::print(stderr, "{}\n", report.error);
    return exit_usage;
  }
  for (const auto& failure : report.failures) fmt::print(stderr, "{}\n", failure);
  fmt::print("{}", c.json ? nav::to_json(report) + "\n" : nav::to_text(report));
  if (!c.report.empty()) {
    std::ofstream out(c.report);
    out << nav::to_json(report) << '\n';
    if (!out) {
      fmt::print(stderr, "--report {}: cannot write\n", c.report);
      return exit_usage;
    }
  }
  return report.exit_code;
}

}  // namespace scenert::apps
