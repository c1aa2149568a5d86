#pragma once
/// Loads a scene table from JSON: parse, apply defaults, validate, and report every error at once.
/// The format, its keys, defaults and ranges are documented in docs/scene-table.md; the defaults are
/// applied here (in the loader) and nowhere else. No JSON type leaks out of this header.

#include <scenert/config/scene_table.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace scenert {

/// One problem found in a table: where (a JSON Pointer, "" = the whole document) and why.
struct diagnostic {
  std::string pointer;       ///< RFC 6901 JSON Pointer, e.g. "/scenes/3/capacity"
  std::string reason;        ///< for a designer, e.g. "must be >= 1, got 0"
  std::uint32_t line = 0;    ///< 1-based; set for syntax errors only, 0 = unknown
  std::uint32_t column = 0;  ///< 1-based byte column; set with `line`

  friend bool operator==(const diagnostic&, const diagnostic&) = default;
};

/// How a load ended.
enum class load_status : std::uint8_t {
  ok,          ///< `table` is set, `diagnostics` is empty
  unreadable,  ///< the file could not be opened or read (one diagnostic says why)
  invalid,     ///< the text is not a valid table; `diagnostics` lists every error
};

/// The outcome of a load: a validated table, or every diagnostic.
/// Thread-safety: a plain value; the table it points to is immutable and may be shared freely.
struct load_result {
  load_status status = load_status::invalid;
  std::string source;                        ///< the file name (or the name given to parse_table)
  std::shared_ptr<const scene_table> table;  ///< set exactly when status == ok
  std::vector<diagnostic> diagnostics;       ///< in document order; empty when ok

  /// True when the table loaded.
  [[nodiscard]] bool ok() const noexcept { return status == load_status::ok; }
  /// Same as ok().
  explicit operator bool() const noexcept { return ok(); }
};

/// Largest text accepted (bytes) and deepest nesting of arrays/objects; beyond either the text is invalid.
inline constexpr std::size_t max_table_bytes = 16u << 20;
inline constexpr std::size_t max_table_depth = 64;
/// At most this many diagnostics are kept; one more line then says the list was cut.
inline constexpr std::size_t max_diagnostics = 1000;

/// Parses and validates `text`; `source_name` names it in the result (usually the file name).
/// Never throws on bad input.
[[nodiscard]] load_result parse_table(std::string_view text, std::string source_name);

/// Reads `path` and parses it; status unreadable when the file cannot be read.
[[nodiscard]] load_result load_table_file(const std::filesystem::path& path);

/// `SOURCE:/json/pointer: reason`; syntax errors read `SOURCE:LINE:COLUMN: reason`, and an error about
/// the whole document `SOURCE: reason`.
[[nodiscard]] std::string format_diagnostic(std::string_view source, const diagnostic& d);

/// `/json/pointer: reason` (or `LINE:COLUMN: reason`): the diagnostic without its source.
[[nodiscard]] std::string format_diagnostic(const diagnostic& d);

/// Stable lowercase names used in tables and messages ("town", "group", "fill_first", ...).
[[nodiscard]] std::string_view to_string(scene_kind k) noexcept;
[[nodiscard]] std::string_view to_string(scene_structure s) noexcept;
[[nodiscard]] std::string_view to_string(allocation_policy p) noexcept;
[[nodiscard]] std::string_view to_string(instance_mode m) noexcept;
[[nodiscard]] std::string_view to_string(monster_kind k) noexcept;

/// The path budget a scene of this kind gets when its table gives none: dungeons hold bosses that
/// search, fields hold many mobs, towns and guilds hold few monsters.
[[nodiscard]] constexpr std::uint32_t default_path_budget(scene_kind kind) noexcept {
  switch (kind) {
    case scene_kind::dungeon:
      return 400;
    case scene_kind::field:
      return 200;
    default:
      return 100;
  }
}

/// Scenes a group service holds for a scene of this capacity: max(1, group_budget / capacity).
[[nodiscard]] constexpr std::uint32_t group_slots(std::uint32_t group_budget,
                                                  std::uint32_t capacity) noexcept {
  const std::uint32_t slots = capacity == 0 ? group_budget : group_budget / capacity;
  return slots == 0 ? 1 : slots;
}

}  // namespace scenert
