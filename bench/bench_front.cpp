// bench_front: the network front under load, in one process over loopback. A world on the example
// table, the front on a free port, and N seed 002 clients on one thread (poll) that walk around the
// town at a rate, reading everything. Measures, over the steady part of the run (after every client
// landed): frames queued per write to a socket, bytes, and allocations per delivered frame (every
// thread's, counted by a global operator new) and the process's CPU per delivered frame. Prints one
// JSON object.
//   bench_front --clients N --seconds S [--hz H] [--workers W] [--io-threads T]
#include <scenert/config/table_loader.hpp>
#include <scenert/net/front.hpp>
#include <scenert/net/messages.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/world.hpp>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "bench_cli.hpp"
#include "loopback_socket.hpp"  // tests/
#include "process_cpu.hpp"

namespace {
std::atomic<std::uint64_t> allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using namespace std::chrono_literals;
using namespace scenert;
using clock_type = std::chrono::steady_clock;

struct args {
  unsigned clients = 200;
  double seconds = 10;
  double hz = 10;  // moves per second per client
  unsigned workers = 2;
  unsigned io_threads = 1;
};

args parse(int argc, char** argv) {
  args a;
  CLI::App app{"bench_front: clients walking in a town through the front, moves to viewers timed"};
  app.add_option("--clients", a.clients, "connected clients")->check(CLI::Range(1, 100'000));
  app.add_option("--seconds", a.seconds, "how long they walk")->check(CLI::Range(0.01, 600.0));
  app.add_option("--hz", a.hz, "moves per second per client")->check(CLI::Range(0.001, 1000.0));
  app.add_option("--workers", a.workers, "the pool's workers")->check(CLI::Range(1, 1024));
  app.add_option("--io-threads", a.io_threads, "the front's I/O threads")->check(CLI::Range(1, 64));
  scenert::bench::parse_or_exit(app, argc, argv);
  return a;
}

int connect_to(std::uint16_t port) {
  const int fd = scenert::test::connect_loopback(port);
  if (fd < 0) {
    std::perror("bench_front: connect");
    std::exit(1);
  }
  return fd;
}

// A walker in a box of the town clear of its blocked cells, one step of up to 2 units per move.
struct walker {
  int fd = -1;
  float x = 0, z = 0;
  bool landed = false;
  std::uint64_t frames_in = 0;
  net::frame_reader reader{1 << 20};
};

// The N clients on this thread: one poll over all their sockets, one buffer for what they read,
// one random stream for where they start and how they step.
struct clients {
  std::vector<walker> walkers;
  std::vector<pollfd> polls;
  std::mt19937 rng{42};
  std::uniform_real_distribution<float> step{-2, 2};
  std::string frame;  // reused: one move at a time
  char buf[1 << 16];

  void connect(unsigned n, std::uint16_t port) {
    std::uniform_real_distribution<float> in_box(110, 210);
    walkers.resize(n);
    polls.resize(n);
    for (unsigned i = 0; i < n; ++i) {
      walkers[i].fd = connect_to(port);
      walkers[i].x = in_box(rng), walkers[i].z = in_box(rng);
      polls[i] = {walkers[i].fd, POLLIN, 0};
    }
  }

  void read_all() {
    if (::poll(polls.data(), polls.size(), 1) <= 0) return;
    for (std::size_t i = 0; i < walkers.size(); ++i) {
      if (!(polls[i].revents & POLLIN)) continue;
      const ssize_t n = ::recv(walkers[i].fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) continue;
      walker& c = walkers[i];
      (void)c.reader.feed(std::string_view(buf, static_cast<std::size_t>(n)),
                          [&c](std::uint32_t id, std::string_view) {
                            ++c.frames_in;
                            c.landed |= id == 202;
                          });
    }
  }

  // One step of up to 2 units on each axis, kept in the box; true when the move was sent.
  bool move(walker& c) {
    c.x = std::clamp(c.x + step(rng), 110.0F, 210.0F);
    c.z = std::clamp(c.z + step(rng), 110.0F, 210.0F);
    frame.clear();
    net::append_frame(frame, net::client_message{net::move_to{{c.x, 0, c.z, 0, 0}}});
    return ::send(c.fd, frame.data(), frame.size(), MSG_NOSIGNAL) > 0;
  }

  unsigned landed() const {
    unsigned n = 0;
    for (const auto& c : walkers) n += c.landed;
    return n;
  }

  std::uint64_t frames_in() const {
    std::uint64_t n = 0;
    for (const auto& c : walkers) n += c.frames_in;
    return n;
  }
};

// Reads until every client landed or 30 s passed; returns how many landed.
unsigned wait_for_landing(clients& cs) {
  const auto landing_deadline = clock_type::now() + 30s;
  unsigned landed = 0;
  while (landed < cs.walkers.size() && clock_type::now() < landing_deadline) {
    cs.read_all();
    landed = cs.landed();
  }
  return landed;
}

// Every client moves at a.hz, their turns spread evenly over the period, until `end`; between
// moves they read what they get. Returns the moves sent.
std::uint64_t walk_until(const args& a, clients& cs, clock_type::time_point start,
                         clock_type::time_point end) {
  const auto period = std::chrono::duration<double>(1.0 / a.hz / a.clients);
  auto next_move = start;
  unsigned turn = 0;
  std::uint64_t moves = 0;
  while (clock_type::now() < end) {
    while (clock_type::now() >= next_move) {
      moves += cs.move(cs.walkers[turn++ % a.clients]);
      next_move += std::chrono::duration_cast<clock_type::duration>(period);
    }
    cs.read_all();
  }
  return moves;
}

// What the steady part of the run measured.
struct steady {
  net::front_stats before, after;
  std::uint64_t moves = 0, allocs = 0, frames_in = 0;
  double elapsed = 0, cpu = 0;
};

// The steady part: every client walks at its rate and reads what it gets.
steady run_steady(const args& a, clients& cs, const net::front& door) {
  steady s;
  s.before = door.stats();
  const std::uint64_t allocs_before = allocations.load();
  const double cpu_before = bench::process_cpu_seconds();
  const std::uint64_t frames_in_before = cs.frames_in();
  const auto start = clock_type::now();
  const auto end =
      start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(a.seconds));
  s.moves = walk_until(a, cs, start, end);
  s.elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
  s.after = door.stats();
  s.allocs = allocations.load() - allocs_before;
  s.cpu = bench::process_cpu_seconds() - cpu_before;
  s.frames_in = cs.frames_in() - frames_in_before;
  return s;
}

void print_report(const args& a, unsigned landed, const steady& s) {
  const auto frames_out = s.after.frames_out - s.before.frames_out;
  const auto writes = s.after.writes - s.before.writes;
  std::printf(
      "%s\n",
      fmt::format(
          R"({{"clients": {}, "io_threads": {}, "landed": {}, "seconds": {:.2f}, "moves_per_s": {:.0f}, )"
          R"("frames_out": {}, "writes": {}, "frames_per_write": {:.2f}, "bytes_out": {}, )"
          R"("frames_read_by_clients": {}, "allocations": {}, "allocations_per_frame_out": {:.4f}, )"
          R"("cpu_ns_per_frame_out": {:.0f}, "slow_readers_cut": {}}})",
          a.clients, a.io_threads, landed, s.elapsed, static_cast<double>(s.moves) / s.elapsed, frames_out,
          writes, writes ? double(frames_out) / double(writes) : 0.0, s.after.bytes_out - s.before.bytes_out,
          s.frames_in, s.allocs, frames_out ? double(s.allocs) / double(frames_out) : 0.0,
          frames_out ? s.cpu * 1e9 / double(frames_out) : 0.0,
          s.after.closed_by[static_cast<std::size_t>(net::close_reason::slow_reader)])
          .c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const args a = parse(argc, argv);
  auto loaded = load_table_file(SCENERT_SOURCE_DIR "/examples/mmo.json");
  if (!loaded.ok()) return 1;
  const scene_table table = *loaded.table;
  pool_options po;
  po.workers = a.workers;
  po.log = [](log_level, std::string_view) {};
  processor_pool pool(std::move(po));
  if (!pool.start()) return 1;
  net::front_options fo;
  fo.io_threads = a.io_threads;
  auto door = net::front::create(table, fo);
  world_options wo;
  wo.on_line_events = door->on_line_events();
  auto w = world::create(table, pool, std::move(wo));
  w->start();
  if (!door->start(*w)) return 1;

  clients cs;
  cs.connect(a.clients, door->tcp_port());
  const unsigned landed = wait_for_landing(cs);
  const steady s = run_steady(a, cs, *door);

  for (auto& c : cs.walkers) ::close(c.fd);
  door->stop();
  (void)w->shutdown().wait_for(5s);
  (void)pool.stop();
  print_report(a, landed, s);
  return landed == a.clients ? 0 : 1;
}
