#pragma once
// JPS's open list: a 4-ary min-heap of 16-byte entries whose order is one 128-bit key (f, then the
// larger g, then the lower index). Half as tall as a binary heap, a node's four children share one
// cache line, and each comparison is two integer compares instead of three double compares.
// A* keeps std::push_heap over its 24-byte entries: the plain baseline.

#include <bit>
#include <cstdint>
#include <vector>

namespace scenert::nav {

/// One open-list entry. `order` is f's bits (f >= 0, so its IEEE bits sort as the values do);
/// `rest` is the tie-break: the complement of g's float bits (larger g first) above the index.
struct open_entry {
  std::uint64_t order = 0;
  std::uint64_t rest = 0;
  [[nodiscard]] static open_entry make(double f, double g, std::uint32_t index) noexcept {
    return {std::bit_cast<std::uint64_t>(f),
            std::uint64_t{~std::bit_cast<std::uint32_t>(static_cast<float>(g))} << 32 | index};
  }
  [[nodiscard]] double f() const noexcept { return std::bit_cast<double>(order); }
  [[nodiscard]] std::uint32_t index() const noexcept { return static_cast<std::uint32_t>(rest); }
  [[nodiscard]] bool before(const open_entry& o) const noexcept {
    return order < o.order || (order == o.order && rest < o.rest);
  }
};

/// The 4-ary heap; its vector keeps its capacity across searches (no allocation once warm).
class open_list {
 public:
  [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
  void clear() noexcept { items_.clear(); }
  /// The least entry; the list must not be empty.
  [[nodiscard]] const open_entry& top() const noexcept { return items_.front(); }

  void push(open_entry e) {
    std::size_t hole = items_.size();
    items_.push_back(e);
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / 4;
      if (!e.before(items_[parent])) break;
      items_[hole] = items_[parent];
      hole = parent;
    }
    items_[hole] = e;
  }

  /// Removes and returns the least entry; the list must not be empty.
  open_entry pop() noexcept {
    const open_entry top = items_.front();
    const open_entry last = items_.back();
    items_.pop_back();
    const std::size_t n = items_.size();
    if (n == 0) return top;
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first = hole * 4 + 1;
      if (first >= n) break;
      std::size_t best = first;
      if (first + 4 <= n) {  // a full family: a tournament of two pairs, selects rather than branches
        const std::size_t a = items_[first + 1].before(items_[first]) ? first + 1 : first;
        const std::size_t b = items_[first + 3].before(items_[first + 2]) ? first + 3 : first + 2;
        best = items_[b].before(items_[a]) ? b : a;
      } else {
        for (std::size_t c = first + 1; c < n; ++c)
          if (items_[c].before(items_[best])) best = c;
      }
      if (!items_[best].before(last)) break;
      items_[hole] = items_[best];
      hole = best;
    }
    items_[hole] = last;
    return top;
  }

 private:
  std::vector<open_entry> items_;
};

}  // namespace scenert::nav
