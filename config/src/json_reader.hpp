#pragma once
// Reading one JSON object of a table: typed reads with ranges, required keys, unknown keys with a
// "did you mean" suggestion. Every problem becomes a diagnostic; nothing throws.

#include <scenert/config/table_loader.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace scenert::detail {

// ordered: keys keep their document order, so diagnostics come out in reading order.
using json = nlohmann::ordered_json;

/// Collects diagnostics up to max_diagnostics, then notes once that the list was cut.
class diagnostic_sink {
 public:
  void add(std::string pointer, std::string reason, std::uint32_t line = 0, std::uint32_t column = 0);
  [[nodiscard]] bool empty() const noexcept { return list_.empty(); }
  [[nodiscard]] std::vector<diagnostic> take() { return std::move(list_); }

 private:
  std::vector<diagnostic> list_;
  std::size_t dropped_ = 0;
};

/// `parent` + "/" + `key`, with `~` and `/` escaped as RFC 6901 asks.
[[nodiscard]] std::string child_pointer(std::string_view parent, std::string_view key);
[[nodiscard]] std::string child_pointer(std::string_view parent, std::size_t index);

/// A short rendering of a value for "got ..." in messages (strings quoted, long ones cut).
[[nodiscard]] std::string describe(const json& v);

/// Levenshtein distance, for "did you mean".
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

/// The closest candidate to `word` when it is close enough to be a likely typo.
[[nodiscard]] std::optional<std::string_view> suggest(std::string_view word,
                                                      std::span<const std::string_view> candidates);

/// An inclusive integer range for a key.
struct int_range {
  std::int64_t min = 0;
  std::int64_t max = 0;
};

/// An inclusive range of real numbers; `min_exclusive` excludes its lower bound.
struct real_range {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
};

/// Whether a key must be present.
enum class presence : std::uint8_t { optional, required };

/// Reads the keys of one object. Keys it was not told about are reported by finish().
class object_reader {
 public:
  object_reader(const json& object, std::string pointer, diagnostic_sink& sink,
                std::initializer_list<std::string_view> allowed);

  /// The value at `key`, or null (after reporting it when required) when absent.
  const json* find(std::string_view key, presence p);
  /// Reads an unsigned integer in `range` into `out`; true when present and valid.
  bool read_uint(std::string_view key, std::uint32_t& out, int_range range, presence p);
  /// Reads a finite number in `range` into `out`; true when present and valid.
  bool read_real(std::string_view key, double& out, real_range range, presence p);
  /// Reads a string into `out`; empty strings are rejected when `non_empty`.
  bool read_string(std::string_view key, std::string& out, presence p, bool non_empty);
  /// Reads one of `names` (index into it) into `out`; true when present and valid.
  bool read_choice(std::string_view key, std::size_t& out, std::span<const std::string_view> names,
                   presence p);
  /// Reports `reason` at `key` when the key is present (used for keys that do not apply here).
  void forbid(std::string_view key, std::string_view reason);
  /// Reports each key not in the allowed list, with a suggestion when one is close.
  void finish();

  [[nodiscard]] bool has(std::string_view key) const { return object_.contains(key); }
  [[nodiscard]] std::string pointer_to(std::string_view key) const { return child_pointer(pointer_, key); }
  [[nodiscard]] const std::string& pointer() const noexcept { return pointer_; }
  [[nodiscard]] diagnostic_sink& sink() noexcept { return sink_; }

 private:
  const json& object_;
  std::string pointer_;
  diagnostic_sink& sink_;
  std::vector<std::string_view> allowed_;
};

/// Reports `reason` about `v` being of the wrong type at `pointer` ("must be an object, got 3").
void report_type(diagnostic_sink& sink, const std::string& pointer, std::string_view expected, const json& v);

/// Reads an integer value in `range`; reports at `pointer` and returns nothing when it is not one.
[[nodiscard]] std::optional<std::int64_t> read_int(const json& v, const std::string& pointer, int_range range,
                                                   diagnostic_sink& sink);

}  // namespace scenert::detail
