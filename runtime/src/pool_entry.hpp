#pragma once
/// detail::pool_entry: what the pool keeps per service — schedule, links, counters.

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include <scenert/runtime/assert.hpp>
#include <scenert/runtime/service.hpp>
#include <scenert/runtime/unique_function.hpp>

#include "histogram.hpp"

namespace scenert::detail {

constexpr std::int64_t slot_ns = 1'000'000;  // the timing wheel's resolution: 1 ms

/// Where an entry is; owned by the scheduling thread (dispatcher, or advance() caller).
enum class entry_state : std::uint8_t { fresh, in_wheel, running, parked, finalizing };

/// Thread-safety: schedule fields are handed between the scheduling thread and one worker at a
/// time (release/acquire on the hand-over); counters are read by metrics() from any thread;
/// the registry links and flags marked (mu) are guarded by the pool's command mutex.
struct alignas(64) pool_entry {
  // The first two cache lines are all a worker touches per tick (at an integral period in ns):
  // the scheduling thread reads none of it per tick (the ticket carries due time and id).
  service* run = nullptr;         // svc.get()
  std::int64_t due_ns = 0;        // base + round(k * 1e9 / hz)
  std::int64_t k = 0;             // the grid index of due_ns
  std::int64_t exact_period = 0;  // the period in ns when 1e9 / hz is a whole number, else 0
  std::int64_t last_start_ns = -1;
  std::atomic<std::uint64_t> ticks{0};  // ticks since activation (each add is a new entry)
  compact_histogram tick_hist, late_hist;

  // cold: rates that are not a whole number of ns, overruns, the registry
  std::shared_ptr<service> svc;
  double hz = 0;
  std::int64_t base_ns = 0;       // the grid every due time sits on
  bool remove_requested = false;  // scheduling thread
  std::atomic<std::uint64_t> overruns{0}, stalls{0};
  std::uint64_t seq = 0;               // order of adding, breaks ties between equal due times
  std::uint32_t id = 0;                // scheduling thread: index into the pool's dense state array
  pool_entry* reg_next = nullptr;      // (mu) every live entry
  pool_entry* reg_prev = nullptr;      // (mu)
  unique_function<void()> on_removed;  // (mu) until the removal is applied
  bool removal_queued = false;         // (mu)
  bool ready = false;                  // (mu) activated, its add command queued

  void set_rate(double rate) noexcept {
    hz = rate;
    double p = 1e9 / rate;
    exact_period = p == std::floor(p) ? static_cast<std::int64_t>(p) : 0;
  }
  [[nodiscard]] std::int64_t due_of(std::int64_t kk) const noexcept {
    if (exact_period != 0) return base_ns + kk * exact_period;
    return base_ns + std::llround(static_cast<double>(kk) * 1e9 / hz);
  }
  [[nodiscard]] std::int64_t period_ns() const noexcept { return std::llround(1e9 / hz); }
};
static_assert(offsetof(pool_entry, svc) == 128, "a worker's per-tick fields fill two cache lines");

/// One entry as the wheel holds it and as it travels to a worker and back. It carries what the
/// scheduling thread needs (due time, id) and what the worker prefetches (entry and service), so
/// neither thread reads an entry just to find another address. The worker fills in the next due
/// time and whether the entry was quarantined.
struct ticket {
  pool_entry* e;
  service* run;
  std::int64_t due;  // in the wheel: the due time; back from a worker: the next one
  std::uint32_t id;
  bool parked;  // back from a worker: quarantined, to be parked rather than re-inserted
};

/// A single-level timing wheel of 1 ms slots; slot s holds due times in (s - 1 ms, s]. Entries
/// further out than one revolution stay in their slot until their revolution comes. A slot is a
/// vector of tickets, so that expiry and re-insertion read no entry. A slot emptied by expiry hands
/// its storage to the next slot that fills: the wheel holds about as much memory as it holds
/// tickets (a vector per slot kept its capacity for each of the 4096 slots it ever filled, 40 times
/// the tickets at 10 Hz, and filled fresh pages for the first four seconds).
/// Thread-safety: one thread (the scheduling thread).
class timing_wheel {
 public:
  static constexpr std::int64_t slots = 4096;

  explicit timing_wheel(std::int64_t start_ns) : cursor_(ceil_slot(start_ns)), slots_(slots) {}

  static std::int64_t ceil_slot(std::int64_t ns) noexcept {
    return ns >= 0 ? (ns + slot_ns - 1) / slot_ns : ns / slot_ns;
  }
  /// The time of the next slot to expire.
  [[nodiscard]] std::int64_t cursor_ns() const noexcept { return cursor_ * slot_ns; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Tickets the wheel has storage for, in its slots and spare (walks every slot).
  [[nodiscard]] std::size_t reserved() const noexcept {
    std::size_t n = 0;
    for (const auto& v : slots_) n += v.capacity();
    for (const auto& v : spare_) n += v.capacity();
    return n;
  }
  /// Entries in the cursor's slot (due now or in a later revolution).
  [[nodiscard]] std::size_t cursor_slot_size() const noexcept { return at(cursor_).size(); }

  /// An entry due before the cursor goes into the cursor's slot, to run at its next expiry.
  void insert(pool_entry* e) { insert(ticket{e, e->run, e->due_ns, e->id, false}); }
  /// The same, from a ticket: the entry is not read.
  void insert(const ticket& t) {
    storage(slot_of(t.due)).push_back(t);
    ++size_;
  }
  /// Inserts tickets whose due times all fall in one slot, at once.
  void insert_same_slot(const std::vector<ticket>& ts) {
    if (ts.empty()) return;
    auto& v = storage(slot_of(ts.front().due));
    v.insert(v.end(), ts.begin(), ts.end());
    size_ += ts.size();
  }
  /// Takes `e` out; its due time must not have changed since insert().
  void unlink(pool_entry* e) noexcept {
    auto& v = at(slot_of(e->due_ns));
    for (auto& it : v) {
      if (it.e != e) continue;
      it = v.back();
      v.pop_back();
      --size_;
      return;
    }
    SCENERT_ASSERT(false, "timing_wheel::unlink of an entry not in the wheel");
  }
  /// Calls `on_due(ticket)` for each entry of the cursor's slot due at or before `limit_ns` and
  /// takes it out, returning how many; does not move the cursor. With `Prefetch`, hints the entries
  /// ahead, for a caller that reads them (each one is a cache miss at 100k services).
  template <bool Prefetch = true, class F>
  std::size_t take_due(std::int64_t limit_ns, F&& on_due) {
    auto& v = at(cursor_);
    std::size_t keep = 0, n = v.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (Prefetch && i + 32 < n) __builtin_prefetch(v[i + 32].e);
      if (v[i].due <= limit_ns)
        on_due(v[i]);
      else
        v[keep++] = v[i];
    }
    v.resize(keep);
    if (keep == 0 && v.capacity() != 0) spare_.push_back(std::move(v));
    size_ -= n - keep;
    return n - keep;
  }
  void step() noexcept { ++cursor_; }
  /// An empty wheel may skip ahead (or back) to the slot of `ns` without visiting each slot.
  void jump(std::int64_t ns) noexcept {
    if (size_ == 0) cursor_ = ceil_slot(ns);
  }

 private:
  [[nodiscard]] std::int64_t slot_of(std::int64_t due) const noexcept {
    auto s = ceil_slot(due);
    return s < cursor_ ? cursor_ : s;
  }
  /// Slot `s`, given spare storage if it has none.
  std::vector<ticket>& storage(std::int64_t s) {
    auto& v = at(s);
    if (v.capacity() == 0 && !spare_.empty()) {
      v = std::move(spare_.back());
      spare_.pop_back();
    }
    return v;
  }
  std::vector<ticket>& at(std::int64_t s) noexcept { return slots_[static_cast<std::size_t>(s % slots)]; }
  [[nodiscard]] const std::vector<ticket>& at(std::int64_t s) const noexcept {
    return slots_[static_cast<std::size_t>(s % slots)];
  }

  std::int64_t cursor_;
  std::size_t size_ = 0;
  std::vector<std::vector<ticket>> slots_;
  std::vector<std::vector<ticket>> spare_;  // emptied slots' storage, for slots that fill next
};

/// Entries handed to one worker at once; recycled, so steady running allocates nothing.
struct batch {
  std::vector<ticket> items;
  bool same_slot = false;  // out: every item's next due time falls in one slot, none parked
  batch* next = nullptr;   // the return stack, or the free list
};

}  // namespace scenert::detail
