#pragma once
// JPS's open list: a radix heap on f (radix_list). A search with a consistent heuristic never pushes an f
// below the last one popped, so entries can be kept in buckets by the highest bit in which their
// f differs from that last f (f >= 0, so its IEEE bits sort as the values do): a push is a
// push_back, a pop takes from bucket 0 (f equal to the last), and only when bucket 0 is empty
// does the least nonempty bucket get split down. Each entry moves a few times at most, every move
// along contiguous memory: no sift through a tree of cache lines.
// Entries of equal f leave in last-in first-out order: the successors of the node being expanded
// that keep its f are expanded next, as a depth-first dive toward the goal.
// A* keeps std::push_heap over its 24-byte entries: the plain baseline.

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace scenert::nav {

/// The radix heap over entries of any type with a member `std::uint64_t order` (f's bits); the
/// entries carry their payload, so that a pop reads contiguous memory. Its buckets keep their
/// capacity across searches (no allocation once warm).
template <class Entry>
class radix_list {
 public:
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  /// Forgets every entry; the next pushes may start from any f.
  void clear() noexcept {
    for (std::uint64_t m = used_; m != 0; m &= m - 1) buckets_[std::countr_zero(m)].clear();
    used_ = 0, size_ = 0, last_ = 0;
  }
  /// Adds an entry; its f must be no less than the last popped one's (an f found smaller by
  /// rounding is taken as equal to it).
  void push(const Entry& e) {
    const unsigned b = bucket_of(e.order);
    buckets_[b].push_back(e);
    used_ |= std::uint64_t{1} << b;
    ++size_;
  }
  /// Removes and returns an entry of the least f; the list must not be empty.
  Entry pop() {
    if ((used_ & 1) == 0) split_least();
    std::vector<Entry>& zero = buckets_[0];
    const Entry e = zero.back();
    zero.pop_back();
    if (zero.empty()) used_ &= ~std::uint64_t{1};
    --size_;
    return e;
  }

 private:
  [[nodiscard]] unsigned bucket_of(std::uint64_t order) const noexcept {
    return order <= last_ ? 0 : 64 - static_cast<unsigned>(std::countl_zero(order ^ last_));
  }
  // Moves the least nonempty bucket down: its least f becomes the last, and every entry of it
  // lands in a lower bucket (those of that f in bucket 0).
  void split_least() {
    const auto b = static_cast<unsigned>(std::countr_zero(used_));
    std::vector<Entry>& from = buckets_[b];
    std::uint64_t least = from.front().order;
    for (const Entry& e : from) least = e.order < least ? e.order : least;
    last_ = least;
    for (const Entry& e : from) {
      const unsigned to = bucket_of(e.order);
      buckets_[to].push_back(e);
      used_ |= std::uint64_t{1} << to;
    }
    from.clear();
    used_ &= ~(std::uint64_t{1} << b);
  }
  // f >= 0 leaves the sign bit clear, so two f differ at bit 62 at most: buckets 0..63.
  std::array<std::vector<Entry>, 64> buckets_;
  std::uint64_t used_ = 0;  // bit b: bucket b is not empty
  std::uint64_t last_ = 0;  // the f (bits) of the last split, no more than every entry's
  std::size_t size_ = 0;
};

}  // namespace scenert::nav
