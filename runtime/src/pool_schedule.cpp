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

// One member's tick, due at its cohort's due time; the caller sets tls_ticking (once per batch).
// The member's next grid index stays on the grid; what is rare (an overrun, a stall, a failure)
// is out of line, so that this inlines into the loop over a cohort.
[[gnu::always_inline]] inline std::int64_t processor_pool::impl::run_member(
    detail::cohort& c, std::uint32_t i, std::int64_t t_start, detail::tick_clock& clock, worker_slot& w,
    detail::tick_counts& counts) noexcept {
  detail::member& m = c.members[i];
  tick_context ctx;
  ctx.interval = nanoseconds(m.last_start_ns < 0 ? c.period_ns() : t_start - m.last_start_ns);
  ctx.now = time_point(nanoseconds(t_start));
  std::uint64_t ticks = m.ticks.load(std::memory_order_relaxed);
  ctx.index = ticks;
  w.started_ns.store(t_start, std::memory_order_relaxed);
  w.current.store(&m, std::memory_order_release);
  tick_outcome outcome = m.run->tick(ctx, opt.quarantine_after, opt.mailbox_batch, &w.failure);
  std::int64_t t_end = clock.now();  // `current` stays until the next tick or the batch's end

  std::int64_t took = t_end - t_start;
  counts.record(w, m, took, t_start - c.due_ns);
  m.ticks.store(ticks + 1, std::memory_order_relaxed);
  m.last_start_ns = t_start;
  ++counts.ticks;
  m.k = c.k + 1;
  bool overran = (c.exact_period != 0 ? c.due_ns + c.exact_period : c.due_of(m.k)) <= t_end;
  if (overran || took > opt.stall_threshold.count() || outcome != tick_outcome::ok) [[unlikely]]
    after_rare_tick(c, i, t_start, t_end, overran, outcome, w, counts);
  return t_end;
}

// A tick that ended after the next due time makes that next tick late, and every grid point
// already passed is skipped but the last one: exactly one late tick runs and no burst follows. A
// tick that itself began after those points (held up by a slow cohort mate) was that late tick.
void processor_pool::impl::after_rare_tick(detail::cohort& c, std::uint32_t i, std::int64_t t_start,
                                           std::int64_t t_end, bool overran, tick_outcome outcome,
                                           worker_slot& w, detail::tick_counts& counts) noexcept {
  detail::member& m = c.members[i];
  pool_entry* e = c.links[i].e;
  if (overran) {
    m.k = c.last_index_by(t_end, m.k);
    if (t_start >= c.due_of(m.k)) {
      ++m.k;  // it began after every point it missed (a cohort mate held the worker): it was the late one
    } else {
      e->overruns.store(e->overruns.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      ++counts.overruns;
    }
  }
  if (t_end - t_start > opt.stall_threshold.count()) {
    std::int64_t seen = w.reported_start.load(std::memory_order_relaxed);
    if (seen != t_start && w.reported_start.compare_exchange_strong(seen, t_start))
      count_stall(e, t_end - t_start);
  }
  if (outcome != tick_outcome::ok) {
    ++counts.exceptions;
    log(log_level::error, w.failure);
    w.failure.clear();
    if (outcome == tick_outcome::quarantined) {
      m.k = detail::member::parked;
      --c.ticking;
      log(log_level::error, fmt::format("service '{}': quarantined after {} consecutive failed ticks",
                                        e->svc->name(), opt.quarantine_after));
    }
  }
}

// Ticks the cohort's members due at this run, in order, and moves the cohort to the earliest
// next grid index among them. The records are streamed in order; the services they name are
// scattered in memory, so the loop prefetches the records and then the services ahead.
std::int64_t processor_pool::impl::run_cohort(detail::cohort& c, std::int64_t t, detail::tick_clock& clock,
                                              worker_slot& w, detail::tick_counts& counts) noexcept {
  w.cohort_now.store(&c, std::memory_order_relaxed);
  detail::member* ms = c.members.get();
  std::uint32_t n = c.size;
  std::int64_t min_k = detail::member::parked;
  const std::int64_t began = t;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i + 12 < n) __builtin_prefetch(&ms[i + 12]);
    if (i + 6 < n && ms[i + 6].run != nullptr) detail::pool_access::prefetch_service(*ms[i + 6].run);
    detail::member& m = ms[i];
    if (m.run == nullptr) continue;
    if (m.k == c.k) t = run_member(c, i, t, clock, w, counts);
    min_k = m.k < min_k ? m.k : min_k;  // a parked member's k is above every other
  }
  c.move_to(min_k);
  c.last_run_ns = t - began;
  return t;
}

// The manual clock's counterpart of run_cohort's end: the earliest next grid index.
void processor_pool::impl::finish_run(detail::cohort& c) noexcept {
  std::int64_t min_k = detail::member::parked;
  for (std::uint32_t i = 0; i < c.size; ++i) {
    const detail::member& m = c.members[i];
    if (m.run != nullptr && m.k < min_k) min_k = m.k;
  }
  c.move_to(min_k);
}

void processor_pool::impl::count_stall(pool_entry* e, std::int64_t running_ns) noexcept {
  e->stalls.fetch_add(1, std::memory_order_relaxed);
  stalls.fetch_add(1, std::memory_order_relaxed);
  log(log_level::warn, fmt::format("service '{}': tick running for {:.3f} s (stall threshold {:.3f} s)",
                                   e->svc->name(), static_cast<double>(running_ns) / 1e9,
                                   static_cast<double>(opt.stall_threshold.count()) / 1e9));
}

// Ticks a batch of cohorts and hands it back.
void processor_pool::impl::run_batch(detail::batch* b, unsigned worker) noexcept {
  SCENERT_ASSERT(worker < slots.size(), "executor worker index out of range");
  worker_slot& w = *slots[worker];
  detail::tick_counts counts;
  detail::tls_ticking = this;
  detail::tick_clock clock(tsc.ns_per_cycle(), opt.manual);
  std::int64_t t0 = clock.now(), t = t0;
  auto& cs = b->cohorts;
  for (std::size_t j = 0; j < cs.size(); ++j) {
    if (j + 1 < cs.size()) {  // the next cohort's first records
      __builtin_prefetch(cs[j + 1]);
      __builtin_prefetch(cs[j + 1]->members.get());
    }
    t = run_cohort(*cs[j], t, clock, w, counts);
  }
  w.current.store(nullptr, std::memory_order_release);
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
  exec->submit([this, b](unsigned worker) { run_batch(b, worker); }, b->not_before);
}

// A cohort takes no new member once it has run (its members would no longer share its grid).
void processor_pool::impl::close(detail::cohort* c) {
  if (!c->open) return;
  c->open = false;
  if (auto it = filling.find(grid_key{c->hz, c->base_ns}); it != filling.end() && it->second == c)
    filling.erase(it);
}

void processor_pool::impl::dispatch_slot() {
  due_cohorts.clear();
  wheel.take_due(wheel.cursor_ns(),
                 [&](const detail::timing_wheel::item& it) { due_cohorts.push_back(it.c); });
  hand_out(due_cohorts);
}

void processor_pool::impl::dispatch_late() {
  std::sort(late.begin(), late.end(), [](auto* a, auto* b) { return a->due_ns < b->due_ns; });
  hand_out(late);
  late.clear();
}

// Hands cohorts (in due order) to the workers in a few batches, each submitted as soon as it
// holds its share of the services: one submit costs about a microsecond, so batches are large,
// but at least two per worker so that the workers share the load. A batch waits in the executor
// for its latest slot time, so that no cohort ticks before it is due.
void processor_pool::impl::hand_out(const std::vector<detail::cohort*>& cs) {
  std::size_t services = 0;
  for (detail::cohort* c : cs) services += c->ticking;
  std::size_t per = std::max<std::size_t>(64, (services + 2 * slots.size() - 1) / (2 * slots.size()));
  detail::batch* b = nullptr;
  std::size_t filled = 0;
  slow.clear();
  for (detail::cohort* c : cs) {
    close(c);
    c->state = detail::cohort_state::running;
    // A cohort that took a slot or more last time would hold up the cohorts after it in its batch:
    // it goes in a batch of its own, after the others.
    if (c->last_run_ns >= detail::slot_ns) {
      slow.push_back(c);
      continue;
    }
    if (b == nullptr) b = get_batch();
    b->cohorts.push_back(c);
    b->not_before = std::max(b->not_before, detail::timing_wheel::ceil_slot(c->due_ns) * detail::slot_ns);
    filled += c->ticking;
    if (filled >= per) {
      submit(b);
      b = nullptr;
      filled = 0;
    }
  }
  if (b != nullptr) submit(b);
  for (detail::cohort* c : slow) {
    b = get_batch();
    b->cohorts.push_back(c);
    b->not_before = detail::timing_wheel::ceil_slot(c->due_ns) * detail::slot_ns;
    submit(b);
  }
}

void processor_pool::impl::reap_returns() {
  detail::batch* b = returns.exchange(nullptr, std::memory_order_acquire);
  while (b != nullptr) {
    detail::batch* next = b->next;
    for (detail::cohort* c : b->cohorts) on_returned(c);
    b->cohorts.clear();
    b->not_before = 0;
    b->next = free_batches;
    free_batches = b;
    b = next;
  }
}

void processor_pool::impl::watchdog(std::int64_t now) {
  std::vector<std::string> names;
  for (auto& slot : slots) {
    // The worker stores its cohort before the member, so this cohort is the member's or a later
    // one (then the member is not in it: looked at again next time). Entries of a running
    // cohort are vacated only on this thread, so `e` stays alive here.
    const detail::member* m = slot->current.load(std::memory_order_acquire);
    if (m == nullptr) continue;
    std::int64_t start = slot->started_ns.load(std::memory_order_relaxed);
    std::int64_t running = now - start;
    if (running <= opt.stall_threshold.count()) continue;
    detail::cohort* c = slot->cohort_now.load(std::memory_order_relaxed);
    auto idx = reinterpret_cast<std::uintptr_t>(m) - reinterpret_cast<std::uintptr_t>(c->members.get());
    if (idx >= std::uintptr_t{c->size} * sizeof(detail::member)) continue;
    pool_entry* e = c->links[idx / sizeof(detail::member)].e;
    names.push_back(fmt::format("{} (running {:.1f} s)", e->svc->name(), static_cast<double>(running) / 1e9));
    std::int64_t seen = slot->reported_start.load(std::memory_order_relaxed);
    if (seen != start && slot->reported_start.compare_exchange_strong(seen, start)) count_stall(e, running);
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
    if (!retired.empty()) recycle_retired();
    {
      std::lock_guard lock(cmd_mu);
      if (stop_cmd) break;
    }
    std::int64_t now = now_ns();
    tsc.refine();
    if (!late.empty()) dispatch_late();
    if (wheel.size() == 0) wheel.jump(now);
    // Slots go out `lead` ahead of their time and wait in the executor: a worker then starts a
    // slot one wake-up after its time, by its own timer, where a slot handed out at its time
    // would start after the dispatcher's wake-up and then the worker's.
    while (wheel.cursor_ns() <= now + lead_ns) {
      dispatch_slot();
      wheel.step();
    }
    watchdog(now);
    // A batch pushes its entries back before it leaves in_flight, so this order misses none.
    bool idle = wheel.size() == 0 && in_flight.load(std::memory_order_acquire) == 0 &&
                returns.load(std::memory_order_acquire) == nullptr;
    auto wake = time_point(nanoseconds(idle ? now + 50 * detail::slot_ns : wheel.cursor_ns() - lead_ns));
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
    recycle_retired();
    {
      std::lock_guard lock(mu);
      if (stop_requested || shut_down) break;
    }
    if (wheel.size() == 0) wheel.jump(std::min(now_ns(), target));
    due_cohorts.clear();
    while (due_cohorts.empty()) {
      std::int64_t c = wheel.cursor_ns();
      wheel.take_due(std::min(c, target),
                     [this](const detail::timing_wheel::item& it) { due_cohorts.push_back(it.c); });
      if (!due_cohorts.empty() || c > target) break;
      wheel.step();
    }
    if (due_cohorts.empty()) break;
    scratch.clear();
    for (detail::cohort* c : due_cohorts) {
      close(c);
      c->state = detail::cohort_state::running;
      for (std::uint32_t i = 0; i < c->size; ++i) {
        const detail::member& m = c->members[i];
        if (m.run != nullptr && m.k == c->k) scratch.emplace_back(c, i);
      }
    }
    std::sort(scratch.begin(), scratch.end(), [](const auto& a, const auto& b) {
      if (a.first->due_ns != b.first->due_ns) return a.first->due_ns < b.first->due_ns;
      return a.first->links[a.second].e->seq < b.first->links[b.second].e->seq;
    });
    for (auto [c, i] : scratch) {
      if (now_ns() < c->due_ns) manual->advance(nanoseconds(c->due_ns - now_ns()));
      detail::tick_counts counts;
      detail::tls_ticking = this;
      detail::tick_clock clock(0, opt.manual);
      slots[0]->cohort_now.store(c, std::memory_order_relaxed);
      (void)run_member(*c, i, now_ns(), clock, *slots[0], counts);
      slots[0]->current.store(nullptr, std::memory_order_release);
      detail::tls_ticking = nullptr;
      counts.flush(*slots[0]);
      last_progress_ns.store(now_ns(), std::memory_order_relaxed);
    }
    for (detail::cohort* c : due_cohorts) {
      finish_run(*c);
      on_returned(c);
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

}  // namespace scenert
