#pragma once
// A scene's `module` object: its name and its parameters, kept as plain values for the module to
// check (config/ knows no module; `scenert check` asks the registry about the name and the keys).

#include "json_reader.hpp"

#include <scenert/config/scene_table.hpp>

namespace scenert::detail {

/// Reads `module` of a scene into `s.module` when present; reports a wrong shape or a missing name.
void read_module(object_reader& scene, scene_def& s);

/// The JSON value as a module_value tree.
[[nodiscard]] module_value to_module_value(const json& v);

}  // namespace scenert::detail
