// The dungeon's server: scenert's whole command line with the crypt_boss module built in.
//   dungeon_server check table.json      checks the table and the module's parameters
//   dungeon_server run table.json ...    serves it (every flag of `scenert run`)
#include <scenert/apps/main.hpp>

#include <dungeon/crypt_boss.hpp>

int main(int argc, char** argv) {
  scenert::module_registry modules;
  dungeon::register_modules(modules);
  return scenert::apps::main(argc, argv, modules);
}
