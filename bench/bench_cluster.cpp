// bench_cluster: line allocations per second (a player placed on a dungeon line, lines opening as
// needed) through one process's world, then through a cluster on NATS: one `nats-server -js` child
// on a free loopback port, N scene nodes in this process (each its own link, lease, endpoint, and
// world whose lines open by compare-and-set in the shared `lines` bucket) and one remote_world as
// the gateway. Same load on both; prints one JSON object with the ratio between them.
//   bench_cluster [--seconds S] [--nodes N] [--window W] [--players P] [--workers K] [--travel J]
// The load comes in waves of P players: a wave enters one of four dungeons (capacity 5, so it fills
// and opens about P/5 lines), and leaves once the next wave is in. An emptied line closes at once
// (idle_grace 0) and the dungeon is not entered again for three waves, so each wave opens its lines
// anew: about one line open per five allocations, in both runs. At most W requests are in flight:
// a closed loop, so one process (its world applies its inbox 100 times a second) answers about
// W/2 enters per tick whatever its CPU; the CPU per allocation is the cost to compare.
// Then J team joins, one at a time: a follower joins its leader, each entered just before and dealt
// to a node like any new player; in the cluster a join to a leader on another node is a journey (the
// player handed over between nodes), timed apart from the joins on one node.
// CPU is reported per allocation (getrusage, plus the nats-server child's from /proc) because
// wall-clock rates on a small shared machine are noisy. Progress goes to stderr.
#include <scenert/cluster/cluster_directory.hpp>
#include <scenert/cluster/line_store.hpp>
#include <scenert/cluster/nats_link.hpp>
#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/cluster/node_lease.hpp>
#include <scenert/cluster/remote_world.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/world.hpp>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_cli.hpp"
#include "nats_server.hpp"      // tests/cluster: the nats-server child, started and stopped by its pid
#include "node_in_process.hpp"  // tests/cluster: a scene node in this process
#include "process_cpu.hpp"

namespace {

using namespace std::chrono_literals;
using namespace scenert;
using clock_type = std::chrono::steady_clock;

constexpr scene_id dungeons = 4;  // waves rotate over them, so an emptied dungeon has time to close
constexpr std::uint32_t capacity = 5;

struct args {
  double seconds = 5;
  unsigned nodes = 3;
  unsigned window = 256;        // requests in flight at most
  std::uint32_t players = 500;  // per wave
  unsigned workers = 2;         // per world's pool (each node models a process of its own)
  unsigned travel = 200;        // team joins timed one at a time after the load
};

args parse(int argc, char** argv) {
  args a;
  CLI::App app{"bench_cluster: waves of players through a gateway to N scene nodes on a nats-server"};
  app.add_option("--seconds", a.seconds, "how long the waves run")->check(CLI::Range(0.01, 600.0));
  app.add_option("--nodes", a.nodes, "scene nodes")->check(CLI::Range(1, 16));
  app.add_option("--window", a.window, "requests in flight at most")->check(CLI::Range(1, 1 << 20));
  app.add_option("--players", a.players, "players per wave")->check(CLI::Range(1, 1'000'000));
  app.add_option("--workers", a.workers, "each node's pool workers")->check(CLI::Range(1, 1024));
  app.add_option("--travel", a.travel, "team joins timed one at a time after the load");
  scenert::bench::parse_or_exit(app, argc, argv);
  return a;
}

// CPU seconds of the main thread's live children (the nats-server): getrusage counts a child only
// once it has been reaped, so this reads /proc instead. 0 when /proc does not tell.
double children_cpu_seconds() {
  std::ifstream kids(fmt::format("/proc/self/task/{}/children", ::getpid()));
  double total = 0;
  for (long pid = 0; kids >> pid;) {
    std::ifstream stat(fmt::format("/proc/{}/stat", pid));
    std::string line((std::istreambuf_iterator<char>(stat)), {});
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(line.substr(close + 2));  // from field 3 (state) on
    std::string skip;
    for (int f = 3; f < 14; ++f) fields >> skip;
    double utime = 0, stime = 0;
    fields >> utime >> stime;
    total += (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return total;
}

scene_table dungeon_table() {
  scene_table t;
  t.runtime.group_budget = 100;
  t.runtime.idle_grace = 0ms;  // an emptied line closes at once, so the next wave opens it again
  t.maps.push_back(map_def{1, "dungeon", 48, 48, 8, 8, 1, 1, {cell_rect{20, 20, 4, 4}}});
  for (scene_id s = 1; s <= dungeons; ++s) {
    scene_def d;
    d.id = s, d.name = fmt::format("dungeon{}", s), d.kind = scene_kind::dungeon;
    // max_lines is never reached: the waves need about players/5 lines per dungeon.
    d.capacity = capacity, d.hard_capacity = capacity, d.min_lines = 0, d.max_lines = 10'000;
    d.frame_rate = 10, d.map = 1, d.policy = allocation_policy::fill_first, d.monsters = 0;
    t.scenes.push_back(d);
  }
  return t;
}

// What the answers tell, shared with the reply callbacks (which may outlive a drive() that gave up
// waiting for them, hence a shared_ptr).
struct tally {
  std::atomic<std::int64_t> in_flight{0};
  std::atomic<std::uint64_t> allocated{0}, failed{0}, leave_failed{0};
  std::mutex m;
  std::vector<std::uint32_t> latency_us;  // each enter's, submit to reply

  void answered() {
    in_flight.fetch_sub(1, std::memory_order_release);
    in_flight.notify_one();
  }
};

// One wave's enters: its leaves wait until every enter was answered, so that a gateway knows
// where each player is before its leave is routed.
struct wave {
  std::atomic<std::uint32_t> answered{0};
  player_id first = 0;
  std::uint32_t sent = 0;
};

struct load_result {
  std::uint64_t allocations = 0, errors = 0, leave_errors = 0;
  double seconds = 0, cpu_s = 0, child_cpu_s = 0, p50_ms = 0, p99_ms = 0;
};

class driver {
 public:
  driver(world_port& w, const args& a) : w_(w), a_(a) {}

  load_result run() {
    const auto start = clock_type::now();
    const auto end =
        start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(a_.seconds));
    const double cpu0 = bench::process_cpu_seconds(), child0 = children_cpu_seconds();
    std::shared_ptr<wave> previous;
    for (std::uint64_t n = 0; clock_type::now() < end; ++n) {
      auto current = enter_wave(static_cast<scene_id>(1 + n % dungeons), end);
      if (previous) leave_wave(*previous);
      previous = std::move(current);
    }
    load_result r;
    r.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    r.cpu_s = bench::process_cpu_seconds() - cpu0, r.child_cpu_s = children_cpu_seconds() - child0;
    r.allocations = t_->allocated.load(), r.errors = t_->failed.load();
    if (previous) leave_wave(*previous);  // the world ends empty; not counted
    for (auto until = clock_type::now() + 15s; t_->in_flight.load() > 0 && clock_type::now() < until;)
      std::this_thread::sleep_for(1ms);
    r.leave_errors = t_->leave_failed.load();
    std::lock_guard lock(t_->m);
    auto& l = t_->latency_us;
    auto pct = [&](double q) {
      if (l.empty()) return 0.0;
      auto at = l.begin() + static_cast<std::ptrdiff_t>(q * static_cast<double>(l.size() - 1));
      std::nth_element(l.begin(), at, l.end());
      return *at / 1e3;
    };
    r.p50_ms = pct(0.50), r.p99_ms = pct(0.99);
    return r;
  }

 private:
  // Blocks while `window` requests are in flight.
  void take_slot() {
    for (auto n = t_->in_flight.load(std::memory_order_acquire); n >= static_cast<std::int64_t>(a_.window);
         n = t_->in_flight.load(std::memory_order_acquire))
      t_->in_flight.wait(n);
    t_->in_flight.fetch_add(1, std::memory_order_relaxed);
  }

  std::shared_ptr<wave> enter_wave(scene_id scene, clock_type::time_point end) {
    auto v = std::make_shared<wave>();
    v->first = next_;
    for (; v->sent < a_.players && clock_type::now() < end; ++v->sent) {
      take_slot();
      w_.submit(world_request::enter(next_++, scene), [t = t_, v, at = clock_type::now()](world_result r) {
        auto us = std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now() - at).count();
        {
          std::lock_guard lock(t->m);
          t->latency_us.push_back(static_cast<std::uint32_t>(us));
        }
        (r ? t->allocated : t->failed).fetch_add(1, std::memory_order_relaxed);
        v->answered.fetch_add(1, std::memory_order_release);
        t->answered();
      });
    }
    return v;
  }

  void leave_wave(const wave& v) {
    for (auto until = clock_type::now() + 10s; v.answered.load() < v.sent && clock_type::now() < until;)
      std::this_thread::sleep_for(100us);
    for (std::uint32_t i = 0; i < v.sent; ++i) {
      take_slot();
      w_.submit(world_request::leave(v.first + i), [t = t_](world_result r) {
        if (!r) t->leave_failed.fetch_add(1, std::memory_order_relaxed);
        t->answered();
      });
    }
  }

  world_port& w_;
  const args& a_;
  std::shared_ptr<tally> t_ = std::make_shared<tally>();
  player_id next_ = 1;
};

// A request and its answer, waited for (at most 5 s).
world_result ask(world_port& w, const world_request& q) {
  auto done = std::make_shared<std::promise<world_result>>();
  auto f = done->get_future();
  w.submit(q, [done](world_result r) { done->set_value(std::move(r)); });
  if (f.wait_for(5s) != std::future_status::ready)
    return fail(world_errc::node_unavailable, "no answer in 5 s");
  return f.get();
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  auto at = v.begin() + static_cast<std::ptrdiff_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), at, v.end());
  return *at;
}

struct travel_result {
  std::vector<double> journey_ms, local_ms;  // joins that crossed nodes, joins on one node
  std::uint64_t failed = 0;
};

// `journeys` counts the gateway's journeys so far (0 in one process): a join that raised it crossed.
travel_result travel(world_port& w, player_id first, unsigned joins,
                     const std::function<std::uint64_t()>& journeys) {
  travel_result r;
  for (unsigned i = 0; i < joins; ++i) {
    const player_id leader = first + 2 * i, follower = leader + 1;
    if (!ask(w, world_request::enter(leader, 1)) || !ask(w, world_request::enter(follower, 2))) {
      ++r.failed;
      continue;
    }
    const auto before = journeys();
    const auto at = clock_type::now();
    const bool joined = ask(w, world_request::join_team(follower, leader)).has_value();
    const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - at).count();
    if (!joined)
      ++r.failed;
    else
      (journeys() != before ? r.journey_ms : r.local_ms).push_back(ms);
    (void)ask(w, world_request::leave(follower));
    (void)ask(w, world_request::leave(leader));
  }
  return r;
}

std::string json(const travel_result& t) {
  return fmt::format(
      R"({{"journeys": {}, "journey_ms": {{"p50": {:.2f}, "p99": {:.2f}}}, "joins_on_one_node": {}, )"
      R"("on_one_node_ms": {{"p50": {:.2f}, "p99": {:.2f}}}, "failed": {}}})",
      t.journey_ms.size(), percentile(t.journey_ms, 0.5), percentile(t.journey_ms, 0.99), t.local_ms.size(),
      percentile(t.local_ms, 0.5), percentile(t.local_ms, 0.99), t.failed);
}

// Lines opened by one world since its start (the snapshot is refreshed every 100 ms).
std::uint64_t lines_opened(const world& w) {
  std::uint64_t n = 0;
  for (const auto& s : w.snapshot()->scenes) n += s.lines_opened;
  return n;
}

std::string json(const load_result& r, std::uint64_t opened) {
  const double n = static_cast<double>(std::max<std::uint64_t>(1, r.allocations));
  return fmt::format(
      R"("allocations_per_s": {:.0f}, "allocations": {}, "errors": {}, "leave_errors": {}, "seconds": {:.2f}, )"
      R"("latency_ms": {{"p50": {:.3f}, "p99": {:.3f}}}, "lines_opened": {}, "opens_per_allocation": {:.3f}, )"
      R"("process_cpu_us_per_allocation": {:.1f}, "nats_server_cpu_us_per_allocation": {:.1f})",
      static_cast<double>(r.allocations) / r.seconds, r.allocations, r.errors, r.leave_errors, r.seconds,
      r.p50_ms, r.p99_ms, opened, static_cast<double>(opened) / n, r.cpu_s * 1e6 / n,
      r.child_cpu_s * 1e6 / n);
}

load_result run_one_process(const scene_table& table, const args& a, std::uint64_t& opened,
                            travel_result& joins) {
  pool_options po;
  po.workers = a.workers;
  processor_pool pool(po);
  (void)pool.start();
  auto w = world::create(table, pool);
  w->start();
  std::fprintf(stderr, "one process: allocating for %.1f s...\n", a.seconds);
  auto r = driver(*w, a).run();
  std::this_thread::sleep_for(200ms);  // a fresh snapshot
  opened = lines_opened(*w);
  joins = travel(*w, 100'000'000, a.travel, [] { return std::uint64_t{0}; });
  w->shutdown().wait();
  (void)pool.stop();
  return r;
}

namespace cl = scenert::cluster;
using cl::test::lines_bucket;
using cl::test::node_in_process;
using cl::test::nodes_bucket;
using cl::test::poller;

std::atomic<std::uint64_t> warnings{0};
void warn(std::string_view what) {
  if (warnings.fetch_add(1) < 5) std::fprintf(stderr, "warning: %.*s\n", int(what.size()), what.data());
}

struct cluster_figures {
  load_result load;
  std::uint64_t opened = 0, line_records = 0, open_in_store = 0, generations = 0;
  cl::remote_world_stats gateway;
  travel_result joins;
};

cluster_figures run_cluster(const cl::test::nats_server& server, const scene_table& table, const args& a) {
  std::vector<std::unique_ptr<node_in_process>> nodes;
  for (unsigned i = 1; i <= a.nodes; ++i)
    nodes.push_back(cl::test::start_node(server, table, fmt::format("n{}", i), a.workers, warn));
  auto [link, nodes_kv] = cl::test::open_bucket(server, nodes_bucket, "gateway");
  cl::remote_world_options o;
  o.gateway = "g";
  o.on_line_events = [](line_handle, phase_id, std::span<const line_event>) {};
  o.warn = warn;
  o.table = std::make_shared<const scene_table>(table);  // as `scenert gateway`: entries go by the lines
  auto gateway = cl::remote_world::start(*link, nodes_kv, std::move(o));
  if (!gateway) throw std::runtime_error("gateway: " + gateway.error().message);
  cluster_figures f;
  {
    poller keep_alive(**gateway, nodes, warn);
    std::fprintf(stderr, "cluster of %u nodes: allocating for %.1f s...\n", a.nodes, a.seconds);
    f.load = driver(**gateway, a).run();
    f.gateway = (*gateway)->stats();
    std::fprintf(stderr, "cluster: %u team joins, one at a time...\n", a.travel);
    f.joins = travel(**gateway, 100'000'000, a.travel, [&g = **gateway] { return g.stats().journeys; });
  }
  std::this_thread::sleep_for(200ms);  // fresh snapshots
  for (auto& n : nodes) f.opened += lines_opened(*n->w);
  auto lines_kv = link->bucket(lines_bucket);
  for (scene_id s = 1; lines_kv && s <= dungeons; ++s)
    if (auto lines = cl::line_store(*lines_kv).lines(s))
      for (const auto& l : *lines) {
        ++f.line_records, f.generations += l.record.generation;
        f.open_in_store += l.record.state == cl::line_state_in_cluster::open;
      }
  std::fprintf(stderr, "stopping the cluster...\n");
  gateway->reset();
  for (auto& n : nodes) n->endpoint->stop();
  for (auto& n : nodes) n->w->shutdown().wait();
  for (auto& n : nodes) (void)n->pool->stop();
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const args a = parse(argc, argv);
  const scene_table table = dungeon_table();
  std::uint64_t one_opened = 0;
  load_result one;
  travel_result one_joins;
  cluster_figures c;
  try {
    // First, so that a missing nats-server fails the run at once; idle during the one-process run.
    cl::test::nats_server server;
    one = run_one_process(table, a, one_opened, one_joins);
    c = run_cluster(server, table, a);
  } catch (const std::exception& e) {  // the server is stopped by its pid on the way out
    std::fprintf(stderr, "bench_cluster: %s (scripts/setup.sh installs nats-server)\n", e.what());
    return 1;
  }
  auto per_s = [](const load_result& r) { return static_cast<double>(r.allocations) / r.seconds; };
  auto cpu_per = [](const load_result& r) {
    return (r.cpu_s + r.child_cpu_s) / static_cast<double>(std::max<std::uint64_t>(1, r.allocations));
  };
  std::printf(
      "{\"bench\": \"cluster\", \"seconds\": %.1f, \"window\": %u, \"players_per_wave\": %u, \"dungeons\": "
      "%u, "
      "\"capacity\": %u, \"workers_per_pool\": %u,\n \"one_process\": {%s},\n \"cluster\": {\"nodes\": %u, "
      "%s,\n"
      "   \"line_records\": %llu, \"open_in_store\": %llu, \"opens_in_store\": %llu, \"gateway_timeouts\": "
      "%llu, "
      "\"gateway_no_node\": %llu,\n   \"entries_to_room\": %llu, \"entries_to_new_line\": %llu, "
      "\"warnings\": "
      "%llu,\n   \"team_joins\": %s},\n"
      " \"one_process_team_joins\": %s,\n"
      " \"allocations_per_s_one_process_over_cluster\": %.2f, "
      "\"cpu_per_allocation_cluster_over_one_process\": "
      "%.2f}\n",
      a.seconds, a.window, a.players, dungeons, capacity, a.workers, json(one, one_opened).c_str(), a.nodes,
      json(c.load, c.opened).c_str(), static_cast<unsigned long long>(c.line_records),
      static_cast<unsigned long long>(c.open_in_store), static_cast<unsigned long long>(c.generations),
      static_cast<unsigned long long>(c.gateway.timeouts), static_cast<unsigned long long>(c.gateway.no_node),
      static_cast<unsigned long long>(c.gateway.entries_to_room),
      static_cast<unsigned long long>(c.gateway.entries_to_new_line),
      static_cast<unsigned long long>(warnings.load()), json(c.joins).c_str(), json(one_joins).c_str(),
      per_s(one) / std::max(per_s(c.load), 1e-9), cpu_per(c.load) / std::max(cpu_per(one), 1e-12));
  return 0;
}
