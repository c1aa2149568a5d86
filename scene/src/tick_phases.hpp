#pragma once
/// tick_phases: where in its period each scene group of a frame rate ticks — the millisecond
/// carrying the least weight — so that groups opened together (a burst of new dungeon lines) do
/// not all tick in the same millisecond of every period.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace scenert::detail {

/// Thread-safety: one thread (the world's).
class tick_phases {
 public:
  /// The least loaded millisecond of the period of `hz`, as a phase for processor_pool::add.
  std::chrono::nanoseconds take(std::uint32_t hz) {
    auto& load = of(hz);
    auto at = std::min_element(load.begin(), load.end()) - load.begin();
    return std::chrono::milliseconds(at);
  }
  /// Adds (or, negative, removes) weight at a phase taken for `hz`.
  void adjust(std::uint32_t hz, std::chrono::nanoseconds phase, std::int64_t weight) {
    auto& load = of(hz);
    auto ms = static_cast<std::size_t>(std::chrono::duration_cast<std::chrono::milliseconds>(phase).count());
    load[std::min(ms, load.size() - 1)] += weight;
  }

 private:
  std::vector<std::int64_t>& of(std::uint32_t hz) {
    auto& load = load_[hz];
    if (load.empty()) load.assign(std::max<std::uint32_t>(1, 1000 / std::max<std::uint32_t>(1, hz)), 0);
    return load;
  }
  std::unordered_map<std::uint32_t, std::vector<std::int64_t>> load_;  // hz -> weight per ms
};

}  // namespace scenert::detail
