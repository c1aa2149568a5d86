#include "admin_server.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

namespace scenert::apps {
namespace {

TEST(AdminEndpoint, ParsesHostAndPort) {
  auto e = parse_endpoint("127.0.0.1:9100");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 9100);
  EXPECT_EQ(parse_endpoint("localhost").code(), admin_errc::bad_endpoint);
  EXPECT_EQ(parse_endpoint("127.0.0.1:70000").code(), admin_errc::bad_endpoint);
  EXPECT_EQ(parse_endpoint("127.0.0.1:9x").code(), admin_errc::bad_endpoint);
}

TEST(AdminServer, ServesHandlersOnAFreeLoopbackPort) {
  admin_handlers h;
  h.livez = [] { return admin_response{200, "text/plain", "ok\n"}; };
  h.healthz = [] { return admin_response{503, "text/plain", "stalled: town#1\n"}; };
  auto server = admin_server::start({"127.0.0.1", 0}, std::move(h));
  ASSERT_TRUE(server) << server.error().message;
  ASSERT_GT((*server)->port(), 0);
  httplib::Client client("127.0.0.1", (*server)->port());
  auto live = client.Get("/livez");
  ASSERT_TRUE(live);
  EXPECT_EQ(live->status, 200);
  EXPECT_EQ(live->body, "ok\n");
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503);
  EXPECT_EQ(health->body, "stalled: town#1\n");
  EXPECT_EQ(client.Get("/nope")->status, 404);
}

TEST(AdminServer, RefusesAPortInUse) {
  auto first = admin_server::start({"127.0.0.1", 0}, {});
  ASSERT_TRUE(first);
  auto second = admin_server::start({"127.0.0.1", (*first)->port()}, {});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.code(), admin_errc::bind_failed);
}

}  // namespace
}  // namespace scenert::apps
