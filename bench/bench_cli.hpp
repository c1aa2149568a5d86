#pragma once
// The macro benches' command lines, read by CLI11 as the `scenert` command's are: --help prints the
// flags and exits 0; an unknown flag, a missing or malformed value, or one out of its range prints
// the reason and exits 2 (the command-line contract), never an exception out of main.

#include <CLI/CLI.hpp>

#include <cstdlib>

namespace scenert::bench {

/// Parses `argv` into the options `app` was given, or exits as the contract says.
inline void parse_or_exit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
}

}  // namespace scenert::bench
