#include <scenert/admin/server.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "../net/http_probe.hpp"

namespace scenert::admin {
namespace {

using namespace std::chrono_literals;
using test::http_get;

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
  auto live = http_get((*server)->port(), "/livez");
  ASSERT_TRUE(live);
  EXPECT_EQ(live->status, 200);
  EXPECT_EQ(live->body, "ok\n");
  EXPECT_EQ(live->fields["content-type"], "text/plain");
  auto health = http_get((*server)->port(), "/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503);
  EXPECT_EQ(health->body, "stalled: town#1\n");
  EXPECT_EQ(http_get((*server)->port(), "/nope")->status, 404);
  EXPECT_EQ(http_get((*server)->port(), "/readyz")->status, 404);  // no handler given: no route
}

TEST(AdminServer, AnswersHealthzWhileAScenesRequestWaitsOnTheWorld) {
  std::promise<void> entered, release;
  admin_handlers h;
  h.healthz = [] { return admin_response{200, "text/plain", "ok\n"}; };
  h.scenes = [&entered, released = release.get_future().share()] {
    entered.set_value();
    released.wait();  // what the real handler does while the world's thread is busy
    return admin_response{200, "application/json", "{}"};
  };
  auto server = admin_server::start({"127.0.0.1", 0}, std::move(h));
  ASSERT_TRUE(server) << server.error().message;
  test::gate opens{release};
  auto scenes = test::http_probe::connect((*server)->port());
  ASSERT_TRUE(scenes && scenes->send(test::http_request_text("/scenes")));
  ASSERT_EQ(entered.get_future().wait_for(5s), std::future_status::ready);
  auto health = http_get((*server)->port(), "/healthz");
  opens.open();
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto answer = scenes->read_answer(5s);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->body, "{}");
}

TEST(AdminServer, RefusesAPortInUse) {
  auto first = admin_server::start({"127.0.0.1", 0}, {});
  ASSERT_TRUE(first);
  auto second = admin_server::start({"127.0.0.1", (*first)->port()}, {});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.code(), admin_errc::bind_failed);
  EXPECT_NE(second.error().message.find("admin endpoint 127.0.0.1:"), std::string::npos)
      << second.error().message;
}

}  // namespace
}  // namespace scenert::admin
