// A gateway's /metrics families, from its stats alone (no gateway, no server).
#include <scenert/admin/gateway_admin.hpp>

#include <gtest/gtest.h>

#include <string>

namespace scenert::admin {
namespace {

TEST(GatewayMetrics, EachStatHasItsFamilyWithItsValue) {
  cluster::gateway_stats g;
  g.connected = true;
  g.reconnects = 2;
  g.world.journeys = 7;
  g.world.journeys_failed = 1;
  g.world.claims = 3;
  g.world.live_nodes = 2;
  prometheus_text out;
  render_gateway_metrics(out, g);
  const std::string text = out.text();
  for (const char* line : {"scenert_gateway_connected 1\n", "scenert_gateway_link_reconnects_total 2\n",
                           "scenert_gateway_journeys_total 7\n", "scenert_gateway_journeys_failed_total 1\n",
                           "scenert_gateway_claims_total 3\n", "scenert_gateway_live_nodes 2\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "in\n" << text;
  EXPECT_NE(text.find("# TYPE scenert_gateway_journeys_total counter\n"), std::string::npos);
}

}  // namespace
}  // namespace scenert::admin
