#pragma once
/// A gateway's admin endpoint: /livez, /readyz and /metrics (its front's scenert_net_* families and its
/// scenert_gateway_* ones).

#include <atomic>

#include <scenert/admin/prometheus_text.hpp>
#include <scenert/admin/server.hpp>
#include <scenert/cluster/gateway.hpp>

namespace scenert::admin {

/// The gateway's link, nodes, requests, line events, claims and journeys as scenert_gateway_*.
void render_gateway_metrics(prometheus_text& out, const cluster::gateway_stats& g);

/// /livez, /readyz (503 once `stopping` is set) and /metrics of `gateway`; both must outlive the server.
admin_handlers gateway_admin_handlers(const cluster::gateway& gateway, const std::atomic<bool>& stopping);

}  // namespace scenert::admin
