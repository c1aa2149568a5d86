// A library of game modules that claims another scenert version: `scenert run --module` must refuse
// it with a clear error and exit 2 before calling anything of it.
#include <scenert/scene/module_library.hpp>

namespace {
void never_called(scenert::module_registry*) { __builtin_trap(); }
}  // namespace

extern "C" __attribute__((visibility("default"))) const scenert_module_library* scenert_module_entry() {
  static const scenert_module_library library{SCENERT_MODULE_ABI, "0.0.0-other", SCENERT_CXX11_ABI,
                                              &never_called};
  return &library;
}
