// bench_store: the player store's writes per second and the latency of a grant from write() to its
// answer (committed, durable), at a given offered rate or flat out. A line adds at most one of its
// ticks to that (the answer waits in its mailbox for the next tick) before the client's 1013 leaves.
// `--store cluster` measures the cluster's store (a JetStream bucket on the NATS server at --cluster)
// the same way. Prints one JSON object.
#include <scenert/cluster/kv_player_store.hpp>
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
  std::string store = "sqlite";  // or "cluster"
  std::string cluster = "nats://127.0.0.1:4222";
  std::string bucket = "bench-players";
};

// What either store counted: writes are the SQLite store's commits, the cluster store's account writes.
struct counted {
  std::uint64_t grants = 0, repeats = 0, failed = 0, writes = 0, write_ns = 0, conflicts = 0;
};

double percentile(std::vector<std::int64_t>& v, double p) {
  if (v.empty()) return 0;
  auto at = v.begin() + static_cast<std::ptrdiff_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), at, v.end());
  return static_cast<double>(*at) / 1000.0;
}

// One JSON object: the rate, what was written, and the latency's percentiles in microseconds.
void print_report(const options& o, const counted& s, std::vector<std::int64_t>& latency_ns, double elapsed) {
  const double p50 = percentile(latency_ns, 0.50), p99 = percentile(latency_ns, 0.99);
  const double max =
      latency_ns.empty()
          ? 0
          : static_cast<double>(*std::max_element(latency_ns.begin(), latency_ns.end())) / 1000.0;
  std::printf(
      "{\"bench\":\"store\",\"store\":\"%s\",\"rate\":%.0f,\"grants\":%llu,\"failed\":%llu,\"seconds\":%.2f,"
      "\"writes_per_s\":%.0f,\"commits\":%llu,\"grants_per_commit\":%.1f,\"p50_us\":%.0f,\"p99_us\":%.0f,"
      "\"max_us\":%.0f,\"mean_commit_us\":%.0f,\"conflicts\":%llu}\n",
      o.store.c_str(), o.rate, static_cast<unsigned long long>(s.grants),
      static_cast<unsigned long long>(s.failed), elapsed, static_cast<double>(s.grants) / elapsed,
      static_cast<unsigned long long>(s.writes),
      s.writes ? static_cast<double>(s.grants) / static_cast<double>(s.writes) : 0.0, p50, p99, max,
      s.writes ? static_cast<double>(s.write_ns) / static_cast<double>(s.writes) / 1000.0 : 0.0,
      static_cast<unsigned long long>(s.conflicts));
}

// Offers grants at the rate (or 20,000 in flight) for the seconds; the latencies, on the store's thread.
std::vector<std::int64_t> offer(const options& o, scenert::player_store& store, const std::string& run) {
  for (std::uint32_t p = 1; p <= o.players; ++p)
    store.sign_in(p, fmt::format("player-{}", p), [](scenert::holdings) {});
  std::vector<std::int64_t> latency_ns;  // the store's thread's, read after stop()
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
      store.write(
          {fmt::format("bench-{}-{}", run, sent), static_cast<scenert::player_id>(sent % o.players + 1),
           static_cast<scenert::item_id>(1 + sent % 7), 1},
          [&, issued = steady::now()](scenert::grant_receipt) {
            latency_ns.push_back(std::chrono::nanoseconds(steady::now() - issued).count());
            in_flight.fetch_sub(1, std::memory_order_relaxed);
          });
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // the load's pace, not a hand-over
  }
  return latency_ns;
}

int bench_sqlite(options& o) {
  const bool temporary = o.file.empty();
  if (temporary)
    o.file =
        (std::filesystem::temp_directory_path() / fmt::format("bench_store-{}.sqlite", ::getpid())).string();
  auto opened = scenert::store::sqlite_store::open(o.file);
  if (!opened) {
    std::fprintf(stderr, "%s\n", opened.error().message.c_str());
    return 2;
  }
  const auto begun = steady::now();
  auto latency_ns = offer(o, **opened, std::to_string(::getpid()));
  (*opened)->stop();
  const double elapsed = std::chrono::duration<double>(steady::now() - begun).count();
  const auto s = (*opened)->stats();
  print_report(o, {s.grants, s.repeats, s.failed, s.commits, s.commit_ns, 0}, latency_ns, elapsed);
  opened->reset();
  if (temporary)
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(o.file + suffix);
  return 0;
}

int bench_cluster(const options& o) {
  scenert::cluster::kv_store_options ko;
  ko.url = o.cluster;
  ko.name = "bench_store";
  ko.bucket = o.bucket;
  auto opened = scenert::cluster::kv_player_store::open(ko);
  if (!opened) {
    std::fprintf(stderr, "%s\n", opened.error().message.c_str());
    return 2;
  }
  const auto begun = steady::now();
  // Ids of their own per run: a bucket kept from an earlier run takes them as new grants.
  auto latency_ns = offer(o, **opened, fmt::format("{}-{}", ::getpid(), begun.time_since_epoch().count()));
  (*opened)->stop();
  const double elapsed = std::chrono::duration<double>(steady::now() - begun).count();
  const auto s = (*opened)->stats();
  print_report(o, {s.grants, s.repeats, s.failed, s.writes, s.write_ns, s.conflicts}, latency_ns, elapsed);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app{"bench_store: the player store's writes per second and grant latency"};
  app.add_option("--players", o.players, "Accounts the grants go to")->check(CLI::Range(1u, 1'000'000u));
  app.add_option("--rate", o.rate, "Grants a second offered (0: flat out)")->check(CLI::Range(0.0, 1e7));
  app.add_option("--seconds", o.seconds, "How long grants are offered")->check(CLI::Range(0.05, 3600.0));
  app.add_option("--file", o.file, "The store's file (default: a fresh one in the temp folder, removed)");
  app.add_option("--store", o.store, "sqlite (a file, default) or cluster (a JetStream bucket at --cluster)")
      ->check(CLI::IsMember({"sqlite", "cluster"}));
  app.add_option("--cluster", o.cluster, "The NATS server of --store cluster (JetStream on)");
  app.add_option("--bucket", o.bucket, "The bucket of --store cluster (default bench-players)");
  scenert::bench::parse_or_exit(app, argc, argv);
  return o.store == "cluster" ? bench_cluster(o) : bench_sqlite(o);
}
