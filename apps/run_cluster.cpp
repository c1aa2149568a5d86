#include "run_cluster.hpp"

#include "prometheus_text.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include <scenert/cluster/cluster_directory.hpp>
#include <scenert/cluster/line_store.hpp>

namespace scenert::apps {

using namespace scenert::cluster;

// The buckets every node and gateway of a cluster shares.
constexpr const char* nodes_bucket = "scenert-nodes";
constexpr const char* lines_bucket = "scenert-lines";

std::optional<scene_table> hosted_part(const scene_table& table, const std::vector<std::string>& kinds) {
  auto wanted = [&kinds](scene_kind k) {
    return std::find(kinds.begin(), kinds.end(), scene_kind_names[static_cast<std::size_t>(k)]) !=
           kinds.end();
  };
  scene_table part = table;
  std::erase_if(part.scenes, [&](const scene_def& s) {
    if (s.kind != scene_kind::space) return !wanted(s.kind);
    const scene_def* town = table.find_scene(s.space->bind_town);
    return town == nullptr || !wanted(town->kind);
  });
  if (part.scenes.empty()) return std::nullopt;
  return part;
}

cluster_result<std::unique_ptr<cluster_node>> cluster_node::join(const scene_table& table,
                                                                 const node_options& o) {
  link_options lo;
  lo.url = o.url;
  lo.name = o.name;
  auto link = nats_link::connect(lo);
  if (!link) return link.error();
  auto nodes = (*link)->bucket(nodes_bucket);
  if (!nodes) return nodes.error();
  auto lines = (*link)->bucket(lines_bucket);
  if (!lines) return lines.error();
  auto lease = node_lease::join(*nodes, o.name, 0, o.scenes);
  if (!lease) return lease.error();
  auto node = std::unique_ptr<cluster_node>(
      new cluster_node(o, std::move(link).value(), *nodes, *lines, std::move(lease).value()));
  cluster_directory_options dopt;
  dopt.warn = [](std::string_view what) { spdlog::warn("{}", what); };
  dopt.linked = [l = node->link_.get()] { return l->connected(); };
  auto directory =
      make_synced_cluster_directory(table, line_store(*lines), node->lease_.record(), std::move(dopt));
  node->directory_ = std::move(directory.directory);
  node->counts_ = std::move(directory.counts);
  node->next_beat_ = std::chrono::steady_clock::now() + o.beat;
  node->link_ups_ = node->link_->reconnects();
  return node;
}

bool cluster_node::poll(std::uint32_t load, std::chrono::steady_clock::time_point now) {
  if (now < next_beat_) return true;
  next_beat_ = now + opt_.beat;
  // Nobody could beat across a link outage, and the others reconnect when they can (one may come
  // back a while after this node): silence counts again only dead_after after it is noticed.
  if (const auto ups = link_->reconnects(); ups != link_ups_) {
    link_ups_ = ups;
    watch_.restart(now + opt_.dead_after);
  }
  if (auto beat = lease_.beat(load); !beat) {
    beat_failures_.fetch_add(1, std::memory_order_relaxed);
    if (beat.code() == cluster_errc::fenced) {
      spdlog::error("{}: this node stops serving", beat.error().message);
      return false;
    }
    spdlog::warn("{}", beat.error().message);  // the server is away: nobody can declare us meanwhile
    watch_.restart(now + opt_.dead_after);
    return true;
  }
  beats_.fetch_add(1, std::memory_order_relaxed);
  watch_others(now);
  // Once per beat, only the lines whose count changed: the world's thread never waits for this.
  line_counts_written_.fetch_add(counts_->sync(), std::memory_order_relaxed);
  return true;
}

// A node whose record stood still for dead_after is declared dead (one watcher wins) and loses its
// lines; its players are placed again by their gateways.
void cluster_node::watch_others(std::chrono::steady_clock::time_point now) {
  auto all = list_nodes(nodes_);
  if (!all) {
    watch_.restart(now + opt_.dead_after);
    return spdlog::warn("{}", all.error().message);
  }
  watch_.saw(*all, now);
  for (const auto& silent : watch_.silent(now, opt_.dead_after)) {
    if (silent.record.name == self().name) continue;
    auto dead = declare_dead(nodes_, silent.record.name, silent.revision);
    if (!dead) continue;  // it beat meanwhile, or another watcher was first
    auto taken = line_store(lines_).tombstone(dead->record.name, dead->record.epoch);
    if (!taken) {
      spdlog::error("declared node {} (epoch {}) dead but could not take its lines: {}", dead->record.name,
                    dead->record.epoch, taken.error().message);
      continue;
    }
    declared_dead_.fetch_add(1, std::memory_order_relaxed);
    tombstoned_.fetch_add(taken->size(), std::memory_order_relaxed);
    spdlog::warn("node {} (epoch {}) silent for {} ms: declared dead, {} of its lines tombstoned",
                 dead->record.name, dead->record.epoch, opt_.dead_after.count(), taken->size());
  }
}

void cluster_node::render_metrics(prometheus_text& out) const {
  auto load = [](const std::atomic<std::uint64_t>& n) {
    return static_cast<double>(n.load(std::memory_order_relaxed));
  };
  out.gauge("scenert_cluster_epoch", "This node's epoch (one more at each join of its name).",
            static_cast<double>(self().epoch));
  out.gauge("scenert_cluster_connected", "1 while the link to the NATS server is up.",
            link_->connected() ? 1 : 0);
  out.counter("scenert_cluster_link_reconnects_total", "Times the link to the NATS server came back.",
              static_cast<double>(link_->reconnects()));
  out.counter("scenert_cluster_beats_total", "Heartbeats written.", load(beats_));
  out.counter("scenert_cluster_beat_failures_total",
              "Heartbeats refused or unanswered (the server away, or fenced).", load(beat_failures_));
  out.counter("scenert_cluster_nodes_declared_dead_total", "Silent nodes this node declared dead.",
              load(declared_dead_));
  out.counter("scenert_cluster_lines_tombstoned_total", "Lines this node took from nodes it declared dead.",
              load(tombstoned_));
  out.counter("scenert_cluster_line_counts_written_total",
              "Player counts of this node's lines written to the store (once a beat, when changed).",
              load(line_counts_written_));
}

void render_endpoint_metrics(prometheus_text& out, const cluster::node_endpoint_stats& s) {
  auto c = [](std::uint64_t n) { return static_cast<double>(n); };
  out.gauge("scenert_cluster_gateways", "Gateways heard from (beats or requests) and alive now.", s.gateways);
  out.counter("scenert_cluster_request_batches_total", "Batches of requests heard from gateways.",
              c(s.request_batches));
  out.counter("scenert_cluster_requests_total", "Requests heard from gateways.", c(s.requests));
  out.counter("scenert_cluster_claims_total", "Gateways' claims of players whose clients resumed there.",
              c(s.claims));
  out.counter("scenert_cluster_gateways_lost_total", "Gateways that fell silent past --dead-after-ms.",
              c(s.gateways_lost));
  out.counter("scenert_cluster_players_abandoned_total",
              "Players of lost gateways that no client claimed within resume_ms: taken off the world.",
              c(s.players_abandoned));
  out.counter("scenert_cluster_handoffs_out_total", "Players handed over to another node (journeys).",
              c(s.handoffs_out));
  out.counter("scenert_cluster_handoffs_in_total", "Players handed over to this node by another.",
              c(s.handoffs_in));
  out.counter("scenert_cluster_handoffs_failed_total",
              "Hand-overs from this node refused there or not answered within a second: the player stayed.",
              c(s.handoffs_failed));
  out.counter("scenert_cluster_releases_said_again_total",
              "Releases of given-up hand-overs said again because their node had not confirmed them yet.",
              c(s.releases_again));
}

void cluster_node::leave() {
  if (auto gone = declare_dead(nodes_, self().name, lease_.revision()); !gone)
    spdlog::warn("leaving the cluster: {}", gone.error().message);
}

}  // namespace scenert::apps
