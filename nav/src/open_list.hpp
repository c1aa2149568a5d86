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

/// The 4-ary heap; its storage keeps its capacity across searches (no allocation once warm).
/// Entry i (root 0) is stored at slot i + 3, so the four children of entry i, 4i+1..4i+4, are the
/// four slots of family i + 1: one 64-byte cache line read per level of a pop.
class open_list {
 public:
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  void clear() noexcept { size_ = 0; }
  /// The least entry; the list must not be empty.
  [[nodiscard]] const open_entry& top() const noexcept { return slot(0); }

  void push(open_entry e) {
    if ((size_ + 3) / 4 >= families_.size()) families_.emplace_back();
    std::size_t hole = size_++;
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / 4;
      if (!e.before(slot(parent))) break;
      slot(hole) = slot(parent);
      hole = parent;
    }
    slot(hole) = e;
  }

  /// Removes and returns the least entry; the list must not be empty.
  open_entry pop() noexcept {
    const open_entry top = slot(0);
    const open_entry last = slot(--size_);
    const std::size_t n = size_;
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first = hole * 4 + 1;
      if (first >= n) break;
      std::size_t best = first;
      if (first + 4 <= n) {  // a full family: a tournament of two pairs, selects rather than branches
        const open_entry* f = families_[hole + 1].slots;
        const std::size_t a = f[1].before(f[0]) ? 1 : 0, b = f[3].before(f[2]) ? 3 : 2;
        best = first + (f[b].before(f[a]) ? b : a);
      } else {
        for (std::size_t c = first + 1; c < n; ++c)
          if (slot(c).before(slot(best))) best = c;
      }
      if (!slot(best).before(last)) break;
      slot(hole) = slot(best);
      hole = best;
    }
    if (n > 0) slot(hole) = last;
    return top;
  }

 private:
  struct alignas(64) family {
    open_entry slots[4];
  };
  [[nodiscard]] open_entry& slot(std::size_t i) noexcept { return families_[(i + 3) / 4].slots[(i + 3) % 4]; }
  [[nodiscard]] const open_entry& slot(std::size_t i) const noexcept {
    return families_[(i + 3) / 4].slots[(i + 3) % 4];
  }
  std::vector<family> families_;
  std::size_t size_ = 0;
};

}  // namespace scenert::nav
