// The reference dungeon's module (examples/dungeon) as a library `scenert run --module` loads, so that
// the play page's test plays it against this tree's `scenert` (the consumer stage builds the example's
// own server from the installed package).
#include <scenert/scene/module_library.hpp>

#include <dungeon/crypt_boss.hpp>

namespace {

void register_dungeon(scenert::module_registry* registry) { dungeon::register_modules(*registry); }

}  // namespace

SCENERT_MODULE_LIBRARY(register_dungeon)
