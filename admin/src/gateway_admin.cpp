// A gateway's admin endpoint (`scenert gateway --admin`).
#include <scenert/admin/gateway_admin.hpp>
#include <scenert/admin/world_admin.hpp>

namespace scenert::admin {

void render_gateway_metrics(prometheus_text& out, const cluster::gateway_stats& g) {
  auto c = [](std::uint64_t n) { return static_cast<double>(n); };
  const cluster::remote_world_stats& s = g.world;
  out.gauge("scenert_gateway_connected", "1 while the link to the NATS server is up.", g.connected ? 1 : 0);
  out.counter("scenert_gateway_link_reconnects_total", "Times the link to the NATS server came back.",
              c(g.reconnects));
  out.gauge("scenert_gateway_live_nodes", "Scene nodes alive at the last read of the nodes' bucket.",
            s.live_nodes);
  out.gauge("scenert_gateway_players", "Players whose requests go to a known node.", s.players);
  out.counter("scenert_gateway_request_batches_total", "Batches of requests sent to nodes.",
              c(s.request_batches));
  out.counter("scenert_gateway_requests_total", "Requests sent to nodes.", c(s.requests));
  out.counter("scenert_gateway_answers_total", "Answers heard from nodes.", c(s.answers));
  out.counter("scenert_gateway_answer_timeouts_total",
              "Requests answered node_unavailable after the timeout.", c(s.timeouts));
  out.counter("scenert_gateway_no_node_total", "Requests refused because no scene node was alive.",
              c(s.no_node));
  out.counter("scenert_gateway_event_batches_total", "Line event batches heard.", c(s.event_batches));
  out.counter("scenert_gateway_event_gaps_total", "Lines whose batches skipped (events lost).", c(s.gaps));
  out.counter("scenert_gateway_from_dead_starts_total",
              "Event batches and views from a start of a node declared dead, not heard.",
              c(s.from_dead_starts));
  out.counter("scenert_gateway_unplaced_total",
              "Requests refused for a player standing on no node yet (its placement again under way).",
              c(s.unplaced));
  out.counter("scenert_gateway_views_asked_total", "Nodes asked for their lines as they stand.",
              c(s.views_asked));
  out.counter("scenert_gateway_views_applied_total", "Nodes' lines as they stand, applied.",
              c(s.views_applied));
  out.counter("scenert_gateway_event_batches_dropped_total",
              "Line event batches the NATS client dropped because the gateway fell behind.", c(s.dropped));
  out.counter("scenert_gateway_bad_messages_total", "Messages from nodes that did not decode.",
              c(s.bad_messages));
  out.counter("scenert_gateway_nodes_lost_total", "Scene nodes declared dead while this gateway watched.",
              c(s.nodes_lost));
  out.counter("scenert_gateway_claims_total",
              "Players taken over from another gateway (their clients resumed here).", c(s.claims));
  out.counter("scenert_gateway_claims_refused_total",
              "Resume tokens no gateway held (unknown, or their player was gone): logged in afresh.",
              c(s.claims_refused));
  out.counter("scenert_gateway_claimed_elsewhere_total",
              "This gateway's players taken over by another gateway.", c(s.claimed_elsewhere));
  out.counter("scenert_gateway_players_placed_again_total",
              "Players of this gateway whose node died, placed again.", c(s.players_orphaned));
  out.counter("scenert_gateway_journeys_total",
              "Players taken to a line or a team-mate on another node (handed over between nodes).",
              c(s.journeys));
  out.counter("scenert_gateway_journeys_failed_total",
              "Journeys refused by the target node or not seen through: the player stayed where it was.",
              c(s.journeys_failed));
  out.counter("scenert_gateway_entries_to_room_total",
              "Entries and scene changes sent to the node of the line with room the scene's policy picked.",
              c(s.entries_to_room));
  out.counter("scenert_gateway_entries_to_new_line_total",
              "Entries and scene changes sent where a line opens (every line of the scene was full).",
              c(s.entries_to_new_line));
  out.counter("scenert_gateway_entries_sent_again_total",
              "Entries of players standing nowhere yet sent to a live node because theirs was declared dead.",
              c(s.sent_again));
}

admin_handlers gateway_admin_handlers(const cluster::gateway& gateway, const std::atomic<bool>& stopping) {
  admin_handlers h;
  h.livez = [] { return admin_response{200, "text/plain; charset=utf-8", "ok\n"}; };
  h.readyz = [&stopping] {
    return stopping.load() ? admin_response{503, "text/plain; charset=utf-8", "shutting down\n"}
                           : admin_response{200, "text/plain; charset=utf-8", "ready\n"};
  };
  h.metrics = [&gateway] {
    prometheus_text out;
    const auto s = gateway.stats();
    render_front_metrics(out, s.front);
    render_gateway_metrics(out, s);
    return admin_response{200, "text/plain; version=0.0.4; charset=utf-8", out.text()};
  };
  return h;
}

}  // namespace scenert::admin
