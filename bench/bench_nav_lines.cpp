// bench_nav_lines: the navigation load of many open dungeon lines on one thread, without scene/:
// each line has a boss that searches (its path_queue, a budget of expansions per tick) toward a
// party member and `--mobs` mobs that steer toward the party with a leash and a cell cap. The
// party walks. Prints one JSON object: CPU per line-tick (p50, p99, max), per mob-step and per
// expansion (the boss's whole search share: its requests, its steps), so that a line's share of a
// group's tick slot can be read off. CPU time of this thread: other load on the machine stays out.
#include <scenert/nav/path_queue.hpp>
#include <scenert/nav/steering.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "nav_common.hpp"

namespace {

namespace nav = scenert::nav;

struct args {
  std::uint32_t lines = 1000, mobs = 30, ticks = 100, budget = 200, size = 64;
};

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct line {
  nav::path_queue queue;
  std::vector<nav::mob_steer> mobs;
  std::vector<std::uint8_t> per_cell;
  std::vector<nav::cell> party;
  nav::path_handle boss_request;
  std::uint32_t operator()(nav::cell c) const { return per_cell[queue.map().index(c)]; }
};

nav::cell open_cell(const nav::nav_map& map, nav::nav_random& rng) {
  for (;;) {
    const nav::cell c{rng.below(map.width()), rng.below(map.height())};
    if (map.passable(c.x, c.y)) return c;
  }
}

line make_line(const std::shared_ptr<const nav::nav_map>& map, const args& a, nav::nav_random& rng) {
  line l{nav::path_queue(map, {4, 1, nav::algorithm::jps}),
         {},
         std::vector<std::uint8_t>(map->cell_count(), 0),
         {},
         {}};
  for (std::uint32_t m = 0; m < a.mobs; ++m) {
    const nav::cell c = open_cell(*map, rng);
    l.mobs.push_back({c, c});
    ++l.per_cell[map->index(c)];
  }
  for (int p = 0; p < 5; ++p) l.party.push_back(open_cell(*map, rng));
  return l;
}

struct totals {
  std::uint64_t mob_steps = 0, expansions = 0;
  double search_ns = 0, steer_ns = 0;
};

// One tick of one line: the party drifts, the boss's search gets its budget (a new one when the
// last is done), every mob steps. The parts are timed (three clock reads, counted in the parts).
void tick(line& l, const args& a, nav::nav_random& rng, totals& sum) {
  const nav::nav_map& map = l.queue.map();
  for (auto& p : l.party) {
    const nav::cell next{p.x + rng.below(3) - 1, p.y + rng.below(3) - 1};
    if (nav::can_step(map, p, next)) p = next;
  }
  const double t0 = thread_cpu_ns();
  const auto state = l.queue.state(l.boss_request);
  if (!state || (*state != nav::request_state::running && *state != nav::request_state::waiting)) {
    (void)l.queue.cancel(l.boss_request);
    l.boss_request = *l.queue.submit(open_cell(map, rng), l.party[rng.below(5)]);
  }
  sum.expansions += l.queue.step(a.budget);
  const double t1 = thread_cpu_ns();
  const nav::steer_rules rules{24, 2};
  for (std::size_t m = 0; m < l.mobs.size(); ++m) {
    auto& mob = l.mobs[m];
    const nav::cell from = mob.position;
    (void)nav::steer(map, mob, l.party[m % 5], rules, nav::cell_counter(l));
    if (mob.position != from) --l.per_cell[map.index(from)], ++l.per_cell[map.index(mob.position)];
    ++sum.mob_steps;
  }
  const double t2 = thread_cpu_ns();
  sum.search_ns += t1 - t0, sum.steer_ns += t2 - t1;
}

}  // namespace

int main(int argc, char** argv) {
  args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const auto v = static_cast<std::uint32_t>(std::stoul(argv[i + 1]));
    if (flag == "--lines")
      a.lines = v;
    else if (flag == "--mobs")
      a.mobs = v;
    else if (flag == "--ticks")
      a.ticks = v;
    else if (flag == "--budget")
      a.budget = v;
    else if (flag == "--size")
      a.size = v;
    else
      return std::fprintf(
                 stderr,
                 "usage: bench_nav_lines [--lines N] [--mobs M] [--ticks T] [--budget B] [--size S]\n"),
             2;
  }
  nav::map_spec spec{nav::map_kind::rooms, a.size, a.size, 9};
  spec.room = 12;
  const auto map = *nav::nav_map::create(a.size, a.size, nav::generate_blocks(spec));
  nav::nav_random rng(9);
  std::vector<line> lines;
  for (std::uint32_t i = 0; i < a.lines; ++i) lines.push_back(make_line(map, a, rng));
  std::vector<double> line_ns;
  totals warm, sum;
  for (auto& l : lines) tick(l, a, rng, warm);  // the first search of each line sizes its context
  const double t0 = thread_cpu_ns();
  for (std::uint32_t t = 0; t < a.ticks; ++t) {
    for (auto& l : lines) {
      const double s = thread_cpu_ns();
      tick(l, a, rng, sum);
      line_ns.push_back(thread_cpu_ns() - s);
    }
  }
  const double total_ns = thread_cpu_ns() - t0;
  std::sort(line_ns.begin(), line_ns.end());
  const auto at = [&](double q) {
    return line_ns[static_cast<std::size_t>(q * static_cast<double>(line_ns.size() - 1))];
  };
  std::printf(
      "{\"lines\": %u, \"mobs_per_line\": %u, \"ticks\": %u, \"budget\": %u, \"map\": %u, "
      "\"cpu_ms_per_tick_all_lines\": %.3f, \"line_tick_us_p50\": %.2f, \"line_tick_us_p99\": %.2f, "
      "\"line_tick_us_max\": %.2f, \"expansions_per_line_tick\": %.1f, \"ns_per_mob_step\": %.1f, "
      "\"ns_per_expansion\": %.1f}\n",
      a.lines, a.mobs, a.ticks, a.budget, a.size, total_ns / 1e6 / a.ticks, at(0.5) / 1e3, at(0.99) / 1e3,
      line_ns.back() / 1e3, static_cast<double>(sum.expansions) / static_cast<double>(line_ns.size()),
      sum.steer_ns / static_cast<double>(std::max<std::uint64_t>(1, sum.mob_steps)),
      sum.search_ns / static_cast<double>(std::max<std::uint64_t>(1, sum.expansions)));
  return 0;
}
