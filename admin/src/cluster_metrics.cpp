#include <scenert/admin/cluster_metrics.hpp>

namespace scenert::admin {
namespace {

void render_lease_metrics(prometheus_text& out, const cluster::scene_node_stats& s) {
  auto c = [](std::uint64_t n) { return static_cast<double>(n); };
  out.gauge("scenert_cluster_epoch", "This node's epoch (one more at each join of its name).", c(s.epoch));
  out.gauge("scenert_cluster_connected", "1 while the link to the NATS server is up.", s.connected ? 1 : 0);
  out.counter("scenert_cluster_link_reconnects_total", "Times the link to the NATS server came back.",
              c(s.link_reconnects));
  out.counter("scenert_cluster_beats_total", "Heartbeats written.", c(s.beats));
  out.counter("scenert_cluster_beat_failures_total",
              "Heartbeats refused or unanswered (the server away, or fenced).", c(s.beat_failures));
  out.counter("scenert_cluster_nodes_declared_dead_total", "Silent nodes this node declared dead.",
              c(s.declared_dead));
  out.counter("scenert_cluster_lines_tombstoned_total", "Lines this node took from nodes it declared dead.",
              c(s.tombstoned));
  out.counter("scenert_cluster_line_counts_written_total",
              "Player counts of this node's lines written to the store (once a beat, when changed).",
              c(s.line_counts_written));
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

}  // namespace

void render_node_metrics(prometheus_text& out, const cluster::scene_node_stats& s) {
  render_lease_metrics(out, s);
  render_endpoint_metrics(out, s.endpoint);
}

}  // namespace scenert::admin
