// bench_host_dungeons: N dungeon lines (capacity 5, so 20 per scene group, a few monsters each) at
// 10 Hz on W workers; first idle for S seconds, then with players entering and leaving at a rate,
// then line allocations pushed through the world as fast as it answers. Prints one JSON object.
//   bench_host_dungeons --lines N --workers W --seconds S [--rate R] [--monsters M]
//                       [--structure group|single] [--producers P] [--resident K] [--phases]
// --phases adds a module to every line that records where in the 100 ms period its ticks fall
// (1 ms slots): lines bunched into few slots tick in bursts, which shows up as lateness.
// Progress goes to stderr.
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/scene.hpp>
#include <scenert/scene/world.hpp>

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_cli.hpp"
#include "process_cpu.hpp"

namespace {

using namespace std::chrono_literals;
using namespace scenert;

struct args {
  std::uint32_t lines = 10'000;
  unsigned workers = 2;
  double seconds = 5;
  double rate = 20'000;  // player enters per second in the churn phase (each leaves 1 s later)
  std::uint32_t monsters = 3;
  unsigned producers = 1;
  std::uint64_t resident = 0;  // allocation phase: players each producer keeps in the world
  bool phases = false;
  double world_hz = 100;  // the world's tick rate: how often it applies its inbox
  scene_structure structure = scene_structure::group;
};

args parse(int argc, char** argv) {
  args a;
  CLI::App app{"bench_host_dungeons: N dungeon lines in one world, players churning through them"};
  app.add_option("--lines", a.lines, "dungeon lines")->check(CLI::Range(1, 10'000'000));
  app.add_option("--workers", a.workers, "the pool's workers")->check(CLI::Range(1, 1024));
  app.add_option("--seconds", a.seconds, "how long each phase runs")->check(CLI::Range(0.01, 600.0));
  app.add_option("--rate", a.rate, "player enters per second in the churn phase")
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--monsters", a.monsters, "monsters per line");
  app.add_option("--producers", a.producers, "threads submitting requests")->check(CLI::Range(1, 64));
  app.add_option("--resident", a.resident, "allocation phase: players each producer keeps in the world");
  app.add_option("--world-hz", a.world_hz, "the world's tick rate")->check(CLI::Range(1.0, 10'000.0));
  app.add_flag("--phases", a.phases, "town lines with phases instead of dungeons");
  std::string structure = "group";
  app.add_option("--structure", structure, "group or single")->check(CLI::IsMember({"group", "single"}));
  scenert::bench::parse_or_exit(app, argc, argv);
  a.structure = structure == "group" ? scene_structure::group : scene_structure::single;
  return a;
}

std::size_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// Percentiles of the lateness recorded between two snapshots of the pool's histogram.
struct window {
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  std::uint64_t ticks = 0;
};
window between(const histogram_snapshot& a, const histogram_snapshot& b) {
  window w;
  std::vector<std::uint64_t> d(b.counts.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = b.counts[i] - (i < a.counts.size() ? a.counts[i] : 0);
  for (auto c : d) w.ticks += c;
  auto pct = [&](double q) {
    std::uint64_t want = static_cast<std::uint64_t>(q * static_cast<double>(w.ticks)), seen = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      seen += d[i];
      if (seen > want)
        return i < b.upper_bounds.size()
                   ? std::chrono::duration<double, std::milli>(b.upper_bounds[i]).count()
                   : std::chrono::duration<double, std::milli>(b.max).count();
    }
    return 0.0;
  };
  w.p50_ms = pct(0.50), w.p99_ms = pct(0.99);
  w.max_ms = std::chrono::duration<double, std::milli>(b.max).count();
  return w;
}

// One measured phase: its lateness and the process's CPU per wall second.
struct measured {
  window lateness;
  double cpu_per_s = 0;
};

std::string json(const measured& m) {
  const window& w = m.lateness;
  return fmt::format(
      R"({{"ticks": {}, "lateness_ms": {{"p50": {:.3f}, "p99": {:.3f}, "max_so_far": {:.3f}}}, "cpu_per_wall_s": {:.3f}}})",
      w.ticks, w.p50_ms, w.p99_ms, w.max_ms, m.cpu_per_s);
}

scene_table dungeon_table(const args& a) {
  scene_table t;
  t.runtime.group_budget = 100;
  t.runtime.idle_grace = 3600s;  // lines stay open: the bench measures hosting, not closing
  t.maps.push_back(map_def{1, "dungeon", 48, 48, 8, 8, 1, 1, {cell_rect{20, 20, 4, 4}}});
  scene_def d;
  d.id = 1, d.name = "dungeon", d.kind = scene_kind::dungeon, d.structure = a.structure;
  d.capacity = 5, d.hard_capacity = 5, d.min_lines = a.lines, d.max_lines = a.lines, d.frame_rate = 10;
  d.map = 1, d.policy = allocation_policy::least_loaded, d.monsters = a.monsters;
  t.scenes.push_back(d);
  return t;
}

// Where in the 10 Hz period each line ticks: its fourth tick's start, in 1 ms slots.
constexpr std::size_t phase_slots = 100;
using phase_histogram = std::array<std::atomic<std::uint32_t>, phase_slots>;

class phase_probe final : public scene_module {
 public:
  explicit phase_probe(phase_histogram& h) : h_(h) {}
  void on_tick(scene&, const tick_context& ctx) override {
    if (ctx.index != 3) return;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.now.time_since_epoch()).count();
    h_[static_cast<std::size_t>(ms) % phase_slots].fetch_add(1, std::memory_order_relaxed);
  }

 private:
  phase_histogram& h_;
};

std::string phase_json(const phase_histogram& h) {
  std::uint32_t total = 0, most = 0, empty = 0;
  std::string slots;
  for (std::size_t i = 0; i < phase_slots; ++i) {
    auto n = h[i].load();
    total += n, most = std::max(most, n), empty += n == 0;
    slots += fmt::format("{}{}", i ? ", " : "", n);
  }
  double mean = static_cast<double>(total) / phase_slots;
  return fmt::format(
      R"({{"lines": {}, "mean_per_ms": {:.0f}, "max_per_ms": {}, "max_over_mean": {:.2f}, "empty_ms": {}, "per_ms": [{}]}})",
      total, mean, most, mean > 0 ? most / mean : 0.0, empty, slots);
}

// Replies run on the world's thread only, one at a time: a counter they alone write needs no
// read-modify-write (which would make the bench's own counting a large part of what it measures).
void bump(std::atomic<std::uint64_t>& n) {
  n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

struct phase_clock {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu = bench::process_cpu_seconds();
  double cpu_per_s() const {
    return (bench::process_cpu_seconds() - cpu) /
           std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  }
};

// Back-to-back lateness windows: each phase's starts where the previous phase's ended.
class lateness_windows {
 public:
  explicit lateness_windows(processor_pool& pool) : pool_(pool) {}
  void restart() { last_ = pool_.metrics().lateness; }
  window next() {
    auto now = pool_.metrics().lateness;
    const window w = between(last_, now);
    last_ = std::move(now);
    return w;
  }

 private:
  processor_pool& pool_;
  histogram_snapshot last_;
};

world_options world_opts(const args& a, phase_histogram& phases) {
  world_options wo;
  wo.hz = a.world_hz;
  if (a.phases) wo.on_new_line = [&phases](scene& s) { s.add_module(std::make_unique<phase_probe>(phases)); };
  return wo;
}

// What opening the lines cost, before any phase.
struct opening {
  std::size_t rss0 = 0, rss1 = 0;
  double seconds = 0;
  std::shared_ptr<const world_snapshot> snap;
};

opening open_lines(const args& a, world& w) {
  opening o;
  o.rss0 = rss_bytes();
  std::fprintf(stderr, "opening %u lines...\n", a.lines);
  auto t_open = std::chrono::steady_clock::now();
  w.start();  // opens min_lines = N lines
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_open).count();
  std::this_thread::sleep_for(1500ms);  // every group ticked: every member activated
  o.rss1 = rss_bytes();
  o.snap = w.snapshot();
  return o;
}

// Phase 1: idle lines.
measured run_idle(const args& a, lateness_windows& lateness) {
  std::fprintf(stderr, "idle for %.1f s...\n", a.seconds);
  lateness.restart();
  phase_clock clock;
  std::this_thread::sleep_for(std::chrono::duration<double>(a.seconds));
  const double cpu = clock.cpu_per_s();
  return {lateness.next(), cpu};
}

// Replies keep landing after the phase that sent their requests, until the world shuts down:
// their counters outlive the phase, and main reads them for the report.
// Thread-safety: written by replies on the world's thread, stop by main; read by main and producers.
struct reply_counts {
  std::atomic<std::uint64_t> ok{0}, errors{0};
  std::atomic<bool> stop{false};  // the allocation phase's producers: time is up
};

// Players enter at a.rate for a.seconds and each leaves 1 s after it entered; at the end, the
// players still in the world leave at once.
void send_churn(const args& a, world& w, reply_counts& entered) {
  using time_point = std::chrono::steady_clock::time_point;
  auto start = std::chrono::steady_clock::now();
  auto end = start + std::chrono::duration<double>(a.seconds);
  std::uint64_t sent = 0;
  player_id next = 1;
  std::vector<std::pair<time_point, player_id>> leaving;
  std::size_t leave_at = 0;
  auto leave_until = [&](time_point t) {
    for (; leave_at < leaving.size() && leaving[leave_at].first <= t; ++leave_at)
      w.submit(world_request::leave(leaving[leave_at].second), {});
  };
  for (auto now = start; now < end; now = std::chrono::steady_clock::now()) {
    auto due = static_cast<std::uint64_t>(std::chrono::duration<double>(now - start).count() * a.rate);
    for (; sent < due; ++sent, ++next) {
      w.submit(world_request::enter(next, 1),
               [&entered](world_result r) { (r ? entered.ok : entered.errors).fetch_add(1); });
      leaving.push_back({now + 1s, next});
    }
    leave_until(now);
    std::this_thread::sleep_for(1ms);
  }
  leave_until(time_point::max());
}

// Phase 2: players enter at a constant rate and leave a second later.
measured run_churn(const args& a, world& w, lateness_windows& lateness, reply_counts& entered) {
  std::fprintf(stderr, "churn at %.0f enters/s for %.1f s...\n", a.rate, a.seconds);
  phase_clock clock;
  send_churn(a, w, entered);
  const double cpu = clock.cpu_per_s();
  return {lateness.next(), cpu};
}

// One producer of phase 3, until `allocated.stop`; it returns once the world answered its leaves.
void produce(const args& a, world& w, unsigned pi, reply_counts& allocated) {
  // Each player leaves `resident` allocations after it entered (0: at once, so every enter
  // finds the line the previous player left; more: players are spread over many lines).
  const std::uint64_t window_size = 50'000, resident = a.resident, span = 200'000 + resident;
  std::atomic<std::uint64_t> answered{0};
  std::uint64_t sent = 0, leaves = 0;
  player_id base = 1'000'000'000ull * (pi + 1);
  auto leave = [&](std::uint64_t i) {
    w.submit(world_request::leave(base + i % span), [&](world_result) { bump(answered); });
    ++leaves;
  };
  while (!allocated.stop.load(std::memory_order_relaxed)) {
    if (leaves - answered.load(std::memory_order_acquire) >= window_size) {
      std::this_thread::sleep_for(100us);
      continue;
    }
    for (int k = 0; k < 1000; ++k, ++sent) {
      w.submit(world_request::enter(base + sent % span, 1),
               [&allocated](world_result r) { bump(r ? allocated.ok : allocated.errors); });
      if (sent >= resident) leave(sent - resident);
    }
  }
  for (std::uint64_t i = sent - std::min(sent, resident); i < sent; ++i) leave(i);
  while (answered.load() < leaves) std::this_thread::sleep_for(1ms);
}

struct allocation_phase {
  measured m;
  std::uint64_t in_window = 0;  // allocations answered by the end of the timed window
  double elapsed_s = 0;
  std::shared_ptr<const world_snapshot> before;
};

// Phase 3: allocations through the world as fast as it answers (enter + leave per allocation),
// with a bounded number in flight per producer.
allocation_phase run_allocation(const args& a, world& w, lateness_windows& lateness,
                                reply_counts& allocated) {
  std::fprintf(stderr, "allocating through the world for %.1f s...\n", std::min(a.seconds, 3.0));
  const double alloc_s = std::min(a.seconds, 3.0);
  std::vector<std::thread> producers;
  allocation_phase r;
  r.before = w.snapshot();
  auto t_alloc = std::chrono::steady_clock::now();
  phase_clock clock;
  for (unsigned pi = 0; pi < a.producers; ++pi)
    producers.emplace_back([&, pi] { produce(a, w, pi, allocated); });
  std::this_thread::sleep_for(std::chrono::duration<double>(alloc_s));
  r.in_window = allocated.ok.load();
  const double cpu = clock.cpu_per_s();
  r.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_alloc).count();
  allocated.stop = true;
  for (auto& p : producers) p.join();
  r.m = {lateness.next(), cpu};
  return r;
}

unsigned long long llu(std::uint64_t n) { return static_cast<unsigned long long>(n); }

void print_opening(const args& a, const opening& o, const measured& idle) {
  const auto& sc = o.snap->scenes.at(0);
  double per_line =
      static_cast<double>(o.rss1 - o.rss0) / static_cast<double>(std::max<std::uint32_t>(1, sc.open_lines));
  std::printf(
      "{\"bench\": \"host_dungeons\", \"lines\": %u, \"workers\": %u, \"seconds\": %.1f, \"structure\": "
      "\"%s\", \"monsters_per_line\": %u,\n \"open_lines\": %u, \"group_services\": %zu, \"open_seconds\": "
      "%.3f, \"rss_per_open_line_bytes\": %.0f, \"rss_delta_bytes\": %zu,\n \"idle\": %s,\n",
      a.lines, a.workers, a.seconds, a.structure == scene_structure::group ? "group" : "single", a.monsters,
      sc.open_lines, o.snap->group_services, o.seconds, per_line, o.rss1 - o.rss0, json(idle).c_str());
}

void print_churn(const args& a, const measured& churn, const reply_counts& entered) {
  std::printf(" \"churn\": {\"rate\": %.0f, \"entered\": %llu, \"errors\": %llu, \"window\": %s},\n", a.rate,
              llu(entered.ok.load()), llu(entered.errors.load()), json(churn).c_str());
}

// `last` is the world's snapshot after the allocation phase, for the world's CPU during it.
void print_allocation(const args& a, const allocation_phase& p, const reply_counts& allocated,
                      const world_snapshot& last) {
  const double world_cpu_s = static_cast<double>(last.busy_ns - p.before->busy_ns) / 1e9;
  const double requests_in_alloc = static_cast<double>(last.requests - p.before->requests);
  std::printf(
      " \"allocation\": {\"allocations_per_s\": %.0f, \"allocations\": %llu, \"errors\": %llu, "
      "\"producers\": %u, \"resident\": %llu, \"world_cpu_s\": %.3f, \"allocations_per_world_cpu_s\": %.0f, "
      "\"process_cpu_ns_per_allocation\": %.0f, \"window\": %s},\n",
      static_cast<double>(p.in_window) / p.elapsed_s, llu(allocated.ok.load()), llu(allocated.errors.load()),
      a.producers, llu(a.resident), world_cpu_s, requests_in_alloc / 2 / std::max(world_cpu_s, 1e-9),
      p.m.cpu_per_s * p.elapsed_s * 1e9 / static_cast<double>(std::max<std::uint64_t>(1, p.in_window)),
      json(p.m).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  args a = parse(argc, argv);
  scene_table table = dungeon_table(a);
  pool_options po;
  po.workers = a.workers;
  processor_pool pool(po);
  (void)pool.start();
  phase_histogram phases{};
  auto w = world::create(table, pool, world_opts(a, phases));
  reply_counts entered, allocated;
  const opening open = open_lines(a, *w);
  lateness_windows lateness(pool);
  const measured idle = run_idle(a, lateness);
  const measured churn = run_churn(a, *w, lateness, entered);
  std::this_thread::sleep_for(300ms);
  const allocation_phase alloc = run_allocation(a, *w, lateness, allocated);
  std::this_thread::sleep_for(200ms);  // a fresh snapshot
  auto last = w->snapshot();
  std::fprintf(stderr, "shutting down...\n");
  w->shutdown().wait();
  (void)pool.stop();

  print_opening(a, open, idle);
  print_churn(a, churn, entered);
  print_allocation(a, alloc, allocated, *last);
  std::printf(" \"requests_answered\": %llu%s}\n", llu(last->requests),
              a.phases ? (",\n \"tick_phase\": " + phase_json(phases)).c_str() : "");
  return 0;
}
