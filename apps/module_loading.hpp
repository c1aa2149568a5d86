#pragma once
// Game modules for `scenert run` and `scenert check`: the libraries named by --module loaded into a
// registry (version-checked), and the table's modules checked against it.

#include <string>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/scene/module_registry.hpp>

namespace scenert::apps {

/// Loads each library (dlopen) and lets it register its modules. A library that cannot be opened,
/// has no entry point, was built against another scenert or registers a name twice is an error on
/// stderr naming it; returns the exit code (0, or 2 for the first such library).
[[nodiscard]] int load_module_libraries(const std::vector<std::string>& paths, module_registry& into);

/// Prints every problem with the table's modules (unknown names, wrong parameters) as
/// `SOURCE:/json/pointer: reason` on stderr; returns 0, or 1 when there is one.
[[nodiscard]] int report_module_problems(const scene_table& table, const std::string& source,
                                         const module_registry& registry);

}  // namespace scenert::apps
