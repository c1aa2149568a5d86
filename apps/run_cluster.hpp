#pragma once
// `scenert run --cluster URL --node NAME`: a scene node's part in the cluster, driven by run's loop.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/cluster/kv_bucket.hpp>
#include <scenert/cluster/nats_link.hpp>
#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/cluster/node_lease.hpp>
#include <scenert/config/scene_table.hpp>
#include <scenert/scene/line_directory.hpp>

namespace scenert::cluster {
class player_count_sync;
}

namespace scenert::apps {

class prometheus_text;

struct node_options {
  std::string url;   ///< the NATS server, nats://HOST:PORT
  std::string name;  ///< this node's name in the cluster
  std::chrono::milliseconds beat{1000};
  std::chrono::milliseconds dead_after{3000};  ///< a node silent this long is declared dead
  std::vector<scene_id> scenes;                ///< the scenes it hosts; empty: every scene
};

/// The part of the table a node hosts (`--hosts town,field`): the scenes of those kinds, and the
/// spaces bound to the towns among them (phases live on their town's lines). None when no scene
/// is left.
[[nodiscard]] std::optional<scene_table> hosted_part(const scene_table& table,
                                                     const std::vector<std::string>& kinds);

/// Joins the cluster (a lease with a new epoch), hands the world its line directory, beats, and
/// watches the other nodes: one silent for `dead_after` is declared dead and its lines tombstoned.
/// Thread-safety: poll() and leave() from one thread; the directory is the world's.
class cluster_node {
 public:
  [[nodiscard]] static cluster::cluster_result<std::unique_ptr<cluster_node>> join(
      const scene_table& table, const node_options& options);
  /// The world's line directory (once).
  [[nodiscard]] std::shared_ptr<line_directory> take_directory() { return std::move(directory_); }
  /// Beats when due, looks at the others and writes its lines' player counts that changed; false
  /// once this node is fenced: it must stop serving.
  [[nodiscard]] bool poll(std::uint32_t load, std::chrono::steady_clock::time_point now);
  /// A clean stop: the node says it is gone, so that nobody waits for its silence.
  void leave();
  [[nodiscard]] const cluster::node_record& self() const noexcept { return lease_.record(); }
  /// The node's link, for its endpoint toward the gateways.
  [[nodiscard]] cluster::nats_link& link() noexcept { return *link_; }
  /// The node's scenert_cluster_* families for /metrics (any thread).
  void render_metrics(prometheus_text& out) const;

 private:
  cluster_node(node_options o, std::unique_ptr<cluster::nats_link> link, cluster::kv_bucket nodes,
               cluster::kv_bucket lines, cluster::node_lease lease)
      : opt_(std::move(o)),
        link_(std::move(link)),
        nodes_(std::move(nodes)),
        lines_(std::move(lines)),
        lease_(std::move(lease)) {}
  void watch_others(std::chrono::steady_clock::time_point now);

  node_options opt_;
  std::unique_ptr<cluster::nats_link> link_;
  cluster::kv_bucket nodes_, lines_;
  cluster::node_lease lease_;
  cluster::heartbeat_watch watch_;
  std::shared_ptr<line_directory> directory_;
  std::shared_ptr<cluster::player_count_sync> counts_;  // the directory's, synced by poll()
  std::chrono::steady_clock::time_point next_beat_{};
  std::uint64_t link_ups_ = 0;  // the link's reconnects at the last beat
  // Counted by poll()'s thread, read by the admin endpoint's.
  std::atomic<std::uint64_t> beats_{0}, beat_failures_{0}, declared_dead_{0}, tombstoned_{0},
      line_counts_written_{0};
};

/// The node's scenert_cluster_* families about the gateways (their requests, claims, deaths).
void render_endpoint_metrics(prometheus_text& out, const cluster::node_endpoint_stats& s);

}  // namespace scenert::apps
