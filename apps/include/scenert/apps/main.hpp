#pragma once
/// The whole `scenert` command line as one call, for a studio's own server executable: its game
/// modules are built in (a registry), and every subcommand, flag and exit code is scenert's.
///
///     int main(int argc, char** argv) {
///       scenert::module_registry modules;
///       (void)modules.add("crypt_boss", make_crypt_boss);
///       return scenert::apps::main(argc, argv, modules);
///     }

#include <scenert/bots/party_script.hpp>
#include <scenert/scene/module_registry.hpp>

namespace scenert::apps {

/// Parses `argv` as `scenert` does and runs the subcommand; `modules` are the game modules a table
/// may name (`--module PATH.so` adds more). Returns the exit code (0 ok, 1 invalid table, 2 usage or
/// unreadable file, 3 an invariant broke). Runs on the calling thread until the command ends.
[[nodiscard]] int main(int argc, char** argv, const module_registry& modules);

/// As above, and `parties` are the party scripts `bots --play NAME` may name: how a party plays the
/// studio's dungeons (scenert/bots/party_script.hpp).
[[nodiscard]] int main(int argc, char** argv, const module_registry& modules,
                       const bots::party_scripts& parties);

}  // namespace scenert::apps
