#pragma once
/// What the pool keeps per service: the entry (registry, ownership, rare counters), the member
/// record a worker reads and writes each tick, the cohort that holds member records of one grid,
/// and the batches of cohorts handed to workers.

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <scenert/runtime/assert.hpp>
#include <scenert/runtime/service.hpp>
#include <scenert/runtime/unique_function.hpp>

#include "histogram.hpp"
#include "timing_wheel.hpp"

namespace scenert::detail {

struct cohort;
struct member;

/// One service in the pool, off the tick's path.
/// Thread-safety: the links and flags marked (mu) are guarded by the pool's command mutex;
/// (sched) fields belong to the scheduling thread; counters are read by metrics() from any thread.
struct pool_entry {
  std::shared_ptr<service> svc;
  double hz = 0;
  std::int64_t base_ns = 0;              // the grid: base + k / hz
  std::uint64_t seq = 0;                 // order of adding, breaks ties between equal due times
  cohort* home = nullptr;                // (sched) where its member record is
  std::uint32_t index = 0;               // (sched) which one
  bool remove_requested = false;         // (sched)
  std::atomic<member*> record{nullptr};  // set once placed: what metrics() reads
  std::atomic<std::uint64_t> overruns{0}, stalls{0};
  pool_entry* reg_next = nullptr;      // (mu) every live entry
  pool_entry* reg_prev = nullptr;      // (mu)
  unique_function<void()> on_removed;  // (mu) until the removal is applied
  bool removal_queued = false;         // (mu)
  bool ready = false;                  // (mu) activated, its add command queued
};

/// A service's per-tick state, in its cohort's array: the worker streams through these in order
/// and touches, per tick, this one line and the service object.
/// Thread-safety: written by the thread ticking the cohort (handed over with release/acquire);
/// `ticks` and the histograms are read by metrics() from any thread.
struct alignas(64) member {
  static constexpr std::int64_t parked = INT64_MAX;  // k of a quarantined member: never due

  service* run = nullptr;  // null: a vacant record
  std::int64_t k = 0;      // the grid index of its next tick; above the cohort's: not due at this run
  std::int64_t last_start_ns = -1;
  std::atomic<std::uint64_t> ticks{0};  // since activation
  compact_histogram tick_hist, late_hist;
};
static_assert(sizeof(member) == 64, "one line per member");

/// What the pool needs of a member off the tick's path.
struct member_link {
  pool_entry* e = nullptr;
  std::atomic<bool> held{false};  // the entry may still read the record (until it is finalized)
};

/// Where a cohort is; owned by the scheduling thread. `late`: due in a slot the dispatcher handed
/// out already, it waits in the pool's late list for the dispatcher's next pass.
enum class cohort_state : std::uint8_t { in_wheel, late, running, idle, retired };

/// Services of one rate on one grid (added in the same 1 ms slot, or with the same phase): they
/// share a due time, so the wheel, the dispatcher and the batches handle one cohort where they
/// would handle each service. Each member keeps its own next grid index, so a member that overran
/// skips the grid points it missed while the others keep theirs. Records never move: a removed
/// member leaves a vacant record; a cohort whose members are all gone is recycled. A grid's first
/// cohort is small (most grids hold one service: one added alone in its millisecond); once a grid
/// has filled one, the next are large.
/// Thread-safety: the scheduling thread, or the one worker it handed the cohort to.
struct cohort {
  static constexpr std::uint32_t small = 8, large = 128;

  explicit cohort(std::uint32_t cap = 0)
      : capacity(cap),
        members(cap != 0 ? std::make_unique<member[]>(cap) : nullptr),
        links(cap != 0 ? std::make_unique<member_link[]>(cap) : nullptr) {}

  std::uint32_t capacity;

  double hz = 0;
  std::int64_t base_ns = 0;
  std::int64_t exact_period = 0;            // 1e9 / hz when that is a whole number of ns, else 0
  std::int64_t k = 1;                       // the grid index of the next run
  std::int64_t due_ns = 0;                  // due_of(k)
  std::uint32_t size = 0;                   // records in use or vacated (vacant ones are not reused)
  std::uint32_t live = 0;                   // (sched) members not vacated
  std::uint32_t ticking = 0;                // members live and not parked: out from a worker, kept by sched
  std::uint32_t removals_waiting = 0;       // (sched) members to vacate once the run returns
  cohort_state state = cohort_state::idle;  // (sched)
  std::int64_t last_run_ns = 0;       // how long its last run took (the worker's, read after the return)
  bool open = false;                  // (sched) new members of its grid may join
  std::unique_ptr<member[]> members;  // `capacity` records
  std::unique_ptr<member_link[]> links;

  void set_grid(double rate, std::int64_t base) noexcept {
    hz = rate;
    base_ns = base;
    double p = 1e9 / rate;
    exact_period = p == std::floor(p) ? static_cast<std::int64_t>(p) : 0;
    k = 1;
    due_ns = due_of(1);
  }
  [[nodiscard]] std::int64_t due_of(std::int64_t kk) const noexcept {
    if (exact_period != 0) return base_ns + kk * exact_period;
    return base_ns + std::llround(static_cast<double>(kk) * 1e9 / hz);
  }
  /// After a run: the next one is at the earliest next grid index of its members (`parked`, when
  /// every one is quarantined, leaves it as it is: it ticks nothing).
  void move_to(std::int64_t kk) noexcept {
    if (kk == member::parked) return;
    k = kk;
    due_ns = due_of(kk);
  }
  [[nodiscard]] std::int64_t period_ns() const noexcept { return std::llround(1e9 / hz); }
  /// The last grid index whose time is at or before `t` (at least `from`).
  [[nodiscard]] std::int64_t last_index_by(std::int64_t t, std::int64_t from) const noexcept {
    auto k2 = static_cast<std::int64_t>(std::floor(static_cast<double>(t - base_ns) * hz / 1e9));
    k2 = k2 < from ? from : k2;
    while (due_of(k2 + 1) <= t) ++k2;
    while (k2 > from && due_of(k2) > t) --k2;
    return k2;
  }
};

/// Cohorts handed to one worker at once; recycled, so steady running allocates nothing.
struct batch {
  std::vector<cohort*> cohorts;
  std::int64_t not_before = 0;  // the latest slot time among its cohorts: none ticks early
  batch* next = nullptr;        // the return stack, or the free list
};

}  // namespace scenert::detail
