// The `scenert` command line as a library call (scenert/apps/main.hpp): one subcommand per file
// (check_command.cpp, ...), wired up here. The `scenert` executable is this call with no module of
// its own (scenert_main.cpp); a studio's executable passes its modules.

#include "bots_command.hpp"
#include "check_command.hpp"
#include "exit_codes.hpp"
#include "gateway_command.hpp"
#include "loadtest_command.hpp"
#include "pathbench_command.hpp"
#include "run_command.hpp"

#include <scenert/apps/main.hpp>

#include <CLI/CLI.hpp>

int scenert::apps::main(int argc, char** argv, const module_registry& modules) {
  return main(argc, argv, modules, bots::party_scripts{});
}

int scenert::apps::main(int argc, char** argv, const module_registry& modules,
                        const bots::party_scripts& parties) {
  CLI::App app{
      "scenert: host MMO game scenes, validate scene tables, load-test line allocation and real clients"};
  app.set_version_flag("--version", SCENERT_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 success; 1 invalid table; 2 usage error or unreadable file; 3 invariant broken.");

  check_options check;
  check.registry = &modules;
  CLI::App* check_cmd = add_check_command(app, check);
  run_options run;
  run.registry = &modules;
  CLI::App* run_cmd = add_run_command(app, run);
  loadtest_options loadtest;
  CLI::App* loadtest_cmd = add_loadtest_command(app, loadtest);
  bots_command_options bots;
  bots.scripts = &parties;
  CLI::App* bots_cmd = add_bots_command(app, bots);
  gateway_options gateway;
  CLI::App* gateway_cmd = add_gateway_command(app, gateway);
  pathbench_command_options pathbench;
  CLI::App* pathbench_cmd = add_pathbench_command(app, pathbench);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with 0; everything else is a usage error.
    return app.exit(e) == 0 ? exit_ok : exit_usage;
  }
  if (check_cmd->parsed()) return run_check(check);
  if (run_cmd->parsed()) return run_host(run);
  if (loadtest_cmd->parsed()) return run_loadtest(loadtest);
  if (bots_cmd->parsed()) return run_bots_command(bots);
  if (gateway_cmd->parsed()) return run_gateway(gateway);
  if (pathbench_cmd->parsed()) return run_pathbench_command(pathbench);
  return exit_usage;
}
