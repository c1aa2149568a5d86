#pragma once
/// What the player store did, for /metrics: a player_store in front of the process's own that counts
/// its grants by outcome and times each one from write() to its answer (durable, or why not).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include <scenert/admin/prometheus_text.hpp>
#include <scenert/runtime/log_histogram.hpp>
#include <scenert/runtime/metrics.hpp>
#include <scenert/scene/player_store.hpp>

namespace scenert::admin {

/// The measured store's counts at one instant.
struct store_measures {
  std::uint64_t written = 0;  ///< grants applied now
  std::uint64_t repeats = 0;  ///< grants whose id was applied before: not applied again
  std::uint64_t failed = 0;   ///< grants not applied (no account, a bad grant, the disk or server, closed)
  std::uint64_t commits =
      0;  ///< the store's own writes: SQLite transactions, or the cluster's account writes
  histogram_snapshot grant_latency;  ///< write() to its answer, every grant
};

/// Passes every call to `inner` (which must outlive it) and measures its grants. The answers are
/// timed on the store's thread, the one that calls them (one writer of the histogram).
/// Thread-safety: the player_store calls and measures() from any thread.
class measured_store final : public player_store {
 public:
  /// `commits`: reads the inner store's own count of writes (null: none).
  explicit measured_store(player_store& inner, std::function<std::uint64_t()> commits = {});

  void sign_in(player_id player, std::string owner, holdings_done done) override;
  void sign_out(player_id player) override;
  void write(grant g, grant_done done) override;
  void read(std::string owner, holdings_done done) override;

  /// The counts and the latency histogram now.
  [[nodiscard]] store_measures measures() const;

 private:
  // 8 buckets per power of two from 1 µs to about 69 s.
  using latency_histogram = log_histogram<3, 10, 36, std::uint64_t>;

  player_store& inner_;
  std::function<std::uint64_t()> commits_;
  std::atomic<std::uint64_t> written_{0}, repeats_{0}, failed_{0};
  std::unique_ptr<latency_histogram> latency_ = std::make_unique<latency_histogram>();
};

/// The store's families: scenert_store_grants_total by outcome, scenert_store_commits_total and the
/// scenert_store_grant_seconds histogram.
void render_store_metrics(prometheus_text& out, const store_measures& m);

}  // namespace scenert::admin
