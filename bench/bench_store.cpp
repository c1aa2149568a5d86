// bench_store: the player store's writes per second and the latency of a grant from write() to its
// answer (committed, durable), at a given offered rate or flat out. A line adds at most one of its
// ticks to that (the answer waits in its mailbox for the next tick) before the client's 1013 leaves.
// Prints one JSON object.
#include <scenert/store/sqlite_store.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "bench_cli.hpp"

namespace {

using steady = std::chrono::steady_clock;

struct options {
  std::uint32_t players = 100;
  double rate = 0;  // grants a second offered; 0: as fast as the store answers, 20,000 in flight
  double seconds = 2;
  std::string file;
};

double percentile(std::vector<std::int64_t>& v, double p) {
  if (v.empty()) return 0;
  auto at = v.begin() + static_cast<std::ptrdiff_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), at, v.end());
  return static_cast<double>(*at) / 1000.0;
}

// One JSON object: the rate, what was written, and the latency's percentiles in microseconds.
void print_report(const options& o, const scenert::store::store_stats& s,
                  std::vector<std::int64_t>& latency_ns, double elapsed) {
  const double p50 = percentile(latency_ns, 0.50), p99 = percentile(latency_ns, 0.99);
  const double max =
      latency_ns.empty()
          ? 0
          : static_cast<double>(*std::max_element(latency_ns.begin(), latency_ns.end())) / 1000.0;
  std::printf(
      "{\"bench\":\"store\",\"rate\":%.0f,\"grants\":%llu,\"seconds\":%.2f,\"writes_per_s\":%.0f,"
      "\"commits\":%llu,\"grants_per_commit\":%.1f,\"p50_us\":%.0f,\"p99_us\":%.0f,\"max_us\":%.0f,"
      "\"mean_commit_us\":%.0f}\n",
      o.rate, static_cast<unsigned long long>(s.grants), elapsed, static_cast<double>(s.grants) / elapsed,
      static_cast<unsigned long long>(s.commits),
      s.commits ? static_cast<double>(s.grants) / static_cast<double>(s.commits) : 0.0, p50, p99, max,
      s.commits ? static_cast<double>(s.commit_ns) / static_cast<double>(s.commits) / 1000.0 : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app{"bench_store: the player store's writes per second and grant latency"};
  app.add_option("--players", o.players, "Accounts the grants go to")->check(CLI::Range(1u, 1'000'000u));
  app.add_option("--rate", o.rate, "Grants a second offered (0: flat out)")->check(CLI::Range(0.0, 1e7));
  app.add_option("--seconds", o.seconds, "How long grants are offered")->check(CLI::Range(0.05, 3600.0));
  app.add_option("--file", o.file, "The store's file (default: a fresh one in the temp folder, removed)");
  scenert::bench::parse_or_exit(app, argc, argv);
  const bool temporary = o.file.empty();
  if (temporary)
    o.file =
        (std::filesystem::temp_directory_path() / fmt::format("bench_store-{}.sqlite", ::getpid())).string();
  auto opened = scenert::store::sqlite_store::open(o.file);
  if (!opened) {
    std::fprintf(stderr, "%s\n", opened.error().message.c_str());
    return 2;
  }
  auto& store = **opened;
  for (std::uint32_t p = 1; p <= o.players; ++p)
    store.sign_in(p, fmt::format("player-{}", p), [](scenert::holdings) {});
  std::vector<std::int64_t> latency_ns;  // the writer thread's, read after stop()
  std::atomic<std::int64_t> in_flight{0};
  std::uint64_t sent = 0;
  const auto begun = steady::now();
  const auto until =
      begun + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(o.seconds));
  for (auto now = begun; now < until; now = steady::now()) {
    const auto due =
        o.rate > 0 ? static_cast<std::uint64_t>(o.rate * std::chrono::duration<double>(now - begun).count())
                   : sent + static_cast<std::uint64_t>(std::max<std::int64_t>(0, 20'000 - in_flight.load()));
    for (; sent < due; ++sent) {
      in_flight.fetch_add(1, std::memory_order_relaxed);
      store.write({fmt::format("bench-{}-{}", ::getpid(), sent), sent % o.players + 1,
                   static_cast<scenert::item_id>(1 + sent % 7), 1},
                  [&, issued = steady::now()](scenert::grant_receipt) {
                    latency_ns.push_back(std::chrono::nanoseconds(steady::now() - issued).count());
                    in_flight.fetch_sub(1, std::memory_order_relaxed);
                  });
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // the load's pace, not a hand-over
  }
  store.stop();
  const double elapsed = std::chrono::duration<double>(steady::now() - begun).count();
  const auto s = store.stats();
  print_report(o, s, latency_ns, elapsed);
  opened->reset();
  if (temporary)
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(o.file + suffix);
  return 0;
}
