#pragma once
/// Exact shortest paths on a nav_map: A* (the baseline) and jump point search, resumable so that a
/// search can be spread over ticks, with no heap allocation per search once warmed up.

#include <cstdint>
#include <memory>
#include <vector>

#include <scenert/nav/nav_map.hpp>
#include <scenert/nav/types.hpp>

namespace scenert::nav {

/// Which search runs.
enum class algorithm : std::uint8_t {
  astar,  ///< A* over the 8 neighbours, octile heuristic: the plain baseline
  jps,    ///< jump point search: the same optimal lengths, far fewer expansions
};

/// Name of an algorithm ("astar", "jps").
const char* to_string(algorithm algo) noexcept;

/// Where a search stands.
enum class search_status : std::uint8_t {
  idle,         ///< no search begun
  running,      ///< more expansions needed: call step() again
  found,        ///< done: path() and length() hold the shortest path
  unreachable,  ///< done: no path (start or goal blocked, or walled off)
  out_of_map,   ///< the start or the goal lies outside the map
};

/// Name of a status, for logs and messages.
const char* to_string(search_status status) noexcept;

/// What a whole search gave.
struct search_outcome {
  search_status status = search_status::idle;  ///< found, unreachable or out_of_map
  double length = 0;                           ///< the path's length when found
  std::uint32_t expansions = 0;                ///< nodes taken off the open list
};

struct search_state;

/// A reusable search workspace, one per line (or per path_queue slot), per cell of the largest map
/// searched: 16 bytes once it has run A*, 4 bytes and a bit once it has run JPS. Nothing is
/// cleared per cell between searches (A*'s nodes carry a generation, JPS's closed bits are cleared
/// through the cells it expanded); after the first searches on a map have grown its vectors,
/// searching allocates nothing.
/// Thread-safety: none; one owner at a time. Many contexts may share one nav_map across threads.
class search_context {
 public:
  /// An empty context; its arrays grow on the first search of a map size.
  search_context();
  /// Frees the arrays.
  ~search_context();
  /// Takes another context's arrays.
  search_context(search_context&&) noexcept;
  /// Takes another context's arrays.
  search_context& operator=(search_context&&) noexcept;

  /// Starts a search (forgetting any earlier one). The map and the filter's callable must outlive
  /// it. JPS scans the map's bit rows and skips along diagonals by its table; with a non-empty
  /// filter it walks cell by cell instead.
  search_status begin(const nav_map& map, cell start, cell goal, algorithm algo, cell_filter filter = {});
  /// Expands at most `budget` nodes; the result equals an unsliced run's, whatever the budgets.
  search_status step(std::uint32_t budget);
  /// Runs a whole search; the path (start and goal included) goes to `path` when found.
  search_outcome find(const nav_map& map, cell start, cell goal, algorithm algo, std::vector<cell>& path,
                      cell_filter filter = {});

  /// The current status.
  [[nodiscard]] search_status status() const noexcept;
  /// Nodes expanded so far by the current search.
  [[nodiscard]] std::uint32_t expansions() const noexcept;
  /// The shortest path's length once found; 0 otherwise.
  [[nodiscard]] double length() const noexcept;
  /// Writes the shortest path, start to goal, into `out` (cleared first); only when found.
  void path(std::vector<cell>& out) const;
  /// Writes the best path so far: from the start to the expanded cell closest to the goal by the
  /// heuristic (the whole path once found; just the start before the first expansion).
  void partial_path(std::vector<cell>& out) const;

 private:
  std::unique_ptr<search_state> state_;
};

/// Checks a path step by step: it starts at `start`, ends at `goal`, each step goes to an
/// 8-neighbour, no cell is blocked (map or filter), no diagonal cuts a corner. Gives its length.
nav_result<double> validate_path(const nav_map& map, const std::vector<cell>& path, cell start, cell goal,
                                 const cell_filter& filter = {});

}  // namespace scenert::nav
