#pragma once
/// A line's searches spread over ticks: each tick's step(budget) expands at most `budget` nodes in
/// total, shared round-robin among the running requests, so that one long search cannot starve
/// the rest and the tick stays inside its slot.

#include <cstdint>
#include <memory>
#include <vector>

#include <scenert/nav/nav_map.hpp>
#include <scenert/nav/search.hpp>
#include <scenert/nav/types.hpp>

namespace scenert::nav {

/// A request's generational id; a handle whose request is gone answers stale_handle.
struct path_handle {
  std::uint32_t slot = 0;        ///< index of the request's slot
  std::uint32_t generation = 0;  ///< the slot's generation when issued (0: never valid)
  friend constexpr bool operator==(path_handle, path_handle) = default;
};

/// Where a request stands.
enum class request_state : std::uint8_t {
  waiting,      ///< queued: every search context is busy
  running,      ///< being searched, a slice per step()
  found,        ///< done: path() gives the path
  unreachable,  ///< done: no path
  out_of_map,   ///< done: start or goal outside the map
};

/// Name of a request state, for logs and messages.
const char* to_string(request_state state) noexcept;

/// Limits of one queue.
struct path_queue_options {
  std::uint32_t max_requests = 64;  ///< requests held at once (waiting, running or done and unread)
  std::uint32_t max_running = 4;    ///< searches in progress at once: one search context each; at most 64
  algorithm algo = algorithm::jps;  ///< the search every request runs
};

/// One line's sliced path searches over one map.
/// Thread-safety: none; owned and stepped by the line's tick.
class path_queue {
 public:
  /// A queue over a map (not null), its contexts and slots allocated once here.
  explicit path_queue(std::shared_ptr<const nav_map> map, path_queue_options options = {});

  /// Queues a search; the filter's callable must live until the request is done or cancelled.
  /// Fails with queue_full when max_requests are held.
  nav_result<path_handle> submit(cell start, cell goal, cell_filter filter = {});
  /// Runs at most `budget` expansions over the running requests, fairly; gives the number used.
  std::uint32_t step(std::uint32_t budget);
  /// The state of a request, or stale_handle.
  nav_result<request_state> state(path_handle handle) const;
  /// The path so far into `out`: the final path once found, else the best partial path from the
  /// start (empty while waiting); stale_handle for a gone request.
  nav_errc path(path_handle handle, std::vector<cell>& out) const;
  /// Forgets a request (its mover died, its target moved far, or its path has been read) and
  /// frees its slot; stale_handle (and nothing else happens) for a request already gone.
  nav_errc cancel(path_handle handle);
  /// Requests held (waiting, running or done).
  [[nodiscard]] std::uint32_t size() const noexcept { return held_; }
  /// The map searched.
  [[nodiscard]] const nav_map& map() const noexcept { return *map_; }

 private:
  struct request {
    std::uint32_t generation = 1;
    bool held = false;
    request_state state = request_state::waiting;
    std::uint32_t context = 0;  // while running
    cell start, goal;
    cell_filter filter;
    std::vector<cell> path;  // once found; keeps its capacity across requests
  };
  request* find(path_handle handle);
  const request* find(path_handle handle) const;
  void start_waiting();
  void drop_waiting(path_handle handle);
  void finish(std::uint32_t slot, search_status status);
  std::uint32_t run_slice(std::uint32_t slot, std::uint32_t budget);

  std::shared_ptr<const nav_map> map_;
  path_queue_options options_;
  std::vector<request> requests_;
  std::vector<search_context> contexts_;
  std::vector<std::uint32_t> free_slots_, free_contexts_, running_;
  std::vector<path_handle> waiting_;  // a ring of max_requests entries, FIFO
  std::uint32_t waiting_head_ = 0, waiting_count_ = 0, held_ = 0, cursor_ = 0;
};

}  // namespace scenert::nav
