// bench_pool: N no-op services at R Hz on W workers for S seconds; prints one JSON object.
//   bench_pool --services N --hz R --workers W --seconds S [--executor tbb|threads]
//              [--check-count] [--overrun] [--realtime PRIORITY] [--wake-probe]
// --check-count: every service must tick seconds*hz +- 1 times inside the measured window.
// --overrun: one service whose third tick runs 3.5 periods; proves one late tick, no burst.
// --realtime: the pool's threads on SCHED_FIFO at PRIORITY (pool_options::realtime_priority).
// --wake-probe: during the measured window a plain thread (not realtime) sleeps to every 1 ms
//   boundary as the dispatcher does; platform_wake_* report how late it woke, the machine's share
//   of the pool's lateness (zeros without the flag). Its own CPU is left out of cpu_ns_per_tick.
// Progress goes to stderr.
#include <scenert/runtime/processor_pool.hpp>

#include "bench_cli.hpp"
#include "wake_probe.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using scenert::nanoseconds;

struct args {
  std::size_t services = 1000;
  double hz = 10;
  unsigned workers = 2;
  double seconds = 2;
  scenert::executor_kind executor = scenert::default_executor();
  bool check_count = false, overrun = false, wake_probe = false;
  int realtime = 0;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "bench_pool: %s\n", why.c_str());
  std::exit(2);
}

args parse(int argc, char** argv) {
  args a;
  CLI::App app{"bench_pool: N idle services ticked at R Hz by W workers for S seconds; one JSON object"};
  app.add_option("--services", a.services, "services")->check(CLI::Range(1, 10'000'000));
  app.add_option("--hz", a.hz, "each service's frame rate")->check(CLI::Range(0.001, 10'000.0));
  app.add_option("--workers", a.workers, "the pool's workers")->check(CLI::Range(1, 1024));
  app.add_option("--seconds", a.seconds, "how long to measure")->check(CLI::Range(0.01, 600.0));
  std::string executor = a.executor == scenert::executor_kind::tbb ? "tbb" : "threads";
  app.add_option("--executor", executor, "tbb or threads")->check(CLI::IsMember({"tbb", "threads"}));
  app.add_flag("--check-count", a.check_count, "count every tick in the window (each service's own)");
  app.add_flag("--overrun", a.overrun, "every tick overruns its period");
  app.add_option("--realtime", a.realtime, "SCHED_FIFO priority for the workers (0: none)");
  app.add_flag("--wake-probe", a.wake_probe, "measure how late a sleeping worker wakes");
  scenert::bench::parse_or_exit(app, argc, argv);
  a.executor = executor == "tbb" ? scenert::executor_kind::tbb : scenert::executor_kind::threads;
  return a;
}

std::int64_t cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t ns(scenert::time_point t) { return t.time_since_epoch().count(); }

// Counts its ticks that begin inside the measured window.
std::atomic<std::int64_t> window_begin{INT64_MAX}, window_end{INT64_MAX};

class noop final : public scenert::service {
 public:
  noop() : service("noop") {}
  std::uint32_t in_window = 0;

 private:
  void on_tick(const scenert::tick_context& c) override {
    auto t = ns(c.now);
    if (t >= window_begin.load(std::memory_order_relaxed) && t < window_end.load(std::memory_order_relaxed))
      ++in_window;
  }
};

// Quantile of the difference of two cumulative histograms.
std::int64_t quantile(const scenert::histogram_snapshot& a, const scenert::histogram_snapshot& b, double q) {
  std::uint64_t total = b.count - a.count, seen = 0;
  if (total == 0) return 0;
  auto rank = static_cast<std::uint64_t>(q * static_cast<double>(total));
  for (std::size_t i = 0; i < b.counts.size(); ++i) {
    seen += b.counts[i] - (a.counts.empty() ? 0 : a.counts[i]);
    if (seen > rank)
      return i < b.upper_bounds.size() ? std::min(b.upper_bounds[i], b.max).count() : b.max.count();
  }
  return b.max.count();
}

// The largest value recorded between two snapshots: the upper bound of the highest bucket that
// grew (within a quarter octave of the true value, never below it), capped by the overall maximum.
std::int64_t window_max(const scenert::histogram_snapshot& a, const scenert::histogram_snapshot& b) {
  for (std::size_t i = b.counts.size(); i-- > 0;) {
    if (b.counts[i] == (a.counts.empty() ? 0 : a.counts[i])) continue;
    return i < b.upper_bounds.size() ? std::min(b.upper_bounds[i], b.max).count() : b.max.count();
  }
  return 0;
}

// Ticks between two snapshots that began late by at least the first bucket edge at or above
// `bound` (for 2 ms: 2^21 ns, 2.1 ms).
std::uint64_t count_over(const scenert::histogram_snapshot& a, const scenert::histogram_snapshot& b,
                         std::chrono::nanoseconds bound) {
  std::uint64_t n = 0;
  for (std::size_t i = 1; i < b.counts.size(); ++i) {
    if (b.upper_bounds[i - 1] >= bound) n += b.counts[i] - (a.counts.empty() ? 0 : a.counts[i]);
  }
  return n;
}

// The report's platform_wake_* fields; zeros when the probe did not run.
std::string wake_fields(bool ran, const scenert::bench::wake_summary& w) {
  return fmt::format(
      "\"wake_probe\": {}, \"platform_wake_p50_us\": {:.1f}, \"platform_wake_p99_us\": {:.1f}, "
      "\"platform_wake_max_us\": {:.1f}, \"platform_wakes_over_2ms\": {}, \"platform_wake_samples\": {}",
      ran, static_cast<double>(w.p50_ns) / 1e3, static_cast<double>(w.p99_ns) / 1e3,
      static_cast<double>(w.max_ns) / 1e3, w.over_2ms, w.samples);
}

// What the pool and the overrun check share; main adds the realtime priority.
scenert::pool_options pool_opts(const args& a) {
  scenert::pool_options o;
  o.workers = a.workers;
  o.executor = a.executor;
  return o;
}

using period_type = std::chrono::duration<double>;

// Spread the services over one period, as they would join over time, so that every 1 ms
// slot holds the same share.
std::vector<std::shared_ptr<noop>> add_services(const args& a, scenert::processor_pool& pool,
                                                period_type period) {
  std::vector<std::shared_ptr<noop>> all(a.services);
  auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < a.services; ++i) {
    all[i] = std::make_shared<noop>();
    if (auto r = pool.add(all[i], a.hz); !r) usage(r.error().message);
    auto due = t0 + std::chrono::duration_cast<nanoseconds>(
                        period * (static_cast<double>(i) / static_cast<double>(a.services)));
    if (i % 256 == 0) std::this_thread::sleep_until(due);
  }
  std::fprintf(stderr, "bench_pool: %zu services added in %.0f ms; warming up one period\n", a.services,
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return all;
}

// The pool's metrics, the process's CPU and the wall clock at both ends of the measured window.
struct window_readings {
  scenert::pool_metrics before, after;
  std::int64_t cpu0 = 0, cpu1 = 0;
  std::chrono::steady_clock::time_point wall0, wall1;
};

// The measured window, a.seconds long; the services count their ticks in a window as long that
// opens half a period after it.
window_readings measure(const args& a, scenert::processor_pool& pool, scenert::bench::wake_probe& probe,
                        period_type period) {
  window_readings r;
  r.before = pool.metrics();
  if (a.wake_probe) probe.start();
  r.wall0 = std::chrono::steady_clock::now();
  window_begin.store(ns(r.wall0) + std::chrono::duration_cast<nanoseconds>(period).count() / 2);
  window_end.store(window_begin.load() + static_cast<std::int64_t>(a.seconds * 1e9));
  // The probe's own CPU is the machine's business, not the pool's: leave it out.
  r.cpu0 = cpu_ns() - probe.cpu_ns();
  std::this_thread::sleep_until(
      r.wall0 + std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(a.seconds)));
  r.cpu1 = cpu_ns() - probe.cpu_ns();
  r.wall1 = std::chrono::steady_clock::now();
  r.after = pool.metrics();
  probe.stop();
  return r;
}

// How evenly the services ticked inside the window: `off` of them missed expected +- 1.
struct tick_spread {
  std::int64_t expected = 0, lo = INT64_MAX, hi = 0;
  std::size_t off = 0;
};

tick_spread spread_of(const args& a, const std::vector<std::shared_ptr<noop>>& all) {
  tick_spread t;
  t.expected = static_cast<std::int64_t>(std::llround(a.seconds * a.hz));
  for (auto& s : all) {
    std::int64_t c = s->in_window;
    t.lo = std::min(t.lo, c);
    t.hi = std::max(t.hi, c);
    if (c < t.expected - 1 || c > t.expected + 1) ++t.off;
  }
  return t;
}

void print_report(const args& a, const window_readings& r, const tick_spread& t,
                  const scenert::bench::wake_summary& wake) {
  const auto& before = r.before.lateness;
  const auto& after = r.after.lateness;
  std::uint64_t ticks = r.after.ticks - r.before.ticks;
  double wall = std::chrono::duration<double>(r.wall1 - r.wall0).count();
  fmt::print(
      "{{\"services\": {}, \"hz\": {}, \"workers\": {}, \"seconds\": {}, \"executor\": \"{}\", "
      "\"realtime_priority\": {}, "
      "\"ticks\": {}, \"ticks_per_second\": {:.0f}, \"cpu_ns_per_tick\": {:.1f}, "
      "\"lateness_p50_us\": {:.1f}, \"lateness_p99_us\": {:.1f}, \"lateness_max_us\": {:.1f}, "
      "\"lateness_max_since_start_us\": {:.1f}, \"ticks_late_over_2ms\": {}, "
      "\"overruns\": {}, \"utilisation\": {:.4f}, \"ticks_in_window_min\": {}, \"ticks_in_window_max\": {}, "
      "\"expected_per_service\": {}, \"services_off_count\": {}, {}}}\n",
      a.services, a.hz, a.workers, a.seconds, a.executor == scenert::executor_kind::tbb ? "tbb" : "threads",
      a.realtime, ticks, static_cast<double>(ticks) / wall,
      static_cast<double>(r.cpu1 - r.cpu0) / static_cast<double>(std::max<std::uint64_t>(ticks, 1)),
      static_cast<double>(quantile(before, after, 0.5)) / 1e3,
      static_cast<double>(quantile(before, after, 0.99)) / 1e3,
      static_cast<double>(window_max(before, after)) / 1e3, static_cast<double>(after.max.count()) / 1e3,
      count_over(before, after, std::chrono::milliseconds(2)), r.after.overruns - r.before.overruns,
      r.after.utilisation, t.lo, t.hi, t.expected, t.off, wake_fields(a.wake_probe, wake));
}

int run_overrun(const args& a);

}  // namespace

int main(int argc, char** argv) {
  args a = parse(argc, argv);
  if (a.overrun) return run_overrun(a);
  scenert::pool_options o = pool_opts(a);
  o.realtime_priority = a.realtime;
  scenert::processor_pool pool(o);
  if (auto r = pool.start(); !r) usage(r.error().message);
  const period_type period(1.0 / a.hz);
  const auto all = add_services(a, pool, period);
  std::this_thread::sleep_for(period * 1.5);
  scenert::bench::wake_probe probe(a.wake_probe ? a.seconds : 0);
  const window_readings readings = measure(a, pool, probe, period);
  std::this_thread::sleep_for(period * 1.5);  // the window's last ticks finish
  (void)pool.stop();

  const tick_spread spread = spread_of(a, all);
  print_report(a, readings, spread, probe.summary());
  if (a.check_count && spread.off != 0) {
    std::fprintf(stderr, "bench_pool: %zu services ticked outside %lld +- 1 times\n", spread.off,
                 static_cast<long long>(spread.expected));
    return 1;
  }
  return 0;
}

namespace {

class sleeper final : public scenert::service {
 public:
  explicit sleeper(nanoseconds stall) : service("overrunner"), stall_(stall) {}
  std::vector<std::int64_t> starts;

 private:
  void on_tick(const scenert::tick_context& c) override {
    starts.push_back(ns(c.now));
    if (c.index == 2) std::this_thread::sleep_for(stall_);
  }
  nanoseconds stall_;
};

// One service whose third tick runs 3.5 periods: the fourth tick starts late, once, right after
// it; the rest keep the grid, with no burst of catch-up ticks.
int run_overrun(const args& a) {
  scenert::processor_pool pool(pool_opts(a));
  auto period = static_cast<std::int64_t>(1e9 / a.hz);
  auto s = std::make_shared<sleeper>(nanoseconds(period * 7 / 2));
  if (auto r = pool.add(s, a.hz); !r) usage(r.error().message);
  (void)pool.start();
  std::this_thread::sleep_for(nanoseconds(period * 10));
  auto m = pool.metrics();
  (void)pool.stop();
  std::int64_t late = 0, min_gap_after = INT64_MAX;
  for (std::size_t i = 1; i < s->starts.size(); ++i) {
    auto gap = s->starts[i] - s->starts[i - 1];
    if (gap > period * 3 / 2) ++late;
    if (i >= 4) min_gap_after = std::min(min_gap_after, gap);
  }
  // A burst would show as gaps far below the period after the late tick.
  bool burst = min_gap_after < period / 4;
  fmt::print(
      "{{\"mode\": \"overrun\", \"hz\": {}, \"ticks\": {}, \"late_ticks\": {}, \"overruns\": {}, "
      "\"min_gap_after_late_ms\": {:.2f}, \"burst\": {}}}\n",
      a.hz, s->starts.size(), late, m.overruns, static_cast<double>(min_gap_after) / 1e6, burst);
  return late == 1 && m.overruns == 1 && !burst ? 0 : 1;
}

}  // namespace
