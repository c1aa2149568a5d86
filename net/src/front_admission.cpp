// Admission before overload: each shard's load measured at its sweep, the whole front's headroom
// sampled by shard 0 and fed to the gate, and a new login refused (server_busy, a retry-after) while
// the gate is closed. Players logged in and resumes never reach the gate.
#include "front_impl.hpp"

#include <time.h>

#include <algorithm>

#include <fmt/format.h>

namespace scenert::net {

namespace {

std::int64_t thread_cpu_ns() {
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// The 90th percentile of `sizes` (reordered); 0 when empty.
std::size_t p90(std::vector<std::size_t>& sizes) {
  if (sizes.empty()) return 0;
  const auto at = sizes.begin() + static_cast<std::ptrdiff_t>(sizes.size() * 9 / 10);
  std::nth_element(sizes.begin(), at, sizes.end());
  return *at;
}

}  // namespace

// On the shard's own thread: its CPU time since the sweep before, per wall time, and how much waits
// in its connections' write queues.
void front_shard::measure_load(clock::time_point now, clock::duration lag) {
  load.lag_us.store(std::chrono::duration_cast<std::chrono::microseconds>(lag).count(),
                    std::memory_order_relaxed);
  const std::int64_t cpu = thread_cpu_ns();
  if (load.cpu_ns_before >= 0 && now > load.wall_before) {
    const double wall = std::chrono::duration<double, std::nano>(now - load.wall_before).count();
    const double share = std::clamp(static_cast<double>(cpu - load.cpu_ns_before) / wall, 0.0, 1.0);
    load.busy_ppm.store(static_cast<std::uint32_t>(share * 1e6), std::memory_order_relaxed);
  }
  load.cpu_ns_before = cpu;
  load.wall_before = now;
  std::vector<std::size_t> queued;
  queued.reserve(sessions.size() + greeting.size());
  for (const auto& [pid, s] : sessions) queued.push_back(s->queued_bytes());
  for (const auto& s : greeting) queued.push_back(s->queued_bytes());
  load.queue_p90.store(p90(queued), std::memory_order_relaxed);
}

void front::impl::sample_headroom(clock::time_point now) {
  headroom h;
  h.tick_lateness = std::chrono::microseconds(admission.reported_lateness_us.load(std::memory_order_relaxed));
  std::uint32_t busiest = 0;
  for (const auto& sh : shards) {
    busiest = std::max(busiest, sh->load.busy_ppm.load(std::memory_order_relaxed));
    h.io_lag = std::max(h.io_lag, std::chrono::microseconds(sh->load.lag_us.load(std::memory_order_relaxed)));
    h.write_queue_bytes =
        std::max<std::size_t>(h.write_queue_bytes, sh->load.queue_p90.load(std::memory_order_relaxed));
  }
  h.io_busy = busiest / 1e6;
  auto& gate = admission.gate;
  const bool open = gate.update(h, now);
  admission.tick_lateness_us.store(h.tick_lateness.count(), std::memory_order_relaxed);
  admission.io_busy_ppm.store(busiest, std::memory_order_relaxed);
  admission.io_lag_us.store(h.io_lag.count(), std::memory_order_relaxed);
  admission.write_queue_bytes.store(h.write_queue_bytes, std::memory_order_relaxed);
  admission.over.store(static_cast<std::uint8_t>(gate.over()), std::memory_order_relaxed);
  admission.closings.store(gate.closings(), std::memory_order_relaxed);
  admission.admitting.store(open, std::memory_order_relaxed);
}

// A new login while the front admits none: its client hears server_busy and when to try again
// (the retry-after plus up to half of it at random, so that the refused do not come back together).
bool login_desk::refused_busy(const std::shared_ptr<session>& s) {
  auto& hub = shard_.hub;
  if (hub.admitting()) return false;
  front_counters::add(hub.admission.refused);
  const auto base = static_cast<std::uint32_t>(hub.opt.admission.retry_after.count());
  const std::uint32_t wait = base + (base / 2 == 0 ? 0 : entropy_() % (base / 2));
  s->close(close_reason::server_busy, fmt::format("retry after {} ms", wait), wait);
  return true;
}

void add_headroom(front_stats& s, const admission_watch& a) {
  auto g = [](const auto& v) { return v.load(std::memory_order_relaxed); };
  s.room.tick_lateness = std::chrono::microseconds(g(a.tick_lateness_us));
  s.room.io_busy = g(a.io_busy_ppm) / 1e6;
  s.room.io_lag = std::chrono::microseconds(g(a.io_lag_us));
  s.room.write_queue_bytes = g(a.write_queue_bytes);
  s.admitting = g(a.admitting);
  s.over = static_cast<headroom_measure>(g(a.over));
  s.busy_refused = g(a.refused);
  s.admission_closings = g(a.closings);
}

}  // namespace scenert::net
