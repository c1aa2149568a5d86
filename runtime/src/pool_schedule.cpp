// The pool's scheduling: ticks on workers, the dispatcher with its timing wheel and watchdog,
// and the manual clock's inline run.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "pool_impl.hpp"
#include "thread_priority.hpp"

namespace scenert {

using detail::pool_entry;
using detail::worker_slot;

// The caller sets tls_ticking around its ticks (once per batch).
std::int64_t processor_pool::impl::run_one(pool_entry* e, std::int64_t t_start, detail::tick_clock& clock,
                                           worker_slot& w, detail::tick_counts& counts,
                                           bool& parked) noexcept {
  tick_context ctx;
  ctx.interval = nanoseconds(e->last_start_ns < 0 ? e->period_ns() : t_start - e->last_start_ns);
  ctx.now = time_point(nanoseconds(t_start));
  std::uint64_t ticks = e->ticks.load(std::memory_order_relaxed);
  ctx.index = ticks;
  std::uint64_t seq = w.tick_seq.load(std::memory_order_relaxed) + 1;
  w.started_ns.store(t_start, std::memory_order_relaxed);
  w.tick_seq.store(seq, std::memory_order_relaxed);
  w.current.store(e, std::memory_order_release);
  tick_outcome outcome = e->run->tick(ctx, opt.quarantine_after, opt.mailbox_batch, &w.failure);
  parked = outcome == tick_outcome::quarantined;
  std::int64_t t_end = clock.now();
  w.current.store(nullptr, std::memory_order_release);

  std::int64_t took = t_end - t_start, late = t_start - e->due_ns;
  e->tick_hist.record(took);
  e->late_hist.record(late);
  w.tick_hist.record(took);
  w.late_hist.record(late);
  e->ticks.store(ticks + 1, std::memory_order_relaxed);
  ++counts.ticks;
  if (took > opt.stall_threshold.count()) [[unlikely]] {
    std::uint64_t seen = w.reported_seq.load(std::memory_order_relaxed);
    if (seen != seq && w.reported_seq.compare_exchange_strong(seen, seq)) count_stall(e, took);
  }
  if (outcome != tick_outcome::ok) [[unlikely]] {
    ++counts.exceptions;
    log(log_level::error, w.failure);
    w.failure.clear();
    if (outcome == tick_outcome::quarantined)
      log(log_level::error, fmt::format("service '{}': quarantined after {} consecutive failed ticks",
                                        e->svc->name(), opt.quarantine_after));
  }
  e->last_start_ns = t_start;
  schedule_next(e, t_end);
  if (e->k > 0 && e->due_ns <= t_end) ++counts.overruns;
  return t_end;
}

// The next due time stays on the grid. A tick that ended after the next due time makes that
// next tick late; every grid point already passed is skipped but the last one, so exactly one
// late tick runs and no burst follows.
void processor_pool::impl::schedule_next(pool_entry* e, std::int64_t t_end) noexcept {
  std::int64_t k = e->k + 1;
  std::int64_t next = e->exact_period != 0 ? e->due_ns + e->exact_period : e->due_of(k);
  if (next <= t_end) [[unlikely]] {
    e->overruns.store(e->overruns.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    auto guess = static_cast<std::int64_t>(std::floor(static_cast<double>(t_end - e->base_ns) * e->hz / 1e9));
    k = std::max(k, guess);
    while (e->due_of(k + 1) <= t_end) ++k;
    while (k > e->k + 1 && e->due_of(k) > t_end) --k;
    next = e->due_of(k);
  }
  e->k = k;
  e->due_ns = next;
}

void processor_pool::impl::count_stall(pool_entry* e, std::int64_t running_ns) noexcept {
  e->stalls.fetch_add(1, std::memory_order_relaxed);
  stalls.fetch_add(1, std::memory_order_relaxed);
  log(log_level::warn, fmt::format("service '{}': tick running for {:.3f} s (stall threshold {:.3f} s)",
                                   e->svc->name(), static_cast<double>(running_ns) / 1e9,
                                   static_cast<double>(opt.stall_threshold.count()) / 1e9));
}

// Ticks a batch. The entries and services are scattered in memory, so the loop prefetches both,
// eight tickets ahead (the ticket names both: no dependent load). A quiet service's mailbox is
// not read at all (the service keeps a mail flag on its first line). The batch goes back marked
// when every next due time falls in one wheel slot, so the scheduling thread re-inserts it whole.
void processor_pool::impl::run_batch(detail::batch* b, unsigned worker) noexcept {
  SCENERT_ASSERT(worker < slots.size(), "executor worker index out of range");
  worker_slot& w = *slots[worker];
  auto& items = b->items;
  std::size_t n = items.size();
  detail::tick_counts counts;
  detail::tls_ticking = this;
  detail::tick_clock clock(tsc.ns_per_cycle(), opt.manual);
  std::int64_t t0 = clock.now(), t = t0;
  bool same_slot = true;
  std::int64_t slot = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 8 < n) {
      auto* ahead = reinterpret_cast<const char*>(items[i + 8].e);
      __builtin_prefetch(ahead);
      __builtin_prefetch(ahead + 64);
      detail::pool_access::prefetch_service(*items[i + 8].run);
    }
    detail::ticket& k = items[i];
    t = run_one(k.e, t, clock, w, counts, k.parked);
    k.due = k.e->due_ns;
    std::int64_t s = detail::timing_wheel::ceil_slot(k.due);
    if (i == 0) slot = s;
    same_slot = same_slot && s == slot && !k.parked;
  }
  b->same_slot = same_slot;
  detail::tls_ticking = nullptr;
  counts.flush(w);
  w.busy_ns.store(w.busy_ns.load(std::memory_order_relaxed) + (t - t0), std::memory_order_relaxed);
  detail::batch* old = returns.load(std::memory_order_relaxed);
  do {
    b->next = old;
  } while (!returns.compare_exchange_weak(old, b, std::memory_order_release, std::memory_order_relaxed));
  last_progress_ns.store(t, std::memory_order_relaxed);
  in_flight.fetch_sub(1, std::memory_order_release);
}

detail::batch* processor_pool::impl::get_batch() {
  if (free_batches == nullptr) {
    batches.push_back(std::make_unique<detail::batch>());
    return batches.back().get();
  }
  detail::batch* b = free_batches;
  free_batches = b->next;
  return b;
}

void processor_pool::impl::submit(detail::batch* b) {
  in_flight.fetch_add(1, std::memory_order_relaxed);
  exec->submit([this, b](unsigned worker) { run_batch(b, worker); });
}

// Hands the cursor slot's due entries to the workers in a few batches, each submitted as soon as
// it is full: one submit costs about a microsecond, so batches are large, but at least two per
// worker so that the workers share the load.
void processor_pool::impl::dispatch_slot() {
  std::size_t n = wheel.cursor_slot_size();
  std::size_t per = std::max<std::size_t>(32, (n + 2 * slots.size() - 1) / (2 * slots.size()));
  detail::batch* b = nullptr;
  wheel.take_due<false>(wheel.cursor_ns(), [&](const detail::ticket& t) {
    states[t.id] = detail::entry_state::running;
    if (b == nullptr) b = get_batch();
    b->items.push_back(t);
    if (b->items.size() == per) {
      submit(b);
      b = nullptr;
    }
  });
  if (b != nullptr) submit(b);
}

void processor_pool::impl::reap_returns() {
  detail::batch* b = returns.exchange(nullptr, std::memory_order_acquire);
  while (b != nullptr) {
    detail::batch* next = b->next;
    // The common case reads no entry (the ticket carries the next due time and the id) and
    // moves the whole batch into one slot.
    if (b->same_slot && removals_waiting == 0) {
      for (const detail::ticket& t : b->items) states[t.id] = detail::entry_state::in_wheel;
      wheel.insert_same_slot(b->items);
    } else {
      for (const detail::ticket& t : b->items) {
        if (t.parked || (removals_waiting != 0 && t.e->remove_requested)) [[unlikely]] {
          on_returned(t.e, t.parked);
        } else {
          states[t.id] = detail::entry_state::in_wheel;
          wheel.insert(t);
        }
      }
    }
    auto& items = b->items;
    items.clear();
    b->next = free_batches;
    free_batches = b;
    b = next;
  }
}

void processor_pool::impl::watchdog(std::int64_t now) {
  std::vector<std::string> names;
  for (auto& slot : slots) {
    pool_entry* e = slot->current.load(std::memory_order_acquire);
    if (e == nullptr) continue;
    std::uint64_t seq = slot->tick_seq.load(std::memory_order_relaxed);
    std::int64_t running = now - slot->started_ns.load(std::memory_order_relaxed);
    if (running <= opt.stall_threshold.count()) continue;
    names.push_back(fmt::format("{} (running {:.1f} s)", e->svc->name(), static_cast<double>(running) / 1e9));
    std::uint64_t seen = slot->reported_seq.load(std::memory_order_relaxed);
    if (seen != seq && slot->reported_seq.compare_exchange_strong(seen, seq)) count_stall(e, running);
  }
  std::lock_guard lock(stall_mu);
  if (!names.empty() || !stalled_now.empty()) stalled_now.swap(names);
}

void processor_pool::impl::dispatcher_main() {
#if defined(__linux__)
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // wake at the slot, not up to 50 us after it
#endif
  detail::realtime_scope realtime(opt.realtime_priority);
  for (;;) {
    apply_commands();
    reap_returns();
    {
      std::lock_guard lock(cmd_mu);
      if (stop_cmd) break;
    }
    std::int64_t now = now_ns();
    tsc.refine();
    if (wheel.size() == 0) wheel.jump(now);
    while (wheel.cursor_ns() <= now) {
      dispatch_slot();
      wheel.step();
    }
    watchdog(now);
    // A batch pushes its entries back before it leaves in_flight, so this order misses none.
    bool idle = wheel.size() == 0 && in_flight.load(std::memory_order_acquire) == 0 &&
                returns.load(std::memory_order_acquire) == nullptr;
    auto wake = time_point(nanoseconds(idle ? now + 50 * detail::slot_ns : wheel.cursor_ns()));
    std::unique_lock lock(cmd_mu);
    cv.wait_until(lock, wake, [&] { return stop_cmd || !commands.empty(); });
  }
  // Graceful stop: let every batch and finalization finish, then finalize what is left.
  while (in_flight.load(std::memory_order_acquire) != 0) {
    reap_returns();
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  reap_returns();
  shutdown_entries();
  std::lock_guard lock(stall_mu);
  stalled_now.clear();
}

void processor_pool::impl::advance_manual(std::int64_t target) {
  auto* manual = opt.manual;
  for (;;) {
    apply_commands();
    {
      std::lock_guard lock(mu);
      if (stop_requested || shut_down) break;
    }
    if (wheel.size() == 0) wheel.jump(std::min(now_ns(), target));
    scratch.clear();
    while (scratch.empty()) {
      std::int64_t c = wheel.cursor_ns();
      wheel.take_due(std::min(c, target), [this](const detail::ticket& t) { scratch.push_back(t.e); });
      if (!scratch.empty() || c > target) break;
      wheel.step();
    }
    if (scratch.empty()) break;
    std::sort(scratch.begin(), scratch.end(), [](const pool_entry* a, const pool_entry* b) {
      return a->due_ns != b->due_ns ? a->due_ns < b->due_ns : a->seq < b->seq;
    });
    for (pool_entry* e : scratch) {
      if (now_ns() < e->due_ns) manual->advance(nanoseconds(e->due_ns - now_ns()));
      states[e->id] = detail::entry_state::running;
      detail::tick_counts counts;
      detail::tls_ticking = this;
      bool parked = false;
      detail::tick_clock clock(0, opt.manual);
      (void)run_one(e, now_ns(), clock, *slots[0], counts, parked);
      detail::tls_ticking = nullptr;
      counts.flush(*slots[0]);
      last_progress_ns.store(now_ns(), std::memory_order_relaxed);
      on_returned(e, parked);
    }
  }
  if (now_ns() < target) manual->advance(nanoseconds(target - now_ns()));
  bool stop_now;
  {
    std::lock_guard lock(mu);
    stop_now = stop_requested && !shut_down;
  }
  if (stop_now) shutdown_entries();
}

// ---- metrics --------------------------------------------------------------------------------

namespace {

service_metrics row_of(const pool_entry& e) {
  service_metrics r;
  r.name = e.svc->name();
  r.hz = e.hz;
  r.ticks = e.ticks.load(std::memory_order_relaxed);
  r.overruns = e.overruns.load(std::memory_order_relaxed);
  r.exceptions = e.svc->failures();
  r.stalls = e.stalls.load(std::memory_order_relaxed);
  r.dropped_messages = e.svc->dropped_messages();
  r.mailbox_depth = e.svc->mailbox_depth();
  r.quarantined = e.svc->quarantined();
  r.tick_p50 = nanoseconds(e.tick_hist.quantile(0.5));
  r.tick_p99 = nanoseconds(e.tick_hist.quantile(0.99));
  r.tick_max = nanoseconds(e.tick_hist.max());
  r.lateness_p50 = nanoseconds(e.late_hist.quantile(0.5));
  r.lateness_p99 = nanoseconds(e.late_hist.quantile(0.99));
  r.lateness_max = nanoseconds(e.late_hist.max());
  return r;
}

}  // namespace

pool_metrics processor_pool::metrics(bool per_service) const {
  auto& p = *impl_;
  pool_metrics m;
  m.workers = p.opt.manual != nullptr ? 0 : p.opt.workers;
  std::int64_t now = p.now_ns();
  {
    std::lock_guard lock(p.mu);
    m.services = p.registered;
    for (pool_entry* e = p.registry; e != nullptr; e = e->reg_next) {
      m.mailbox_depth += e->svc->mailbox_depth();
      if (e->svc->quarantined()) ++m.quarantined;
      if (per_service) m.per_service.push_back(row_of(*e));
    }
  }
  std::int64_t busy = 0;
  for (auto& slot : p.slots) {
    m.ticks += slot->ticks.load(std::memory_order_relaxed);
    m.overruns += slot->overruns.load(std::memory_order_relaxed);
    m.exceptions += slot->exceptions.load(std::memory_order_relaxed);
    busy += slot->busy_ns.load(std::memory_order_relaxed);
    detail::accumulate(m.tick_duration, slot->tick_hist);
    detail::accumulate(m.lateness, slot->late_hist);
  }
  detail::finish(m.tick_duration);
  detail::finish(m.lateness);
  m.stalls = p.stalls.load(std::memory_order_relaxed);
  std::int64_t start = p.start_ns.load(std::memory_order_relaxed);
  if (start != 0 && m.workers != 0 && now > start)
    m.utilisation =
        static_cast<double>(busy) / (static_cast<double>(m.workers) * static_cast<double>(now - start));
  std::int64_t progress = p.last_progress_ns.load(std::memory_order_relaxed);
  if (progress != 0) m.since_progress = nanoseconds(std::max<std::int64_t>(0, now - progress));
  std::lock_guard lock(p.stall_mu);
  m.stalled_now = p.stalled_now;
  return m;
}

}  // namespace scenert
