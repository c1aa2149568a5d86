#include <scenert/runtime/processor_pool.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "pool_impl.hpp"
#include "thread_priority.hpp"

namespace scenert {

using detail::pool_access;
using detail::pool_entry;

namespace detail {
thread_local const void* tls_ticking = nullptr;
}  // namespace detail

namespace {

// The priority is in range and the system grants it: tried on the calling thread, then undone.
result<void, pool_errc> check_realtime(int priority) {
  if (priority == 0) return {};
  if (priority < 1 || priority > 99)
    return fail(pool_errc::invalid_options,
                fmt::format("start(): realtime_priority must be 0 (off) or 1..99, got {}", priority));
  detail::realtime_scope probe(priority);
  if (!probe.error().empty())
    return fail(pool_errc::invalid_options, fmt::format("start(): realtime_priority: {}", probe.error()));
  return {};
}

}  // namespace

processor_pool::impl::impl(pool_options o)
    : opt(std::move(o)),
      clk(opt.manual != nullptr ? static_cast<const clock*>(opt.manual) : &steady),
      wheel(now_ns()) {
  origin_ns = detail::timing_wheel::ceil_slot(now_ns()) * detail::slot_ns;
  unsigned n = opt.manual != nullptr ? 1 : std::max(1u, std::min(opt.workers, detail::max_workers));
  for (unsigned i = 0; i < n; ++i) slots.push_back(std::make_unique<detail::worker_slot>());
}

void processor_pool::impl::log(log_level level, const std::string& text) const {
  if (opt.log) {
    opt.log(level, text);
    return;
  }
  static constexpr const char* names[] = {"info", "warn", "error"};
  std::fprintf(stderr, "scenert: %s: %s\n", names[static_cast<int>(level)], text.c_str());
}

void processor_pool::impl::registry_link(pool_entry* e, pool_entry* next) noexcept {
  pool_entry* prev = next != nullptr ? next->reg_prev : nullptr;
  if (next == nullptr) next = registry;  // at the head
  e->reg_prev = prev;
  e->reg_next = next;
  (prev != nullptr ? prev->reg_next : registry) = e;
  if (next != nullptr) next->reg_prev = e;
}

void processor_pool::impl::registry_unlink(pool_entry* e) noexcept {
  (e->reg_prev != nullptr ? e->reg_prev->reg_next : registry) = e->reg_next;
  if (e->reg_next != nullptr) e->reg_next->reg_prev = e->reg_prev;
  e->reg_prev = e->reg_next = nullptr;
}

void processor_pool::impl::push_command(pool_entry* e, bool remove) {
  std::lock_guard lock(cmd_mu);
  commands.push_back({e, remove});
  if (commands.size() == 1) cv.notify_all();  // the dispatcher takes all queued at once
}

void processor_pool::impl::apply_commands() {
  taken.clear();
  {
    std::lock_guard lock(cmd_mu);
    taken.swap(commands);
  }
  for (auto c : taken) apply(c.e, c.remove);
}

void processor_pool::impl::apply(pool_entry* e, bool remove) {
  if (!remove) {  // add: commands run in order, so a remove of this entry comes later
    place(e);
    return;
  }
  e->remove_requested = true;
  if (e->home->state == detail::cohort_state::running)
    ++e->home->removals_waiting;  // vacated when the run returns
  else
    vacate(e);
}

// A new member joins the cohort filling its grid while that cohort has not run yet (so they
// share every due time), else a fresh one.
void processor_pool::impl::place(pool_entry* e) {
  using detail::cohort_state;
  grid_key key{e->hz, e->base_ns};
  detail::cohort* c = nullptr;
  bool busy = false;  // the grid filled a cohort already: many services are joining it
  if (auto it = filling.find(key); it != filling.end()) {
    c = it->second;
    busy = c->size == c->capacity;
    if (!c->open || busy || (c->state != cohort_state::in_wheel && c->state != cohort_state::late)) {
      close(c);
      c = nullptr;
    }
  }
  if (c == nullptr) {
    auto& spare = free_cohorts[busy ? 1 : 0];
    if (spare.empty()) {
      cohorts.push_back(
          std::make_unique<detail::cohort>(busy ? detail::cohort::large : detail::cohort::small));
      spare.push_back(cohorts.back().get());
    }
    c = spare.back();
    spare.pop_back();
    c->set_grid(e->hz, e->base_ns);
    c->size = c->live = c->ticking = c->removals_waiting = 0;
    c->open = true;
    schedule(c);
    filling[key] = c;
  }
  detail::member& m = c->members[c->size];
  m.run = e->svc.get();
  m.k = 1;
  m.last_start_ns = -1;
  m.ticks.store(0, std::memory_order_relaxed);
  m.tick_hist.clear();
  m.late_hist.clear();
  c->links[c->size].e = e;
  c->links[c->size].held.store(true, std::memory_order_relaxed);
  e->home = c;
  e->index = c->size++;
  e->record.store(&m, std::memory_order_release);
  ++c->live;
  ++c->ticking;
}

// Only while the cohort is not running. A cohort left with nothing to tick leaves the wheel; one
// left with no member at all is retired until every finalization has stopped reading it.
void processor_pool::impl::vacate(pool_entry* e) {
  using detail::cohort_state;
  detail::cohort* c = e->home;
  detail::member& m = c->members[e->index];
  if (m.k != detail::member::parked) --c->ticking;
  m.run = nullptr;
  --c->live;
  if (c->ticking == 0 && (c->state == cohort_state::in_wheel || c->state == cohort_state::late)) {
    if (c->state == cohort_state::in_wheel)
      wheel.unlink(c->due_ns, c);
    else
      std::erase(late, c);
    c->state = cohort_state::idle;
  }
  if (c->live == 0) {
    close(c);
    c->state = cohort_state::retired;
    retired.push_back(c);
  }
  begin_finalize(e);
}

void processor_pool::impl::recycle_retired() {
  std::erase_if(retired, [this](detail::cohort* c) {
    for (std::uint32_t i = 0; i < c->size; ++i)
      if (c->links[i].held.load(std::memory_order_acquire)) return false;
    free_cohorts[c->capacity == detail::cohort::large ? 1 : 0].push_back(c);
    return true;
  });
}

// A cohort back from its run: members whose removal came meanwhile are vacated, the rest waits
// in the wheel for the next due time (or, with nothing left to tick, outside it).
void processor_pool::impl::on_returned(detail::cohort* c) {
  using detail::cohort_state;
  c->state = cohort_state::idle;
  if (c->ticking != 0) schedule(c);
  if (c->removals_waiting == 0) return;
  c->removals_waiting = 0;
  for (std::uint32_t i = 0; i < c->size; ++i) {
    if (c->members[i].run != nullptr && c->links[i].e->remove_requested) vacate(c->links[i].e);
  }
}

// The dispatcher hands slots out ahead of their time; a cohort due in a slot already handed out
// (a rate above 500 Hz, or a late tick after an overrun) goes out on its own at the next pass.
// Under the manual clock the wheel takes it: its cursor slot runs at the next advance.
void processor_pool::impl::schedule(detail::cohort* c) {
  if (exec && detail::timing_wheel::ceil_slot(c->due_ns) * detail::slot_ns < wheel.cursor_ns()) {
    c->state = detail::cohort_state::late;
    late.push_back(c);
  } else {
    c->state = detail::cohort_state::in_wheel;
    wheel.insert(c->due_ns, c);
  }
}

void processor_pool::impl::begin_finalize(pool_entry* e) {
  if (!exec) {
    finalize(e);
    return;
  }
  in_flight.fetch_add(1, std::memory_order_relaxed);
  exec->submit([this, e](unsigned) {
    finalize(e);
    in_flight.fetch_sub(1, std::memory_order_release);
  });
}

void processor_pool::impl::finalize(pool_entry* e) noexcept {
  std::string failure;
  e->svc->deactivate(&failure);
  if (!failure.empty()) log(log_level::error, failure);
  unique_function<void()> done;
  {
    std::lock_guard lock(mu);
    registry_unlink(e);
    --registered;
    pool_access::owner(*e->svc).store(nullptr, std::memory_order_relaxed);
    pool_access::entry(*e->svc).store(nullptr, std::memory_order_release);
    done = std::move(e->on_removed);
  }
  // No reader can reach the record now (metrics() finds entries through the registry).
  if (e->home != nullptr) e->home->links[e->index].held.store(false, std::memory_order_release);
  if (done) {
    try {
      done();
    } catch (...) {
      log(log_level::error, fmt::format("service '{}': removal callback threw", e->svc->name()));
    }
  }
  // The pool may hold the last reference: the service's destructor runs outside the lock.
  std::shared_ptr<service> last = std::move(e->svc);
  std::lock_guard lock(mu);
  entries.release(e);
}

void processor_pool::impl::shutdown_entries() {
  // Every batch has returned; finalizations that the last returns began run to their end here,
  // so that their entries leave the registry before it is read (else they would be finalized twice).
  exec.reset();
  std::vector<pool_entry*> left;
  for (;;) {
    {
      std::lock_guard lock(mu);
      if (adding == 0) {  // no add() is still activating a service
        taken.clear();
        std::lock_guard cmd(cmd_mu);
        taken.swap(commands);
        for (pool_entry* e = registry; e != nullptr; e = e->reg_next) {
          if (e->svc) left.push_back(e);  // not a walk's bookmark
        }
        shut_down = true;
        break;
      }
    }
    std::this_thread::yield();
  }
  for (auto c : taken) {
    if (c.remove) c.e->remove_requested = true;
  }
  for (auto* e : left) finalize(e);
}

// ---- the public face ------------------------------------------------------------------------

processor_pool::processor_pool(pool_options options) : impl_(std::make_unique<impl>(std::move(options))) {}

processor_pool::~processor_pool() { (void)stop(); }

result<void, pool_errc> processor_pool::start() {
  auto& p = *impl_;
  std::lock_guard lock(p.mu);
  if (p.stop_requested) return fail(pool_errc::stopped, "start(): the pool was stopped; it does not restart");
  if (p.started) return fail(pool_errc::already_started, "start(): the pool is running already");
  if (p.opt.manual == nullptr) {
    if (p.opt.workers == 0 || p.opt.workers > detail::max_workers)
      return fail(pool_errc::invalid_options,
                  fmt::format("start(): workers must be 1..{}, got {}", detail::max_workers, p.opt.workers));
    if (auto r = check_realtime(p.opt.realtime_priority); !r) return r;
    int rt = p.opt.realtime_priority;
    p.exec = p.opt.executor == executor_kind::tbb ? detail::make_tbb_executor(p.opt.workers, rt)
                                                  : detail::make_thread_executor(p.opt.workers, rt);
    p.dispatcher = std::thread([&p] { p.dispatcher_main(); });
  }
  p.started = true;
  p.start_ns.store(p.now_ns(), std::memory_order_relaxed);
  p.last_progress_ns.store(p.now_ns(), std::memory_order_relaxed);
  return {};
}

result<void, pool_errc> processor_pool::stop() {
  auto& p = *impl_;
  {
    std::lock_guard lock(p.mu);
    p.stop_requested = true;
    std::lock_guard cmd(p.cmd_mu);
    p.stop_cmd = true;
    p.cv.notify_all();
  }
  if (detail::tls_ticking == &p) return {};  // completes when the current tick returns
  {
    std::lock_guard join(p.join_mu);
    if (p.dispatcher.joinable()) p.dispatcher.join();
  }
  std::lock_guard lock(p.advance_mu);
  bool done;
  {
    std::lock_guard l(p.mu);
    done = p.shut_down;
  }
  if (!done) p.shutdown_entries();
  return {};
}

result<void, pool_errc> processor_pool::add(std::shared_ptr<service> s, double hz,
                                            std::optional<nanoseconds> phase) {
  auto& p = *impl_;
  if (!s) return fail(pool_errc::not_found, "add(): null service");
  if (!(hz > 0.0 && hz <= 1000.0) || !std::isfinite(hz))
    return fail(pool_errc::invalid_rate,
                fmt::format("add('{}'): frame rate must be > 0 and <= 1000 Hz, got {}", s->name(), hz));
  if (phase && (phase->count() < 0 || static_cast<double>(phase->count()) >= 1e9 / hz))
    return fail(pool_errc::invalid_phase,
                fmt::format("add('{}'): phase must be in [0, {} ns) at {} Hz, got {} ns", s->name(),
                            std::llround(1e9 / hz), hz, phase->count()));
  pool_entry* e = nullptr;
  {
    std::lock_guard lock(p.mu);
    if (p.stop_requested) {
      return fail(pool_errc::stopped, fmt::format("add('{}'): the pool was stopped", s->name()));
    }
    e = p.entries.make();
    pool_entry* none = nullptr;
    if (!pool_access::entry(*s).compare_exchange_strong(none, e, std::memory_order_acq_rel)) {
      p.entries.release(e);
      return fail(pool_errc::already_added,
                  fmt::format("add('{}'): the service is in a pool already", s->name()));
    }
    pool_access::owner(*s).store(&p, std::memory_order_relaxed);
    e->svc = s;
    e->hz = hz;
    e->seq = p.next_seq++;
    p.registry_link(e, nullptr);
    ++p.registered;
    ++p.adding;
  }
  try {
    s->activate();
  } catch (...) {
    std::lock_guard lock(p.mu);
    p.registry_unlink(e);
    --p.registered;
    --p.adding;
    pool_access::owner(*s).store(nullptr, std::memory_order_relaxed);
    pool_access::entry(*s).store(nullptr, std::memory_order_release);
    p.entries.release(e);
    return fail(pool_errc::activation_failed,
                fmt::format("add('{}'): on_init or on_active threw", s->name()));
  }
  std::lock_guard lock(p.mu);
  std::int64_t now_slot = detail::timing_wheel::ceil_slot(p.now_ns()) * detail::slot_ns;
  if (phase) {  // base = the grid point one period before the first one at least a slot ahead
    double period = 1e9 / hz, from = static_cast<double>(p.origin_ns + phase->count());
    auto j = std::ceil((static_cast<double>(now_slot + detail::slot_ns) - from) / period);
    e->base_ns = p.origin_ns + phase->count() + std::llround((j - 1) * period);
  } else {
    e->base_ns = now_slot;
  }
  e->ready = true;
  --p.adding;
  p.push_command(e, false);
  return {};
}

result<void, pool_errc> processor_pool::remove(service& s, unique_function<void()> on_removed) {
  auto& p = *impl_;
  std::lock_guard lock(p.mu);
  // The owner is set and cleared under this pool's lock, so a match means the entry is ours.
  if (pool_access::owner(s).load(std::memory_order_relaxed) != &p)
    return fail(pool_errc::not_found, fmt::format("remove('{}'): the service is not in this pool", s.name()));
  pool_entry* e = pool_access::entry(s).load(std::memory_order_acquire);
  if (p.shut_down)
    return fail(pool_errc::stopped, fmt::format("remove('{}'): the pool was stopped", s.name()));
  if (!e->ready)
    return fail(pool_errc::not_found, fmt::format("remove('{}'): its add() is still under way", s.name()));
  if (e->removal_queued)
    return fail(pool_errc::not_found,
                fmt::format("remove('{}'): its removal is under way already", s.name()));
  e->removal_queued = true;
  e->on_removed = std::move(on_removed);
  p.push_command(e, true);
  return {};
}

void processor_pool::advance(std::chrono::nanoseconds dt) {
  auto& p = *impl_;
  SCENERT_ASSERT(p.opt.manual != nullptr, "advance() needs a pool built on a manual clock");
  std::lock_guard lock(p.advance_mu);
  p.advance_manual(p.now_ns() + dt.count());
}

time_point processor_pool::now() const noexcept { return impl_->clk->now(); }

const pool_options& processor_pool::options() const noexcept { return impl_->opt; }

// ---- metrics --------------------------------------------------------------------------------

namespace {

service_metrics row_of(const pool_entry& e) {
  service_metrics r;
  r.name = e.svc->name();
  r.hz = e.hz;
  r.overruns = e.overruns.load(std::memory_order_relaxed);
  r.exceptions = e.svc->failures();
  r.stalls = e.stalls.load(std::memory_order_relaxed);
  r.dropped_messages = e.svc->dropped_messages();
  r.mailbox_depth = e.svc->mailbox_depth();
  r.quarantined = e.svc->quarantined();
  const detail::member* m = e.record.load(std::memory_order_acquire);
  if (m == nullptr) return r;  // its add is not applied yet
  r.ticks = m->ticks.load(std::memory_order_relaxed);
  r.tick_p50 = nanoseconds(m->tick_hist.quantile(0.5));
  r.tick_p99 = nanoseconds(m->tick_hist.quantile(0.99));
  r.tick_max = nanoseconds(m->tick_hist.max());
  r.lateness_p50 = nanoseconds(m->late_hist.quantile(0.5));
  r.lateness_p99 = nanoseconds(m->late_hist.quantile(0.99));
  r.lateness_max = nanoseconds(m->late_hist.max());
  return r;
}

}  // namespace

pool_metrics processor_pool::metrics(bool per_service) const {
  auto& p = *impl_;
  pool_metrics m;
  m.workers = p.opt.manual != nullptr ? 0 : p.opt.workers;
  std::int64_t now = p.now_ns();
  {
    // The walk holds the lock a slice at a time, a bookmark (an entry without a service) keeping
    // its place in between: add() and a finalizing worker wait for a slice, not for a walk over
    // a million services (25 ms).
    constexpr std::size_t slice = 4096;
    pool_entry mark;
    std::unique_lock lock(p.mu);
    m.services = p.registered;
    pool_entry* e = p.registry;
    for (;;) {
      for (std::size_t n = 0; e != nullptr && n < slice; e = e->reg_next) {
        if (!e->svc) continue;  // another walk's bookmark
        ++n;
        m.mailbox_depth += e->svc->mailbox_depth();
        if (e->svc->quarantined()) ++m.quarantined;
        if (per_service) m.per_service.push_back(row_of(*e));
      }
      if (e == nullptr) break;
      p.registry_link(&mark, e);
      lock.unlock();
      lock.lock();
      e = mark.reg_next;
      p.registry_unlink(&mark);
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
