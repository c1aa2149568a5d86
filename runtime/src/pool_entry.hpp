#pragma once
/// detail::pool_entry: what the pool keeps per service — schedule, links, counters.

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>

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
struct pool_entry {
  std::shared_ptr<service> svc;
  double hz = 0;
  std::int64_t base_ns = 0;  // the grid every due time sits on: base + round(k * 1e9 / hz)
  std::int64_t k = 0;
  std::int64_t due_ns = 0;
  std::int64_t last_start_ns = -1;
  std::uint64_t index = 0;             // ticks since activation
  std::uint64_t seq = 0;               // order of adding, breaks ties between equal due times
  pool_entry* next = nullptr;          // wheel slot list, or a batch
  pool_entry* prev = nullptr;          // wheel slot list
  pool_entry* reg_next = nullptr;      // (mu) every live entry
  pool_entry* reg_prev = nullptr;      // (mu)
  unique_function<void()> on_removed;  // (mu) until the removal is applied
  entry_state state = entry_state::fresh;
  tick_outcome outcome = tick_outcome::ok;
  bool remove_requested = false;  // scheduling thread
  bool removal_queued = false;    // (mu)
  bool ready = false;             // (mu) activated, its add command queued

  std::atomic<std::uint64_t> ticks{0}, overruns{0}, stalls{0};
  compact_histogram tick_hist, late_hist;

  [[nodiscard]] std::int64_t due_of(std::int64_t kk) const noexcept {
    return base_ns + std::llround(static_cast<double>(kk) * 1e9 / hz);
  }
  [[nodiscard]] std::int64_t period_ns() const noexcept { return std::llround(1e9 / hz); }
};

/// A single-level timing wheel of 1 ms slots; slot s holds due times in (s - 1 ms, s]. Entries
/// further out than one revolution stay in their slot until their revolution comes.
/// Thread-safety: one thread (the scheduling thread).
class timing_wheel {
 public:
  static constexpr std::int64_t slots = 4096;

  explicit timing_wheel(std::int64_t start_ns) : cursor_(ceil_slot(start_ns)) {}

  static std::int64_t ceil_slot(std::int64_t ns) noexcept {
    return ns >= 0 ? (ns + slot_ns - 1) / slot_ns : ns / slot_ns;
  }
  /// The time of the next slot to expire.
  [[nodiscard]] std::int64_t cursor_ns() const noexcept { return cursor_ * slot_ns; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  /// An entry due before the cursor goes into the cursor's slot, to run at its next expiry.
  void insert(pool_entry* e) noexcept {
    auto s = ceil_slot(e->due_ns);
    if (s < cursor_) s = cursor_;
    auto& head = heads_[static_cast<std::size_t>(s % slots)];
    e->prev = nullptr;
    e->next = head;
    if (head != nullptr) head->prev = e;
    head = e;
    ++size_;
  }
  void unlink(pool_entry* e) noexcept {
    auto& head = heads_[static_cast<std::size_t>(slot_of(e) % slots)];
    if (e->prev != nullptr)
      e->prev->next = e->next;
    else
      head = e->next;
    if (e->next != nullptr) e->next->prev = e->prev;
    e->next = e->prev = nullptr;
    --size_;
  }
  /// Moves the entries of the cursor's slot due at or before `limit_ns` onto `out` (a list
  /// linked by `next`), returning how many; does not move the cursor.
  std::size_t take_due(std::int64_t limit_ns, pool_entry*& out) noexcept {
    std::size_t n = 0;
    auto& head = heads_[static_cast<std::size_t>(cursor_ % slots)];
    for (pool_entry* e = head; e != nullptr;) {
      pool_entry* nx = e->next;
      if (e->due_ns <= limit_ns) {
        unlink_at(head, e);
        e->next = out;
        out = e;
        ++n;
      }
      e = nx;
    }
    return n;
  }
  void step() noexcept { ++cursor_; }
  /// An empty wheel may skip ahead (or back) to the slot of `ns` without visiting each slot.
  void jump(std::int64_t ns) noexcept {
    if (size_ == 0) cursor_ = ceil_slot(ns);
  }

 private:
  [[nodiscard]] std::int64_t slot_of(const pool_entry* e) const noexcept {
    auto s = ceil_slot(e->due_ns);
    return s < cursor_ ? cursor_ : s;
  }
  void unlink_at(pool_entry*& head, pool_entry* e) noexcept {
    if (e->prev != nullptr)
      e->prev->next = e->next;
    else
      head = e->next;
    if (e->next != nullptr) e->next->prev = e->prev;
    --size_;
  }

  std::int64_t cursor_;
  std::size_t size_ = 0;
  pool_entry* heads_[slots] = {};
};

}  // namespace scenert::detail
