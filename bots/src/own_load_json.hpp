#pragma once
// The JSON of the bots' own load, for the report (nlohmann/json stays inside the library's sources).

#include <scenert/bots/own_load.hpp>

#include <nlohmann/json.hpp>

namespace scenert::bots {

// {"read_lag": {...}, "loop_lag": {...}, "cpu_seconds", "busy_share", "cores", "busiest_thread_share",
//  "busiest_thread_wait_share", "warnings": [...]}
nlohmann::json own_load_json(const own_load& o, const latency_histogram& move_to_viewer);

}  // namespace scenert::bots
