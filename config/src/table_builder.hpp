#pragma once
// Turns a parsed JSON document into a scene_table: applies the defaults (the only place they live) and
// checks types, keys, ranges, duplicate ids and references, reporting every problem to the sink.

#include "json_reader.hpp"

namespace scenert::detail {

/// Builds the table; the result is meaningful only when the sink stayed empty.
[[nodiscard]] scene_table build_table(const json& document, diagnostic_sink& sink);

}  // namespace scenert::detail
