#pragma once
// The front's counters: the ones every I/O thread adds to (front_counters) and the frames out, which
// each thread counts alone (out_counts). front::stats() reads and sums them.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <scenert/net/front.hpp>
#include <scenert/net/message_id.hpp>

namespace scenert::net {

// Thread-safety: any thread; relaxed atomic adds.
struct front_counters {
  std::atomic<std::uint64_t> accepted{0}, refused{0}, closed{0}, connections{0}, frames_in{0}, bytes_in{0},
      bytes_out{0}, writes{0}, bad_frames{0}, oversize{0}, moves_refused{0}, moves_stale{0}, rate_limited{0},
      logins{0}, guests{0}, resumed{0}, detached{0}, claimed{0};
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(close_reason::count_)> closed_by{};
  std::array<std::atomic<std::uint64_t>, std::size(all_message_ids)> in_frames{}, in_bytes{};

  static void add(std::atomic<std::uint64_t>& c, std::uint64_t v = 1) {
    c.fetch_add(v, std::memory_order_relaxed);
  }
  /// One frame in, by id.
  void count_in(std::uint32_t id, std::size_t payload);
  /// A connection closed for `why`.
  void count_close(close_reason why);
};

// Frames out, counted by one shard's thread alone: a plain load and store, no locked add shared with
// the other shards (the fan-out counts every frame it queues).
// Thread-safety: written by one I/O thread, read by any.
struct out_counts {
  std::atomic<std::uint64_t> frames{0};
  std::array<std::atomic<std::uint64_t>, std::size(all_message_ids)> frames_by_id{}, bytes_by_id{};
  /// Counts every frame of `whole` (whole frames, concatenated) by its id.
  void count(std::string_view whole);
};

}  // namespace scenert::net
