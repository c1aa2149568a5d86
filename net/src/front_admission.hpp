#pragma once
// The front's admission: every shard measures its own load at its sweep (its thread's CPU share, its
// connections' write queues); shard 0 gathers a headroom sample of the whole each sweep, with the
// host's last tick lateness, and feeds the gate; a new login asks whether the front admits.

#include <atomic>
#include <chrono>
#include <cstdint>

#include <scenert/net/admission.hpp>
#include <scenert/net/front.hpp>

namespace scenert::net {

// What one shard measured at its last sweep.
// Thread-safety: the atomics from any thread; the rest its own I/O thread's.
struct shard_load {
  std::atomic<std::uint32_t> busy_ppm{0};   // its thread's CPU time per wall time, in millionths
  std::atomic<std::uint64_t> queue_p90{0};  // p90 over its connections of the bytes queued
  std::atomic<std::int64_t> lag_us{0};      // how late its sweep timer ran
  std::int64_t cpu_ns_before = -1;          // its thread's CPU time at the sweep before
  std::chrono::steady_clock::time_point wall_before{};
};

// The front's headroom and its gate.
// Thread-safety: the gate is shard 0's I/O thread's; the rest atomics, from any thread.
struct admission_watch {
  explicit admission_watch(const admission_options& o) : gate(o) {}

  admission_gate gate;
  std::atomic<std::int64_t> reported_lateness_us{0};  // report_tick_lateness
  // The last sample and the gate's state, as front::stats() shows them.
  std::atomic<std::int64_t> tick_lateness_us{0};
  std::atomic<std::uint32_t> io_busy_ppm{0};
  std::atomic<std::int64_t> io_lag_us{0};
  std::atomic<std::uint64_t> write_queue_bytes{0};
  std::atomic<bool> admitting{true};
  std::atomic<std::uint8_t> over{0};
  std::atomic<std::uint64_t> refused{0}, closings{0};
};

/// Fills the headroom and admission fields of `s` from `a`.
void add_headroom(front_stats& s, const admission_watch& a);

}  // namespace scenert::net
