#pragma once
/// processor_pool::impl: the state shared by the pool's API (processor_pool.cpp) and its
/// scheduling (pool_schedule.cpp).

#include <scenert/runtime/processor_pool.hpp>

#include <atomic>
#include <bit>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "entry_slab.hpp"
#include "executor.hpp"
#include "histogram.hpp"
#include "pool_entry.hpp"
#include "service_state.hpp"
#include "tick_clock.hpp"

namespace scenert {
namespace detail {

struct pool_access {
  static std::atomic<pool_entry*>& entry(service& s) noexcept { return s.state_->entry; }
  static std::atomic<const void*>& owner(service& s) noexcept { return s.state_->owner; }
  /// The line (or two, when they straddle one) of what a tick reads of the service itself: the
  /// vtable pointer and the tick's flags. A derived service's first fields mostly share it.
  static void prefetch_service(const service& s) noexcept {
    __builtin_prefetch(&s);
    __builtin_prefetch(reinterpret_cast<const char*>(&s) + sizeof(service) - 1);
  }
};

/// What one worker records: written by that worker only, read by metrics() and the watchdog.
struct alignas(64) worker_slot {
  std::atomic<const member*> current{nullptr};   // the member ticking now
  std::atomic<cohort*> cohort_now{nullptr};      // its cohort (stored before current)
  std::atomic<std::int64_t> started_ns{0};       // when that tick began: also its identity
  std::atomic<std::int64_t> reported_start{-1};  // the last tick counted as a stall
  std::atomic<std::uint64_t> ticks{0}, overruns{0}, exceptions{0};
  std::atomic<std::int64_t> busy_ns{0};
  fine_histogram tick_hist, late_hist;
  std::string failure;  // what the last failed tick threw; reused, so a tick allocates nothing
};

/// A worker's counts over one batch, added to its slot once at the end (no per-tick atomics);
/// the histograms' buckets are counted per tick, their sums and maxima here.
struct tick_counts {
  std::uint64_t ticks = 0, overruns = 0, exceptions = 0;
  std::int64_t took_sum = 0, took_max = 0, late_sum = 0, late_max = 0;

  /// Records a tick's duration and lateness in the member's and the worker's histograms.
  void record(worker_slot& w, member& m, std::int64_t took, std::int64_t late) noexcept {
    // A tick's duration is never negative (the tick clock never runs backwards); a tick may start
    // a hair before its due time by the worker's clock.
    auto t = static_cast<std::uint64_t>(took), l = static_cast<std::uint64_t>(late < 0 ? 0 : late);
    auto tw = static_cast<unsigned>(std::bit_width(t)), lw = static_cast<unsigned>(std::bit_width(l));
    m.tick_hist.record(took, tw);
    m.late_hist.record(late, lw);
    w.tick_hist.count(t, tw);
    w.late_hist.count(l, lw);
    took_sum += took;
    late_sum += late;
    took_max = took > took_max ? took : took_max;
    late_max = late > late_max ? late : late_max;
  }
  void flush(worker_slot& w) noexcept {
    auto add = [](std::atomic<std::uint64_t>& a, std::uint64_t v) {
      if (v != 0) a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
    };
    add(w.ticks, ticks);
    add(w.overruns, overruns);
    add(w.exceptions, exceptions);
    w.tick_hist.add(took_sum, took_max);
    w.late_hist.add(late_sum, late_max);
    *this = {};
  }
};

}  // namespace detail

namespace detail {
extern thread_local const void* tls_ticking;  // the pool whose tick runs on this thread
}  // namespace detail

struct processor_pool::impl {
  explicit impl(pool_options o);

  // ---- any thread -----------------------------------------------------------------------
  /// The steady clock is read straight from CLOCK_MONOTONIC (what std::chrono::steady_clock
  /// reads), without the virtual call and the chrono layers: workers read it once per tick.
  [[nodiscard]] std::int64_t now_ns() const noexcept {
#if defined(__linux__)
    if (opt.manual == nullptr) return detail::monotonic_ns();
#endif
    return clk->now().time_since_epoch().count();
  }
  void log(log_level level, const std::string& text) const;
  // The registry, a list under mu: links `e` before `next` (null: first, as add() does; a
  // metrics() walk's bookmark goes before the entry where it resumes).
  void registry_link(detail::pool_entry* e, detail::pool_entry* next) noexcept;
  void registry_unlink(detail::pool_entry* e) noexcept;
  void push_command(detail::pool_entry* e, bool remove);  // caller holds mu; takes cmd_mu

  // ---- scheduling thread (the dispatcher, or the caller of advance / stop) -----------------
  void apply_commands();
  void apply(detail::pool_entry* e, bool remove);
  void place(detail::pool_entry* e);   // gives a new entry its member record
  void vacate(detail::pool_entry* e);  // frees its record, then finalizes it
  void on_returned(detail::cohort* c);
  void schedule(detail::cohort* c);  // into the wheel, or `late` if its slot was handed out already
  void begin_finalize(detail::pool_entry* e);
  void finalize(detail::pool_entry* e) noexcept;
  void recycle_retired();
  void close(detail::cohort* c);  // takes no new member from now on
  void shutdown_entries();        // stop: finalize every entry left, inline
  void dispatcher_main();
  // How far ahead slots go out: the next slot's batches wait in the executor when a worker
  // finishes the current one's, and the dispatcher wakes between the workers' wake-ups.
  static constexpr std::int64_t lead_ns = 3 * detail::slot_ns / 2;
  void dispatch_slot();  // hands the cursor slot's due cohorts to the workers in batches
  void dispatch_late();  // the same for `late`
  void hand_out(const std::vector<detail::cohort*>& cs);
  void submit(detail::batch* b);
  detail::batch* get_batch();
  void reap_returns();
  void watchdog(std::int64_t now);
  void advance_manual(std::int64_t target);

  // ---- workers ----------------------------------------------------------------------------
  std::int64_t run_member(detail::cohort& c, std::uint32_t i, std::int64_t t_start, detail::tick_clock& clock,
                          detail::worker_slot& w, detail::tick_counts& counts) noexcept;
  std::int64_t run_cohort(detail::cohort& c, std::int64_t t, detail::tick_clock& clock,
                          detail::worker_slot& w, detail::tick_counts& counts) noexcept;
  void after_rare_tick(detail::cohort& c, std::uint32_t i, std::int64_t t_start, std::int64_t t_end,
                       bool overran, tick_outcome outcome, detail::worker_slot& w,
                       detail::tick_counts& counts) noexcept;
  void finish_run(detail::cohort& c) noexcept;
  void run_batch(detail::batch* b, unsigned worker) noexcept;
  void count_stall(detail::pool_entry* e, std::int64_t running_ns) noexcept;

  pool_options opt;
  steady_clock_source steady;
  const clock* clk;
  std::vector<std::unique_ptr<detail::worker_slot>> slots;

  struct command {
    detail::pool_entry* e;
    bool remove;
  };
  mutable std::mutex mu;  // registry, lifecycle flags
  // The commands have their own lock (taken inside mu, never the other way round), so that the
  // dispatcher never waits for metrics() walking the registry under mu.
  std::mutex cmd_mu;
  std::condition_variable cv;     // on cmd_mu
  std::vector<command> commands;  // (cmd_mu)
  bool stop_cmd = false;          // (cmd_mu) stop_requested, as the dispatcher sees it
  std::vector<command> taken;     // scheduling thread's swap buffer
  detail::entry_slab entries;     // (mu)
  detail::pool_entry* registry = nullptr;
  std::size_t registered = 0;
  unsigned adding = 0;  // add() calls between registering and queueing their command
  std::uint64_t next_seq = 0;
  bool started = false, stop_requested = false, shut_down = false;

  detail::timing_wheel wheel;
  std::atomic<detail::batch*> returns{nullptr};         // batches back from the workers
  std::vector<std::unique_ptr<detail::batch>> batches;  // every batch ever made
  detail::batch* free_batches = nullptr;
  // Scheduling thread: every cohort ever made, those free for reuse, those whose members are
  // gone but whose records a finalization may still read, and the cohort each grid is filling.
  struct grid_key {
    double hz;
    std::int64_t base_ns;
    bool operator==(const grid_key&) const = default;
  };
  struct grid_hash {
    std::size_t operator()(const grid_key& g) const noexcept {
      return std::hash<double>{}(g.hz) * 31 + std::hash<std::int64_t>{}(g.base_ns);
    }
  };
  std::vector<std::unique_ptr<detail::cohort>> cohorts;
  std::vector<detail::cohort*> free_cohorts[2], retired;  // free: small ones, large ones
  std::unordered_map<grid_key, detail::cohort*, grid_hash> filling;
  std::atomic<std::int64_t> in_flight{0};  // submitted batches and finalizations not yet done
  std::atomic<std::uint64_t> stalls{0};
  detail::tsc_rate tsc;        // refined by the dispatcher, read by the workers' tick clocks
  std::int64_t origin_ns = 0;  // the grid of add() with a phase: creation, rounded up to a slot
  std::atomic<std::int64_t> start_ns{0}, last_progress_ns{0};
  std::vector<std::pair<detail::cohort*, std::uint32_t>> scratch;  // advance(): due members
  std::vector<detail::cohort*> due_cohorts;                        // the slot being dispatched or run inline
  std::vector<detail::cohort*> slow;  // hand_out's cohorts whose last run took a slot or more
  std::vector<detail::cohort*> late;  // due in a slot already handed out: handed out on their own

  std::mutex stall_mu;
  std::vector<std::string> stalled_now;

  std::mutex advance_mu;  // manual mode: one advance / stop at a time
  std::mutex join_mu;
  std::unique_ptr<detail::executor> exec;
  std::thread dispatcher;
};

}  // namespace scenert
