#pragma once
/// inbox<T>: placeholder with the final API (a locked double buffer); replaced by the lock-free one.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

namespace scenert {

template <class T>
class inbox {
 public:
  explicit inbox(std::size_t ring_capacity = 256) { (void)ring_capacity; }
  inbox(const inbox&) = delete;
  inbox& operator=(const inbox&) = delete;

  [[nodiscard]] bool post(T value) { return emplace(std::move(value)); }
  template <class... A>
  [[nodiscard]] bool emplace(A&&... args) {
    std::lock_guard lock(mutex_);
    if (closed_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    queued_.emplace_back(std::forward<A>(args)...);
    depth_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  template <class F>
  std::size_t drain(F&& fn, std::size_t max = std::numeric_limits<std::size_t>::max()) {
    std::size_t n = 0;
    while (n < max) {
      if (pos_ == taken_.size()) {
        taken_.clear();
        pos_ = 0;
        std::lock_guard lock(mutex_);
        taken_.swap(queued_);
        if (taken_.empty()) break;
      }
      depth_.fetch_sub(1, std::memory_order_relaxed);
      fn(taken_[pos_++]);
      ++n;
    }
    return n;
  }
  void close() noexcept {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  void open() noexcept {
    std::lock_guard lock(mutex_);
    closed_ = false;
  }
  [[nodiscard]] bool closed() const noexcept { return closed_; }
  [[nodiscard]] std::size_t depth() const noexcept { return depth_.load(std::memory_order_relaxed); }
  [[nodiscard]] bool empty() const noexcept { return depth() == 0; }
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  void prefetch() const noexcept {}

 private:
  std::mutex mutex_;
  std::vector<T> queued_, taken_;
  std::size_t pos_ = 0;
  bool closed_ = false;
  std::atomic<std::size_t> depth_{0};
  std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace scenert
