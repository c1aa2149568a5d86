// The dungeon's server: scenert's whole command line with the crypt_boss module built in.
//   dungeon_server check table.json      checks the table and the module's parameters
//   dungeon_server run table.json ...    serves it (every flag of `scenert run`)
//   dungeon_server bots HOST:PORT --play crypt --play-scene 2 --parties 3
//                                        parties of bots fight the boss, loot, and find their loot again
#include <scenert/apps/main.hpp>

#include <dungeon/crypt_boss.hpp>
#include <dungeon/crypt_party.hpp>

int main(int argc, char** argv) {
  scenert::module_registry modules;
  dungeon::register_modules(modules);
  scenert::bots::party_scripts parties;
  dungeon::register_parties(parties);
  return scenert::apps::main(argc, argv, modules, parties);
}
