#pragma once
// Renders a valid scene table or a failed load, as text for people or as JSON for tools.

#include <scenert/config/table_loader.hpp>

#include <string>

namespace scenert::apps {

/// The readable summary: runtime settings, maps (areas, view) and scenes (lines, slots per group).
[[nodiscard]] std::string summary_text(const load_result& loaded);
/// The same summary as one JSON object.
[[nodiscard]] std::string summary_json(const load_result& loaded);
/// Every diagnostic as one JSON object ({"file", "status", "errors": [...]}).
[[nodiscard]] std::string errors_json(const load_result& loaded);

/// Areas across and down a map: ceil(width / area_width) x ceil(height / area_height).
[[nodiscard]] std::uint32_t areas_across(const map_def& m);
[[nodiscard]] std::uint32_t areas_down(const map_def& m);

}  // namespace scenert::apps
