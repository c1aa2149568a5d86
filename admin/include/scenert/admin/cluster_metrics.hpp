#pragma once
/// A scene node's scenert_cluster_* families for /metrics.

#include <scenert/admin/prometheus_text.hpp>
#include <scenert/cluster/scene_node.hpp>

namespace scenert::admin {

/// The node's lease, beats and watch, and its endpoint toward the gateways.
void render_node_metrics(prometheus_text& out, const cluster::scene_node_stats& s);

}  // namespace scenert::admin
