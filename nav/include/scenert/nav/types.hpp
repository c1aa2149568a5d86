#pragma once
/// Vocabulary of nav/: cells, error codes, the result type and the caller's dynamic blocks.
/// nav/ sits below scene/ and depends on nothing of ours, so it carries its own small result.

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace scenert::nav {

/// A cell of a map: x is the column, y the row, (0,0) the top-left cell.
struct cell {
  std::uint32_t x = 0;  ///< column
  std::uint32_t y = 0;  ///< row
  friend constexpr bool operator==(cell, cell) = default;
};

/// Expected failures of nav/.
enum class nav_errc {
  ok = 0,
  invalid_map,      ///< a size of 0, too many cells, or a block span of the wrong length
  out_of_map,       ///< a start or goal outside the map
  unreadable_file,  ///< a file that cannot be opened
  bad_format,       ///< a .map or .scen line that does not parse (the message names file and line)
  bad_path,         ///< a path that fails validation (the message says which step and why)
  stale_handle,     ///< a path_queue handle whose request is gone (done, cancelled or recycled)
  queue_full,       ///< a path_queue that holds its maximum of requests
};

/// Name of an error code, for logs and messages.
const char* to_string(nav_errc code) noexcept;

/// An expected failure: a code and a message for people.
struct nav_error {
  nav_errc code = nav_errc::ok;  ///< what went wrong, for code
  std::string message;           ///< what went wrong, for people
};

/// A value or a nav_error; the same shape as scenert::result without depending on runtime/.
template <class T>
class [[nodiscard]] nav_result {
 public:
  nav_result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  nav_result(nav_error e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT
  /// Whether it holds a value.
  [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
  /// Whether it holds a value.
  explicit operator bool() const noexcept { return has_value(); }
  /// The value; only when has_value().
  T& value() & { return std::get<0>(v_); }
  /// The value; only when has_value().
  const T& value() const& { return std::get<0>(v_); }
  /// The value, moved out; only when has_value().
  T&& value() && { return std::get<0>(std::move(v_)); }
  /// The value; only when has_value().
  const T& operator*() const& { return value(); }
  /// The value's members; only when has_value().
  const T* operator->() const { return &value(); }
  /// The error; only when !has_value().
  const nav_error& error() const& { return std::get<1>(v_); }
  /// The error's code, ok for a value.
  [[nodiscard]] nav_errc code() const { return has_value() ? nav_errc::ok : error().code; }

 private:
  std::variant<T, nav_error> v_;
};

/// Builds an error: `return nav_fail(nav_errc::out_of_map, "...")` converts to any nav_result.
[[nodiscard]] inline nav_error nav_fail(nav_errc code, std::string message) {
  return {code, std::move(message)};
}

/// Cells blocked for one search or step on top of the map's static blocks (e.g. a mover's barrier
/// mask against its line's occupancy). Non-owning: the callable must outlive the search.
/// An empty filter blocks nothing. A plain function pointer and a context: no allocation.
class cell_filter {
 public:
  /// Blocks nothing.
  cell_filter() = default;
  /// Wraps a callable `bool(cell)` that answers true for a blocked cell; keeps a pointer to it.
  template <class F>
  explicit cell_filter(const F& blocked)
      : ctx_(&blocked), fn_([](const void* c, cell at) { return (*static_cast<const F*>(c))(at); }) {}
  /// Whether this filter blocks anything at all.
  [[nodiscard]] bool empty() const noexcept { return fn_ == nullptr; }
  /// Whether the cell is blocked by this filter.
  [[nodiscard]] bool blocks(cell at) const { return fn_ != nullptr && fn_(ctx_, at); }

 private:
  const void* ctx_ = nullptr;
  bool (*fn_)(const void*, cell) = nullptr;
};

}  // namespace scenert::nav
