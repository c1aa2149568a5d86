#pragma once
/// module_library: the one entry point of a shared library of game modules, for
/// `scenert run --module PATH.so` (and `scenert check --module`). A library names its registration
/// function once:
///
///     void register_my_modules(scenert::module_registry* r) { (void)r->add("crypt_boss", make_boss); }
///     SCENERT_MODULE_LIBRARY(register_my_modules)
///
/// The macro exports `scenert_module_entry`, which tells the version of scenert the library was built
/// against; scenert refuses a library built against another version (its classes' layouts may differ).

#include <cstdint>

#include <scenert/scene/module_registry.hpp>
#include <scenert/scene/version.hpp>

/// Bumped when the module API changes in a way a library built against the old one cannot survive.
#define SCENERT_MODULE_ABI 3

extern "C" {
/// What a library of game modules tells the scenert that loads it.
struct scenert_module_library {
  std::uint32_t abi;        ///< SCENERT_MODULE_ABI of the headers it was built with
  const char* version;      ///< SCENERT_VERSION_STRING of the headers it was built with
  std::uint32_t cxx11_abi;  ///< the C++ library's string ABI (_GLIBCXX_USE_CXX11_ABI), 1 elsewhere
  void (*register_modules)(scenert::module_registry* registry);  ///< adds the library's modules
};
}

#if defined(_GLIBCXX_USE_CXX11_ABI)
#define SCENERT_CXX11_ABI _GLIBCXX_USE_CXX11_ABI
#else
#define SCENERT_CXX11_ABI 1
#endif

/// The name of the exported entry point, as dlsym looks it up.
#define SCENERT_MODULE_ENTRY_NAME "scenert_module_entry"

/// Exports the library's entry point; `register_fn` is `void(scenert::module_registry*)`.
#define SCENERT_MODULE_LIBRARY(register_fn)                                                                \
  extern "C" __attribute__((visibility("default"))) const scenert_module_library* scenert_module_entry() { \
    static const scenert_module_library library{SCENERT_MODULE_ABI, SCENERT_VERSION_STRING,                \
                                                SCENERT_CXX11_ABI, &(register_fn)};                        \
    return &library;                                                                                       \
  }
