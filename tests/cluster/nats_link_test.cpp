// The link to the server: a clear error when nobody listens, and back by itself after a restart.

#include <scenert/cluster/nats_link.hpp>

#include <gtest/gtest.h>

#include "nats_server.hpp"

namespace scenert::cluster {
namespace {

TEST(NatsLink, NoServerIsUnavailableAndNamesTheAddress) {
  link_options o;
  o.url = fmt::format("nats://127.0.0.1:{}", test::free_port());
  o.timeout = std::chrono::milliseconds(500);
  auto link = nats_link::connect(o);
  ASSERT_FALSE(link);
  EXPECT_EQ(link.code(), cluster_errc::unavailable);
  EXPECT_NE(link.error().message.find(o.url), std::string::npos) << link.error().message;
}

// The server stops and starts again on its port with its store: the link reconnects without being
// asked and the bucket's data is still there. Bounded: 15 s.
TEST(NatsLink, ReconnectsByItselfAfterTheServerRestarts) {
  test::nats_server server;
  auto [link, kv] = test::open_bucket(server, "restart");
  ASSERT_TRUE(kv.create("kept", "yes"));
  EXPECT_TRUE(link->connected());
  server.stop();
  server.start();
  bool back = false;
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
       !back && std::chrono::steady_clock::now() < until;
       std::this_thread::sleep_for(std::chrono::milliseconds(50))) {
    auto got = kv.get("kept");
    back = got && got->value == "yes";
  }
  EXPECT_TRUE(back);
  EXPECT_TRUE(link->connected());
  EXPECT_GE(link->disconnects(), 1u);
  EXPECT_GE(link->reconnects(), 1u);
}

}  // namespace
}  // namespace scenert::cluster
