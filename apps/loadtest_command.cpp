#include "loadtest_command.hpp"

#include <scenert/loadtest/checker.hpp>
#include <scenert/loadtest/driver.hpp>
#include <scenert/loadtest/plan.hpp>
#include <scenert/loadtest/report.hpp>
#include <scenert/loadtest/threshold.hpp>
#include "check_command.hpp"
#include "exit_codes.hpp"

#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/world.hpp>
#include <scenert/space/space_module.hpp>

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <thread>

namespace scenert::apps {

using namespace scenert::loadtest;
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

double to_ms(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e6; }

ms_stats from_histogram(const histogram_snapshot& h) { return {to_ms(h.p50), to_ms(h.p99), to_ms(h.max)}; }

ms_stats from_sorted(const std::vector<std::chrono::nanoseconds>& v) {
  if (v.empty()) return {};
  auto at = [&](double q) {
    return to_ms(v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]);
  };
  return {at(0.5), at(0.99), to_ms(v.back())};
}

// One run: the pool, the world, the driver and the checker, torn down in the right order.
class load_run {
 public:
  load_run(const scene_table& table, const loadtest_options& o, const load_plan& plan)
      : table_(table), options_(o), plan_(plan), pool_(pool_options_for(table, o)), checker_(table) {
    world_options wo;
    wo.on_new_line = attach_space_modules(table);  // town lines get their phases
    world_ = world::create(table, pool_, std::move(wo));
  }

  loadtest_report run() {
    (void)pool_.start();
    world_->start();
    driver_ = std::make_unique<load_driver>(*world_, plan_);
    const auto start = steady_clock::now();
    driver_->start();
    watch(start);
    driver_->stop();
    const double wall = std::chrono::duration<double>(steady_clock::now() - start).count();
    return finish(wall);
  }

 private:
  static pool_options pool_options_for(const scene_table& t, const loadtest_options& o) {
    pool_options p;
    p.workers = o.workers ? o.workers : t.runtime.workers;
    p.quarantine_after = t.runtime.quarantine_after;
    p.stall_threshold = t.runtime.stall_threshold;
    return p;
  }

  // Until the last request went out: progress lines and invariant checks.
  void watch(steady_clock::time_point start) {
    const bool tty = !options_.quiet && isatty(fileno(stderr));
    const auto progress_every = tty ? milliseconds(250) : milliseconds(1000);
    auto next_progress = start + progress_every, next_check = start + milliseconds(500);
    std::uint64_t last_issued = 0;
    auto last_at = start;
    while (!driver_->done()) {
      std::this_thread::sleep_for(milliseconds(20));
      const auto now = steady_clock::now();
      if (now >= next_check) {
        check();
        next_check = now + milliseconds(500);
      }
      if (now < next_progress || options_.quiet) continue;
      const double dt = std::chrono::duration<double>(now - last_at).count();
      const auto issued = driver_->issued();
      progress(tty, std::chrono::duration<double>(now - start).count(),
               static_cast<double>(issued - last_issued) / dt);
      last_issued = issued;
      last_at = now;
      next_progress = now + progress_every;
    }
    if (tty) fmt::print(stderr, "\n");
  }

  void progress(bool tty, double t, double per_second) {
    const auto snap = world_->snapshot();
    std::uint32_t lines[static_cast<std::size_t>(scene_kind::count_)]{};
    for (const auto& s : snap->scenes) lines[static_cast<int>(s.def->kind)] += s.open_lines;
    const auto m = pool_.metrics();
    fmt::print(stderr,
               "{}[{:5.1f} s] online {:6} | open lines: town {} field {} dungeon {} guild {} | {:7.0f} req/s "
               "| tick p99 {:.2f} ms | violations {}{}",
               tty ? "\r" : "", t, snap->players, lines[0], lines[1], lines[2], lines[3], per_second,
               to_ms(m.tick_duration.p99), checker_.violation_count(), tty ? "\x1b[K" : "\n");
    std::fflush(stderr);
  }

  // Runs one check on the world's thread and waits for it.
  void check() {
    std::promise<void> done;
    auto f = done.get_future();
    world_->query([this, &done](const line_directory& dir) {
      checker_.check(dir, driver_->tally().online);
      done.set_value();
    });
    f.wait();
  }

  loadtest_report finish(double wall) {
    if (!driver_->wait_answers(milliseconds(10'000)))
      checker_.add_violation(fmt::format("{} of {} requests never answered",
                                         driver_->issued() - driver_->answered(), driver_->issued()));
    check();
    std::this_thread::sleep_for(milliseconds(150));  // one snapshot period: counters of the whole run
    const auto last = world_->snapshot();
    const auto metrics = pool_.metrics();
    loadtest_report r = base_report(wall, *last, metrics);
    if (world_->shutdown().wait_for(std::chrono::seconds(5)) != std::future_status::ready)
      checker_.add_violation("the world did not shut down within 5 s");
    else
      checker_.check_closed(*world_->snapshot());
    (void)pool_.stop();
    r.checks = checker_.checks();
    r.violation_count = checker_.violation_count();
    r.violations = checker_.messages();
    return r;
  }

  loadtest_report base_report(double wall, const world_snapshot& snap, const pool_metrics& m) {
    loadtest_report r;
    r.players = options_.players;
    r.seconds = options_.seconds;
    r.seed = options_.seed;
    r.rate = plan_.rate;
    r.workers = m.workers;
    r.plan_digest = plan_.digest;
    r.requests = driver_->issued_by_kind();
    r.skipped = driver_->skipped();
    r.wall_seconds = wall;
    tally_into(r);
    for (std::size_t i = 0; i < snap.scenes.size(); ++i) scene_into(r, snap.scenes[i]);
    r.tick = from_histogram(m.tick_duration);
    r.lateness = from_histogram(m.lateness);
    r.issue_lag = from_sorted(driver_->issue_lag());
    return r;
  }

  void tally_into(loadtest_report& r) {
    const answer_tally& t = driver_->tally();  // every answer is in (or counted as a violation)
    for (auto n : t.ok) r.answers_ok += n;
    for (std::size_t c = 0; c < world_errc_count; ++c) {
      if (t.errors[c] == 0) continue;
      r.errors.emplace_back(to_string(static_cast<world_errc>(c)), t.errors[c]);
      r.error_examples.push_back(t.first_error[c]);
    }
    r.enters_ok = t.enters_ok;
    r.leaves_ok = t.leaves_ok;
    for (auto on : t.online) r.online_at_end += on;
    if (r.enters_ok != r.leaves_ok + r.online_at_end)
      checker_.add_violation(fmt::format("players entered {} != left {} + online {}", r.enters_ok,
                                         r.leaves_ok, r.online_at_end));
  }

  void scene_into(loadtest_report& r, const scene_snapshot& s) {
    scene_report out;
    out.id = s.def->id;
    out.name = s.def->name;
    out.kind = s.def->kind;
    out.instances = s.def->instances;
    out.max_players_on_line = s.max_players_on_line;
    out.line_full = s.line_full;
    out.line_full_at_max = s.line_full_at_max;
    out.lines_opened = s.lines_opened;
    out.lines_closed = s.lines_closed;
    out.instances_opened = s.opened_private;
    if (auto it = plan_.party_runs.find(s.def->id); it != plan_.party_runs.end()) out.party_runs = it->second;
    for (const auto& w : checker_.scenes())
      if (w.def == s.def) {
        out.max_open_lines = std::max(w.max_open_lines, s.open_lines);
        out.max_phases_on_line = w.max_phases_on_line;
      }
    r.line_full += s.line_full;
    r.lines_opened += s.lines_opened;
    r.lines_closed += s.lines_closed;
    r.scenes.push_back(std::move(out));
  }

  const scene_table& table_;
  const loadtest_options& options_;
  const load_plan& plan_;
  processor_pool pool_;
  invariant_checker checker_;
  std::shared_ptr<world> world_;
  std::unique_ptr<load_driver> driver_;  // after world_: destroyed first, after the world shut down
};

bool write_report(const std::string& path, const loadtest_report& r) {
  std::ofstream out(path);
  out << report_json(r) << '\n';
  return static_cast<bool>(out);
}

}  // namespace

CLI::App* add_loadtest_command(CLI::App& app, loadtest_options& o) {
  CLI::App* cmd =
      app.add_subcommand("loadtest", "Load-test line allocation with simulated players (in-process world)");
  cmd->add_option("table", o.table, "Scene table (JSON), e.g. examples/mmo.json")->required();
  cmd->add_option("--players", o.players, "Simulated players")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10'000'000u));
  cmd->add_option("--seconds", o.seconds, "Length of the run")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  cmd->add_option("--seed", o.seed, "Seed of the request sequence (same seed, same requests)")
      ->capture_default_str();
  cmd->add_option("--workers", o.workers, "Pool workers (default: the table's runtime.workers)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--rate", o.rate, "Arrivals per second (default: everyone within the first quarter)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--move-period", o.move_period, "Mean seconds between two walks of a player")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0));
  cmd->add_option("--idle-grace", o.idle_grace_ms,
                  "Milliseconds an empty line waits before closing (default: the table's idle_grace_ms)")
      ->check(CLI::Range(0, 86'400'000));
  cmd->add_option("--report", o.report, "Write a JSON report to this file");
  cmd->add_option("--threshold", o.thresholds,
                  "Fail (exit 3) unless it holds, e.g. 'tick_p99_ms<50' (repeatable)");
  cmd->add_flag("--quiet", o.quiet, "No progress lines on stderr");
  cmd->footer(
      "Exit status: 0 every invariant and threshold held; 1 invalid table; 2 usage error or unreadable\n"
      "file; 3 an invariant broke or a threshold was missed.");
  return cmd;
}

int run_loadtest(const loadtest_options& o) {
  std::vector<threshold> thresholds;
  for (const auto& text : o.thresholds) {
    auto t = parse_threshold(text, threshold_metrics());
    if (!t) {
      fmt::print(stderr, "scenert loadtest: --threshold {}\n", t.error().message);
      return exit_usage;
    }
    thresholds.push_back(*t);
  }
  int code = exit_ok;
  auto loaded = load_table_or_report(o.table, code);
  if (!loaded) return code;
  auto table = std::make_shared<scene_table>(*loaded);
  if (o.idle_grace_ms >= 0) table->runtime.idle_grace = std::chrono::milliseconds(o.idle_grace_ms);
  const load_plan plan = make_plan(*table, {o.players, o.seconds, o.rate, o.seed, o.move_period, true});
  if (!o.quiet)
    fmt::print(stderr, "loadtest: {} players over {} s at {:.0f} arrivals/s, seed {}: {} requests planned\n",
               o.players, o.seconds, plan.rate, o.seed, plan.steps.size());
  loadtest_report report = load_run(*table, o, plan).run();
  report.missed_thresholds = missed_thresholds(thresholds, measured_values(report));
  fmt::print("{}", summary_text(report));
  if (!o.report.empty() && !write_report(o.report, report)) {
    fmt::print(stderr, "scenert loadtest: cannot write the report to {}\n", o.report);
    return exit_usage;
  }
  return report.violation_count || !report.missed_thresholds.empty() ? exit_invariant_broken : exit_ok;
}

}  // namespace scenert::apps
