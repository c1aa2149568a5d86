#pragma once
/// timing_wheel: the pool's schedule of cohorts, in 1 ms slots.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <scenert/runtime/assert.hpp>

namespace scenert::detail {

constexpr std::int64_t slot_ns = 1'000'000;  // the timing wheel's resolution: 1 ms

struct cohort;

/// A single-level timing wheel of 1 ms slots holding cohorts; slot s holds due times in
/// (s - 1 ms, s]. Cohorts further out than one revolution stay in their slot until their
/// revolution comes. A slot is a vector of (due, cohort) pairs, so expiry reads no cohort; a slot
/// emptied by expiry hands its storage to the next slot that fills, so the wheel holds about as
/// much memory as it holds items.
/// Thread-safety: one thread (the scheduling thread).
class timing_wheel {
 public:
  static constexpr std::int64_t slots = 4096;
  struct item {
    std::int64_t due;
    cohort* c;
  };

  explicit timing_wheel(std::int64_t start_ns) : cursor_(ceil_slot(start_ns)), slots_(slots) {}

  static std::int64_t ceil_slot(std::int64_t ns) noexcept {
    return ns >= 0 ? (ns + slot_ns - 1) / slot_ns : ns / slot_ns;
  }
  /// The time of the next slot to expire.
  [[nodiscard]] std::int64_t cursor_ns() const noexcept { return cursor_ * slot_ns; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Items the wheel has storage for, in its slots and spare (walks every slot).
  [[nodiscard]] std::size_t reserved() const noexcept {
    std::size_t n = 0;
    for (const auto& v : slots_) n += v.capacity();
    for (const auto& v : spare_) n += v.capacity();
    return n;
  }

  /// An item due before the cursor goes into the cursor's slot, to run at its next expiry.
  void insert(std::int64_t due, cohort* c) {
    storage(slot_of(due)).push_back({due, c});
    ++size_;
  }
  /// Takes `c`, due at `due`, out.
  void unlink(std::int64_t due, const cohort* c) noexcept {
    auto& v = at(slot_of(due));
    for (auto& it : v) {
      if (it.c != c) continue;
      it = v.back();
      v.pop_back();
      --size_;
      return;
    }
    SCENERT_ASSERT(false, "timing_wheel::unlink of a cohort not in the wheel");
  }
  /// Calls `on_due(item)` for each item of the cursor's slot due at or before `limit_ns` and
  /// takes it out, returning how many; does not move the cursor.
  template <class F>
  std::size_t take_due(std::int64_t limit_ns, F&& on_due) {
    auto& v = at(cursor_);
    std::size_t keep = 0, n = v.size();
    for (std::size_t i = 0; i < n; ++i) {
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
  std::vector<item>& storage(std::int64_t s) {
    auto& v = at(s);
    if (v.capacity() == 0 && !spare_.empty()) {
      v = std::move(spare_.back());
      spare_.pop_back();
    }
    return v;
  }
  std::vector<item>& at(std::int64_t s) noexcept { return slots_[static_cast<std::size_t>(s % slots)]; }

  std::int64_t cursor_;
  std::size_t size_ = 0;
  std::vector<std::vector<item>> slots_;
  std::vector<std::vector<item>> spare_;  // emptied slots' storage, for slots that fill next
};

}  // namespace scenert::detail
