#include <scenert/admin/store_metrics.hpp>

#include <chrono>
#include <utility>

namespace scenert::admin {

using steady = std::chrono::steady_clock;

measured_store::measured_store(player_store& inner, std::function<std::uint64_t()> commits)
    : inner_(inner), commits_(std::move(commits)) {}

void measured_store::sign_in(player_id player, std::string owner, holdings_done done) {
  inner_.sign_in(player, std::move(owner), std::move(done));
}

void measured_store::sign_out(player_id player) { inner_.sign_out(player); }

void measured_store::read(std::string owner, holdings_done done) {
  inner_.read(std::move(owner), std::move(done));
}

void measured_store::write(grant g, grant_done done) {
  inner_.write(std::move(g), [this, done = std::move(done), asked = steady::now()](grant_receipt r) mutable {
    latency_->record(steady::now() - asked);  // on the store's thread: one writer
    auto& counted = r.code != store_errc::ok ? failed_ : r.repeated ? repeats_ : written_;
    counted.fetch_add(1, std::memory_order_relaxed);
    done(std::move(r));
  });
}

store_measures measured_store::measures() const {
  store_measures m;
  m.written = written_.load(std::memory_order_relaxed);
  m.repeats = repeats_.load(std::memory_order_relaxed);
  m.failed = failed_.load(std::memory_order_relaxed);
  m.commits = commits_ ? commits_() : 0;
  auto& h = m.grant_latency;
  for (unsigned i = 0; i < latency_histogram::bucket_count; ++i) {
    const auto n = latency_->count_at(i);
    if (i + 1 < latency_histogram::bucket_count)
      h.upper_bounds.emplace_back(latency_histogram::upper_bound(i));
    h.counts.push_back(n);
    h.count += n;
  }
  h.sum = std::chrono::nanoseconds(latency_->sum());
  h.max = std::chrono::nanoseconds(latency_->max());
  h.p50 = std::chrono::nanoseconds(latency_->quantile(0.50));
  h.p99 = std::chrono::nanoseconds(latency_->quantile(0.99));
  return m;
}

void render_store_metrics(prometheus_text& out, const store_measures& m) {
  const char* help = "Grants the player store answered, by outcome (repeat: its id was applied before).";
  out.counter("scenert_store_grants_total", help, static_cast<double>(m.written), {{"outcome", "written"}});
  out.counter("scenert_store_grants_total", help, static_cast<double>(m.repeats), {{"outcome", "repeat"}});
  out.counter("scenert_store_grants_total", help, static_cast<double>(m.failed), {{"outcome", "failed"}});
  out.counter("scenert_store_commits_total",
              "The store's own writes: SQLite transactions (group commits) or the cluster's account writes.",
              static_cast<double>(m.commits));
  out.histogram("scenert_store_grant_seconds",
                "A grant's time from its write to its answer (durable, or why not).", m.grant_latency);
}

}  // namespace scenert::admin
