// bench_aoi: ours against seed 002's list grid and seed 000's screen index on issue 4's trace, in one
// process. Prints one JSON object on stdout; progress on stderr.
#include <scenert/scene/grid/grid.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "aoi_trace.hpp"
#include "baseline/list_grid.hpp"
#include "baseline/screen_index.hpp"

namespace sb = scenert::bench;
namespace sg = scenert::grid;

namespace {

bool g_disagreement = false;

// Produces every pair: counts it and folds (mover, other) into an order-free checksum, the mover's id
// in the high half and the other's in the low half, so that the baselines can be checked against ours.
struct pair_counter {
  std::uint64_t enters = 0, leaves = 0, enter_sum = 0, leave_sum = 0;
  std::uint64_t mover_bits = 0;
  void set_mover(std::uint32_t id) { mover_bits = static_cast<std::uint64_t>(id) << 32; }
  void enter(std::uint32_t other) { ++enters, enter_sum += mover_bits + other; }
  void leave(std::uint32_t other) { ++leaves, leave_sum += mover_bits + other; }
  // The same per pair, for grids that hand over one area's ids at once.
  void enter(const std::uint32_t* ids, std::uint32_t n) { fold(ids, n, enters, enter_sum); }
  void leave(const std::uint32_t* ids, std::uint32_t n) { fold(ids, n, leaves, leave_sum); }
  void fold(const std::uint32_t* ids, std::uint32_t n, std::uint64_t& count, std::uint64_t& sum) const {
    std::uint64_t s = 0;
    for (std::uint32_t i = 0; i < n; ++i) s += ids[i];
    count += n;
    sum += s + mover_bits * n;
  }
  bool operator==(const pair_counter& o) const {
    return enters == o.enters && leaves == o.leaves && enter_sum == o.enter_sum && leave_sum == o.leave_sum;
  }
};

struct run_stats {
  std::size_t moves = 0;
  double mps() const { return double(moves) / move_seconds; }
  bool full = true;
  double add_seconds = 0, move_seconds = 0;
  std::uint64_t crossings = 0;
  pair_counter at_add, on_move;
  std::size_t bytes = 0;
  bool operator==(const run_stats& o) const {
    return moves == o.moves && crossings == o.crossings && at_add == o.at_add && on_move == o.on_move;
  }
};

class ours {
 public:
  explicit ours(const sb::aoi_trace& t)
      : grid_(*sg::map_data::create({t.width, t.height, t.area_x, t.area_y, t.radius_x, t.radius_y, {}}),
              sg::grid_options{1u << 24, static_cast<std::uint32_t>(t.initial.size())}) {}
  template <class V>
  void add(std::uint32_t id, std::uint32_t x, std::uint32_t y, V& v) {
    if (!grid_.add(id, sg::entity_type::player, {x, y}, v)) std::abort();
  }
  template <class V>
  bool move(std::uint32_t id, std::uint32_t x, std::uint32_t y, V& v) {
    auto r = grid_.move(id, {x, y}, v);
    if (!r) std::abort();
    return *r;
  }
  std::size_t bytes() const { return grid_.memory_bytes(); }

 private:
  sg::grid grid_;
};

// Diagnostic: ours with a visitor that drops the pairs (the floor of the bookkeeping alone).
struct ours_blind : ours {
  using ours::ours;
  template <class V>
  void add(std::uint32_t id, std::uint32_t x, std::uint32_t y, V&) {
    ours::add(id, x, y, none_);
  }
  template <class V>
  bool move(std::uint32_t id, std::uint32_t x, std::uint32_t y, V&) {
    return ours::move(id, x, y, none_);
  }
  sg::ignore_view none_;
};

struct list_002 : sb::baseline::list_grid {
  explicit list_002(const sb::aoi_trace& t)
      : list_grid(int(t.width), int(t.height), int((t.width + t.area_x - 1) / t.area_x),
                  int((t.height + t.area_y - 1) / t.area_y), int(t.radius_x), int(t.radius_y)) {}
  template <class V>
  void add(std::uint32_t id, std::uint32_t x, std::uint32_t y, V& v) {
    list_grid::add(id, int(x), int(y), v);
  }
  template <class V>
  bool move(std::uint32_t id, std::uint32_t x, std::uint32_t y, V& v) {
    return list_grid::move(id, int(x), int(y), v);
  }
};

struct screen_000 : sb::baseline::screen_index {
  explicit screen_000(const sb::aoi_trace& t)
      : screen_index(t.width, t.height, t.area_x, t.area_y, t.radius_x, t.radius_y) {}
};

// Thread CPU time: the machine is shared by parallel builds, and CPU time does not count the time
// this thread spends descheduled (cache pollution by neighbours still counts).
struct cpu_clock {
  static double now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  }
};
double since(double start) { return cpu_clock::now() - start; }

// Replays the adds, then up to max_moves moves; with a time cap the run stops at the first 256-move
// boundary past it (a prefix, reported as such).
template <class Impl>
run_stats run(const sb::aoi_trace& t, std::size_t max_moves, double cap_seconds) {
  Impl impl(t);
  run_stats s;
  double start = cpu_clock::now();
  for (const sb::trace_move& m : t.initial) {
    s.at_add.set_mover(m.id);
    impl.add(m.id, m.x, m.y, s.at_add);
  }
  s.add_seconds = since(start);
  const std::size_t n = std::min(max_moves, t.moves.size());
  pair_counter c;
  std::uint64_t crossings = 0;
  std::size_t i = 0;
  start = cpu_clock::now();
  if (cap_seconds <= 0) {
    for (; i < n; ++i) {
      const sb::trace_move& m = t.moves[i];
      c.set_mover(m.id);
      crossings += impl.move(m.id, m.x, m.y, c);
    }
  } else {
    while (i < n) {
      for (const std::size_t end = std::min(n, i + 256); i < end; ++i) {
        const sb::trace_move& m = t.moves[i];
        c.set_mover(m.id);
        crossings += impl.move(m.id, m.x, m.y, c);
      }
      if (since(start) > cap_seconds) break;
    }
  }
  s.move_seconds = since(start);
  s.moves = i;
  s.full = i == t.moves.size();
  s.crossings = crossings;
  s.on_move = c;
  s.bytes = impl.bytes();
  return s;
}

void print_stats(const char* name, const run_stats& s, std::size_t entities, const char* extra) {
  const double mps = s.mps();
  std::printf(
      "\"%s\": {\"moves\": %zu, \"full_trace\": %s, \"moves_per_sec\": %.0f, \"ns_per_move\": %.2f, "
      "\"add_ns\": %.1f, \"crossings\": %llu, \"enter_pairs\": %llu, \"leave_pairs\": %llu, "
      "\"pairs_at_add\": %llu, \"bytes_per_entity\": %.1f%s}",
      name, s.moves, s.full ? "true" : "false", mps, 1e9 * s.move_seconds / double(s.moves ? s.moves : 1),
      1e9 * s.add_seconds / double(entities), (unsigned long long)s.crossings,
      (unsigned long long)s.on_move.enters, (unsigned long long)s.on_move.leaves,
      (unsigned long long)s.at_add.enters, double(s.bytes) / double(entities), extra);
}

struct options {
  std::string scenario = "s1";
  std::uint64_t seed = 42;
  long entities = -1, ticks = -1;
  double baseline_seconds = 2.0;
  int repeat = 3;
  bool ours_only = false;
  bool null_visitor = false;
};

// Ours `repeat` times (median by moves/s), each baseline once; each baseline is checked against ours
// replayed on the same prefix.
void bench_trace(const sb::aoi_trace& t, const options& o, bool last) {
  const std::size_t n = t.initial.size();
  std::fprintf(stderr, "bench_aoi: %s: %zu entities, %zu moves\n", t.name.c_str(), n, t.moves.size());
  std::vector<run_stats> runs;
  for (int r = 0; r < o.repeat; ++r)
    runs.push_back(o.null_visitor ? run<ours_blind>(t, t.moves.size(), 0) : run<ours>(t, t.moves.size(), 0));
  std::sort(runs.begin(), runs.end(),
            [](const run_stats& a, const run_stats& b) { return a.move_seconds < b.move_seconds; });
  const run_stats mine = runs[runs.size() / 2];
  std::fprintf(stderr, "bench_aoi: %s: ours %.1f M moves/s\n", t.name.c_str(), mine.mps() / 1e6);
  if (o.ours_only) {
    std::printf("{\"name\": \"%s\", ", t.name.c_str());
    print_stats("ours", mine, n, "");
    std::printf("}%s", last ? "" : ", ");
    return;
  }
  const run_stats list = run<list_002>(t, t.moves.size(), o.baseline_seconds);
  std::fprintf(stderr, "bench_aoi: %s: seed 002 list grid ran %zu moves\n", t.name.c_str(), list.moves);
  const run_stats screen = run<screen_000>(t, t.moves.size(), o.baseline_seconds);
  std::fprintf(stderr, "bench_aoi: %s: seed 000 screen index ran %zu moves\n", t.name.c_str(), screen.moves);
  const bool list_agrees = run<ours>(t, list.moves, 0) == list;
  const bool screen_agrees = run<ours>(t, screen.moves, 0) == screen;

  std::printf(
      "{\"name\": \"%s\", \"width\": %u, \"height\": %u, \"area\": [%u, %u], \"radius\": [%u, %u], "
      "\"entities\": %zu, \"ticks\": %u, \"mode\": \"%s\", \"trace_moves\": %zu, \"ours_repeats\": %d, ",
      t.name.c_str(), t.width, t.height, t.area_x, t.area_y, t.radius_x, t.radius_y, n, t.ticks,
      t.teleport ? "teleport" : "walk", t.moves.size(), o.repeat);
  print_stats("ours", mine, n, "");
  std::printf(", ");
  print_stats("seed002_list_grid", list, n,
              list_agrees ? ", \"same_pairs_as_ours\": true" : ", \"same_pairs_as_ours\": false");
  std::printf(", ");
  print_stats("seed000_screen_index", screen, n,
              screen_agrees ? ", \"same_pairs_as_ours\": true" : ", \"same_pairs_as_ours\": false");
  const double ours_mps = mine.mps();
  std::printf(", \"speedup\": {\"vs_seed002_list_grid\": %.1f, \"vs_seed000_screen_index\": %.1f}",
              ours_mps / list.mps(), ours_mps / screen.mps());
  if (!mine.moves)
    std::printf(", \"pairs_per_move\": 0");
  else
    std::printf(", \"pairs_per_move\": %.1f",
                double(mine.on_move.enters + mine.on_move.leaves) / double(mine.moves));
  std::printf("}%s", last ? "" : ", ");
  if (!list_agrees || !screen_agrees) g_disagreement = true;
  if (!list_agrees || !screen_agrees)
    std::fprintf(stderr, "bench_aoi: %s: a baseline disagrees with ours\n", t.name.c_str());
}

int usage(int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: bench_aoi --scenario s1|s2|s3|s4|s5|seed001 [--seed K] [--entities N] [--ticks T]\n"
               "                 [--baseline-seconds S] [--repeat R] [--ours-only] [--null-visitor]\n"
               "Baselines stop at the first 256-move boundary past S seconds of CPU time (default 2).\n");
  return code;
}

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help") std::exit(usage(0));
    if (a == "--ours-only" || a == "--null-visitor") {
      (a == "--ours-only" ? o.ours_only : o.null_visitor) = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (a == "--scenario")
      o.scenario = v;
    else if (a == "--seed")
      o.seed = std::strtoull(v, nullptr, 10);
    else if (a == "--entities")
      o.entities = std::strtol(v, nullptr, 10);
    else if (a == "--ticks")
      o.ticks = std::strtol(v, nullptr, 10);
    else if (a == "--baseline-seconds")
      o.baseline_seconds = std::strtod(v, nullptr);
    else if (a == "--repeat")
      o.repeat = std::max(1, int(std::strtol(v, nullptr, 10)));
    else
      return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) return usage(2);
  const sb::scenario_params all[] = {
      {"s1", 1024, 16, 1, 10000, 100, false}, {"s2", 256, 16, 1, 10000, 100, false},
      {"s3", 1024, 8, 2, 10000, 100, false},  {"s4", 1024, 16, 1, 10000, 20, true},
      {"s5", 4096, 16, 1, 100000, 20, false},
  };
  std::vector<sb::aoi_trace> traces;
  for (sb::scenario_params p : all) {
    if (p.name != o.scenario) continue;
    if (o.entities > 0) p.entities = std::uint32_t(o.entities);
    if (o.ticks > 0) p.ticks = std::uint32_t(o.ticks);
    traces.push_back(sb::make_trace(p, o.seed));
  }
  if (o.scenario == "seed001") {
    const auto rounds = std::uint32_t(o.ticks > 0 ? o.ticks : 5000);
    traces.push_back(sb::make_full_load("seed001_9grid_12x8", 12, 8, 1, 5, rounds));
    traces.push_back(sb::make_full_load("seed001_25grid_7x5", 7, 5, 2, 7, rounds));
  }
  if (traces.empty()) return usage(2);
  std::printf("{\"bench\": \"aoi\", \"scenario\": \"%s\", \"seed\": %llu, \"runs\": [", o.scenario.c_str(),
              (unsigned long long)o.seed);
  for (std::size_t i = 0; i < traces.size(); ++i) bench_trace(traces[i], o, i + 1 == traces.size());
  std::printf("]}\n");
  return g_disagreement ? 3 : 0;  // a baseline that reports other pairs than ours is a bug somewhere
}
