// The web pages' port: an HTTP server whose /ws route hands WebSocket upgrades to the front, so the
// pages and their WebSocket share one origin; and requests that name a line.
#include <scenert/net/http_server.hpp>

#include "front_fixture.hpp"
#include "http_probe.hpp"

namespace scenert::net::test {
namespace {

// An HTTP server like `scenert run --web`'s: a page, and /ws handed to the front.
std::unique_ptr<http_server> web_port(server& s) {
  http_routes routes;
  routes.on("/page",
            [](const http_request&) {
              return http_response{200, "text/html", "<p>page</p>", {}};
            })
      .on_upgrade("/ws", [&s](http_upgrade up) { s.door->adopt_websocket(up.socket, std::move(up.bytes)); });
  auto started = http_server::start("127.0.0.1", 0, std::move(routes));
  EXPECT_TRUE(started.has_value());
  return started ? std::move(*started) : nullptr;
}

TEST(FrontWebPort, AWebSocketOnThePagesPortIsAClientOfTheFront) {
  server s;
  auto web = web_port(s);
  ASSERT_TRUE(web);
  auto neighbour = s.connect();
  ASSERT_TRUE(neighbour);
  land(*neighbour);

  auto c = client::connect_ws("127.0.0.1", web->port(), "scenert", "/ws");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_TRUE((*c)->send(login{"browser", ""}));
  const auto ok = wait_for<login_ok>(**c);
  EXPECT_EQ(ok.name, "browser");
  EXPECT_EQ(wait_for<scene_info>(**c).scene, town_id);
  // The neighbour on the front's TCP port sees the page's player appear: one world, one front.
  wait_for<broadcast>(*neighbour,
                      [&](const broadcast& b) { return is(b, ok.pid, broadcast_type::appeared); });
  EXPECT_EQ(s.door->stats().logins, 1U);

  // The HTTP port goes on serving pages meanwhile.
  auto probe = http_probe::connect(web->port());
  ASSERT_TRUE(probe);
  ASSERT_TRUE(probe->send(http_request_text("/page")));
  const auto page = probe->read_answer(patience);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body, "<p>page</p>");
}

TEST(FrontWebPort, APlainGetOfTheWebSocketPathIsTold426) {
  server s;
  auto web = web_port(s);
  ASSERT_TRUE(web);
  auto probe = http_probe::connect(web->port());
  ASSERT_TRUE(probe);
  ASSERT_TRUE(probe->send(http_request_text("/ws")));
  const auto a = probe->read_answer(patience);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, 426);
  EXPECT_EQ(a->fields.at("upgrade"), "websocket");
}

TEST(FrontWebPort, AConnectionHandedOverAfterStopIsClosed) {
  server s;
  auto web = web_port(s);
  ASSERT_TRUE(web);
  s.door->stop();
  auto c = client::connect_ws("127.0.0.1", web->port(), "scenert", "/ws");
  // The upgrade's answer never comes: the front closed the socket it was handed.
  EXPECT_FALSE(c.has_value());
}

TEST(FrontRequests, AClientMayNameTheLineToEnterByItsNumber) {
  server s;
  auto c = s.connect();
  ASSERT_TRUE(c);
  land(*c);
  ASSERT_TRUE(c->send(request{1, request_kind::transfer, field_id, 1, 0, 0}));
  auto ok = wait_for<answer>(*c, [](const answer& a) { return a.request_id == 1; });
  EXPECT_EQ(ok.code, "ok") << ok.message;
  EXPECT_EQ(ok.scene, field_id);
  EXPECT_EQ(ok.line, 1U);
  // A line never opened is answered by name; so is a given line for a request that takes none.
  ASSERT_TRUE(c->send(request{2, request_kind::enter, town_id, 3, 0, 0}));
  EXPECT_EQ(wait_for<answer>(*c, [](const answer& a) { return a.request_id == 2; }).code, "unknown_line");
  ASSERT_TRUE(c->send(request{3, request_kind::enter_phase, town_id, 1, 0, 0}));
  EXPECT_EQ(wait_for<answer>(*c, [](const answer& a) { return a.request_id == 3; }).code, "unsupported");
}

}  // namespace
}  // namespace scenert::net::test
