#include <scenert/bots/own_load.hpp>

#include "own_load_json.hpp"

#include <fmt/format.h>

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>

namespace scenert::bots {
namespace {

double ms_of(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

double seconds_of(const rusage& u) {
  const auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return s(u.ru_utime) + s(u.ru_stime);
}

double cpu_seconds_of(int who) noexcept {
  rusage u{};
  return getrusage(who, &u) == 0 ? seconds_of(u) : 0;
}

// The larger of the two lags' p99: what a frame may have waited in the bots' process.
std::int64_t lag_p99(const own_load& o) {
  return std::max(o.read_lag.quantile(0.99), o.loop_lag.quantile(0.99));
}

std::string lag_line(std::string_view name, const latency_histogram& h) {
  if (h.total() == 0) return fmt::format("  {:<24} not measured\n", name);
  return fmt::format("  {:<24} {:>9} {:>9.2f} {:>9.2f} {:>9.2f}\n", name, h.total(), ms_of(h.quantile(0.5)),
                     ms_of(h.quantile(0.99)), ms_of(h.max()));
}

nlohmann::json lag_json(const latency_histogram& h) {
  return {{"count", h.total()},
          {"p50_ms", ms_of(h.quantile(0.5))},
          {"p99_ms", ms_of(h.quantile(0.99))},
          {"max_ms", ms_of(h.max())}};
}

}  // namespace

void own_load::merge(const own_load& worker) noexcept {
  read_lag.merge(worker.read_lag);
  loop_lag.merge(worker.loop_lag);
  if (worker.busiest_thread_cpu_seconds + worker.busiest_thread_wait_seconds >
      busiest_thread_cpu_seconds + busiest_thread_wait_seconds) {
    busiest_thread_cpu_seconds = worker.busiest_thread_cpu_seconds;
    busiest_thread_wait_seconds = worker.busiest_thread_wait_seconds;
  }
}

double busy_share(const own_load& o) noexcept {
  return o.wall_seconds > 0 && o.cores > 0 ? o.cpu_seconds / o.wall_seconds / o.cores : 0;
}

double busiest_thread_share(const own_load& o) noexcept {
  return o.wall_seconds > 0 ? o.busiest_thread_cpu_seconds / o.wall_seconds : 0;
}

double busiest_thread_wait_share(const own_load& o) noexcept {
  return o.wall_seconds > 0 ? o.busiest_thread_wait_seconds / o.wall_seconds : 0;
}

std::vector<std::string> own_load_warnings(const own_load& o, const latency_histogram& move_to_viewer) {
  std::vector<std::string> out;
  const auto tail = " (latency figures include the load generator's own lag)";
  if (busy_share(o) >= full_core_share)
    out.push_back(fmt::format("the bots' {} core{} {} {:.0f}% busy{}", o.cores, o.cores == 1 ? "" : "s",
                              o.cores == 1 ? "was" : "were", 100 * busy_share(o), tail));
  else if (const double wanted = busiest_thread_share(o) + busiest_thread_wait_share(o);
           wanted >= full_core_share || busiest_thread_wait_share(o) >= long_core_wait_share)
    out.push_back(
        fmt::format("a bots worker thread wanted its core {:.0f}% of the run (ran {:.0f}%, waited {:.0f}% "
                    "for it){}",
                    100 * wanted, 100 * busiest_thread_share(o), 100 * busiest_thread_wait_share(o), tail));
  const auto move_p99 = move_to_viewer.quantile(0.99);
  if (move_p99 > 0 && static_cast<double>(lag_p99(o)) >= large_lag_share * static_cast<double>(move_p99))
    out.push_back(fmt::format(
        "the bots' own lag p99 {:.1f} ms is {:.0f}% of the move-to-viewer p99 {:.1f} ms{}", ms_of(lag_p99(o)),
        100.0 * static_cast<double>(lag_p99(o)) / static_cast<double>(move_p99), ms_of(move_p99), tail));
  return out;
}

std::string own_load_text(const own_load& o, const latency_histogram& move_to_viewer) {
  std::string out =
      fmt::format("{:<26} {:>9} {:>9} {:>9} {:>9}\n", "bots' own lag (ms)", "count", "p50", "p99", "max");
  out += lag_line("frame waiting to be read", o.read_lag);
  out += lag_line("worker loop late", o.loop_lag);
  out += fmt::format(
      "bots' cpu   {:.2f} s over {:.1f} s: {:.0f}% of {} core{}; busiest worker thread ran {:.0f}%, waited "
      "{:.0f}% for its core\n",
      o.cpu_seconds, o.wall_seconds, 100 * busy_share(o), o.cores, o.cores == 1 ? "" : "s",
      100 * busiest_thread_share(o), 100 * busiest_thread_wait_share(o));
  for (const auto& w : own_load_warnings(o, move_to_viewer)) out += fmt::format("warning:    {}\n", w);
  return out;
}

nlohmann::json own_load_json(const own_load& o, const latency_histogram& move_to_viewer) {
  return {{"read_lag", lag_json(o.read_lag)},
          {"loop_lag", lag_json(o.loop_lag)},
          {"cpu_seconds", o.cpu_seconds},
          {"wall_seconds", o.wall_seconds},
          {"cores", o.cores},
          {"busy_share", busy_share(o)},
          {"busiest_thread_share", busiest_thread_share(o)},
          {"busiest_thread_wait_share", busiest_thread_wait_share(o)},
          {"warnings", own_load_warnings(o, move_to_viewer)}};
}

double process_cpu_seconds() noexcept { return cpu_seconds_of(RUSAGE_SELF); }

double thread_cpu_seconds() noexcept { return cpu_seconds_of(RUSAGE_THREAD); }

double thread_wait_seconds() noexcept {
  std::ifstream stats("/proc/thread-self/schedstat");  // ran ns, waited ns, time slices
  long long ran = 0, waited = 0;
  return stats >> ran >> waited ? static_cast<double>(waited) / 1e9 : 0;
}

unsigned allowed_cores() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set)) : 0;
}

}  // namespace scenert::bots
