#pragma once
// What the bots' worker files share: time stamps, a position's identity, the report's wire counts.

#include <scenert/bots/worker.hpp>

#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>

namespace scenert::bots::detail {

inline constexpr auto tick_period = std::chrono::milliseconds(10);
inline constexpr std::size_t max_examples = 10;

inline std::int64_t ns_of(clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// A position's identity: the bits of its two ground coordinates, as sent and as echoed.
inline std::uint64_t key_of(float x, float z) {
  return (std::uint64_t{std::bit_cast<std::uint32_t>(x)} << 32) | std::bit_cast<std::uint32_t>(z);
}

inline wire_count& wire_of(bots_report& r, net::message_id id) {
  static wire_count unknown;
  const int i = net::index_of(id);
  return i < 0 ? unknown : r.wire[static_cast<std::size_t>(i)];
}

inline void raise_max(std::atomic<std::uint64_t>& max, std::uint64_t v) {
  for (auto m = max.load(); v > m && !max.compare_exchange_weak(m, v);) {
  }
}

}  // namespace scenert::bots::detail
