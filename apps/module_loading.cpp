#include "module_loading.hpp"

#include "exit_codes.hpp"

#include <scenert/config/table_loader.hpp>
#include <scenert/scene/module_library.hpp>

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstring>

namespace scenert::apps {

namespace {

using entry_fn = const scenert_module_library* (*)();

// Why a library's entry point does not fit this scenert, or empty when it does.
std::string mismatch(const scenert_module_library& lib) {
  if (lib.abi != SCENERT_MODULE_ABI || lib.version == nullptr ||
      std::strcmp(lib.version, SCENERT_VERSION_STRING) != 0)
    return fmt::format(
        "built against scenert {} (module ABI {}), this is scenert {} (module ABI {}): "
        "rebuild it against this scenert's package",
        lib.version != nullptr ? lib.version : "(unknown)", lib.abi, SCENERT_VERSION_STRING,
        SCENERT_MODULE_ABI);
  if (lib.cxx11_abi != SCENERT_CXX11_ABI)
    return fmt::format("built with _GLIBCXX_USE_CXX11_ABI={}, this scenert with {}", lib.cxx11_abi,
                       SCENERT_CXX11_ABI);
  if (lib.register_modules == nullptr) return "its entry point registers nothing";
  return {};
}

// The library's modules added to `into`, or why not. The library stays loaded for the process's
// life: its modules' code runs on every line that uses them.
std::string load_one(const std::string& path, module_registry& into) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return fmt::format("cannot load it: {}", dlerror());
  auto entry = reinterpret_cast<entry_fn>(dlsym(handle, SCENERT_MODULE_ENTRY_NAME));
  if (entry == nullptr)
    return fmt::format("no {} entry point (declare one with SCENERT_MODULE_LIBRARY)",
                       SCENERT_MODULE_ENTRY_NAME);
  const scenert_module_library* lib = entry();
  if (lib == nullptr) return "its entry point returned nothing";
  if (auto why = mismatch(*lib); !why.empty()) return why;
  // Registered into a copy first: a library that fails half-way adds nothing.
  module_registry mine;
  lib->register_modules(&mine);
  for (const auto& name : mine.names())
    if (auto added = into.add(name, *mine.find(name)); !added) return added.error().message;
  return {};
}

}  // namespace

int load_module_libraries(const std::vector<std::string>& paths, module_registry& into) {
  for (const auto& path : paths) {
    std::string why;
    try {
      why = load_one(path, into);
    } catch (const std::exception& e) {
      why = fmt::format("its registration threw: {}", e.what());
    }
    if (!why.empty()) {
      fmt::print(stderr, "--module {}: {}\n", path, why);
      return exit_usage;
    }
  }
  return exit_ok;
}

int report_module_problems(const scene_table& table, const std::string& source,
                           const module_registry& registry) {
  const auto problems = check_modules(table, registry);
  for (const auto& d : problems) fmt::print(stderr, "{}\n", format_diagnostic(source, d));
  return problems.empty() ? exit_ok : exit_invalid_table;
}

}  // namespace scenert::apps
