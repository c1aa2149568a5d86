#pragma once
/// Maps and scenarios in the Moving AI grid benchmark format (N. Sturtevant, "Benchmarks for
/// Grid-Based Pathfinding", IEEE TCIAIG 4(2), 2012). Bad input is an error naming the file, the
/// line and the reason; nothing throws and nothing crashes on any input.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/nav/types.hpp>

namespace scenert::nav {

/// A `.map`: its size and one byte per cell, row-major (1 = blocked: all but `.` and `G`).
struct movingai_map {
  std::uint32_t width = 0;            ///< columns
  std::uint32_t height = 0;           ///< rows
  std::vector<std::uint8_t> blocked;  ///< width * height bytes, ready for nav_map::create
};

/// One row of a `.scen`: a query and its optimal length.
struct scenario {
  std::uint32_t bucket = 0;                     ///< the file's bucket (about length / 4)
  std::string map;                              ///< the map file named by the row
  std::uint32_t map_width = 0, map_height = 0;  ///< the map's size as the row states it
  cell start, goal;                             ///< the query
  double length = 0;                            ///< optimal length (0 with start != goal: no path)
  std::uint32_t line = 0;                       ///< the row's line in the file, for messages
};

/// Parses the text of a `.map`; `file` names it in errors; lines after one starting with '/' are notes.
nav_result<movingai_map> parse_movingai_map(std::string_view text, std::string_view file);
/// Parses the text of a `.scen` (version 1); rows after a line starting with '/' are notes.
nav_result<std::vector<scenario>> parse_movingai_scen(std::string_view text, std::string_view file);
/// Reads and parses a `.map` file.
nav_result<movingai_map> load_movingai_map(const std::string& path);
/// Reads and parses a `.scen` file.
nav_result<std::vector<scenario>> load_movingai_scen(const std::string& path);

}  // namespace scenert::nav
