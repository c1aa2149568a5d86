// The HTTP server over real loopback sockets, driven by a plain-socket client that can also send
// broken requests. Every wait is bounded; a sleep appears only where elapsed time is the property.
#include <scenert/net/http_server.hpp>

#include <sys/resource.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "http_probe.hpp"

namespace scenert::net {
namespace {

using namespace std::chrono_literals;
using test::http_get;
using test::http_probe;
using test::http_request_text;
using clock = std::chrono::steady_clock;

constexpr auto patience = 5s;

http_response text(std::string body) { return {200, "text/plain; charset=utf-8", std::move(body), {}}; }

http_routes sample_routes() {
  http_routes r;
  r.on("/healthz", [](const http_request&) { return text("ok\n"); });
  r.on("/lines/all", [](const http_request&) { return text("every line\n"); });
  r.on_prefix("/lines/",
              [](const http_request& q) { return text("line " + q.rest + " ?" + q.query + "\n"); });
  r.on("/throws", [](const http_request&) -> http_response { throw std::runtime_error("boom"); });
  return r;
}

std::unique_ptr<http_server> serve(http_server_options o = {}, http_routes routes = sample_routes()) {
  auto s = http_server::start("127.0.0.1", 0, std::move(routes), std::move(o));
  EXPECT_TRUE(s) << s.error().message;
  return s ? std::move(s).value() : nullptr;
}

http_probe connect(std::uint16_t port) {
  auto p = http_probe::connect(port);
  if (!p) throw std::runtime_error("cannot connect to the test server");
  return std::move(*p);
}

TEST(HttpServer, AnswersExactRoutesThenTheLongestPrefixElse404) {
  auto s = serve();
  auto health = http_get(s->port(), "/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");
  EXPECT_EQ(health->fields["content-type"], "text/plain; charset=utf-8");
  EXPECT_EQ(http_get(s->port(), "/lines/all")->body, "every line\n");
  EXPECT_EQ(http_get(s->port(), "/lines/7?full=1")->body, "line 7 ?full=1\n");
  auto missing = http_get(s->port(), "/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->body, "not found\n");
}

TEST(HttpServer, RefusesMethodsOtherThanGetAndHeadWith405) {
  auto s = serve();
  auto p = connect(s->port());
  ASSERT_TRUE(p.send(http_request_text("/healthz", "Content-Length: 5\r\n", "POST") + "hello"));
  auto a = p.read_answer(patience);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, 405);
  EXPECT_EQ(a->fields["allow"], "GET, HEAD");
  EXPECT_TRUE(p.closed_within(patience));
}

TEST(HttpServer, AnswersHeadWithTheLengthOfAGetAndNoBody) {
  auto s = serve();
  auto p = connect(s->port());
  ASSERT_TRUE(p.send(http_request_text("/healthz", {}, "HEAD")));
  auto a = p.read_answer(patience, /*head=*/true);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(a->fields["content-length"], "3");
  // The next answer on this connection starts right after the header: no body bytes came between.
  ASSERT_TRUE(p.send(http_request_text("/healthz")));
  EXPECT_EQ(p.read_answer(patience)->body, "ok\n");
}

TEST(HttpServer, AnswersA500WhenAHandlerThrowsAndKeepsServing) {
  auto s = serve();
  EXPECT_EQ(http_get(s->port(), "/throws")->status, 500);
  EXPECT_EQ(http_get(s->port(), "/healthz")->status, 200);
}

TEST(HttpServer, AnswersOtherRoutesWhileASlowHandlerWaits) {
  std::promise<void> entered, release;
  http_routes r = sample_routes();
  r.on_slow("/slow", [&entered, released = release.get_future().share()](const http_request&) {
    entered.set_value();
    released.wait();
    return text("slow\n");
  });
  auto s = serve({}, std::move(r));
  test::gate opens{release};
  auto slow = connect(s->port());
  ASSERT_TRUE(slow.send(http_request_text("/slow")));
  ASSERT_EQ(entered.get_future().wait_for(patience), std::future_status::ready);
  auto health = http_get(s->port(), "/healthz");
  opens.open();
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto answer = slow.read_answer(patience);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->body, "slow\n");
  // The connection goes on after an answer from the helper thread.
  ASSERT_TRUE(slow.send(http_request_text("/healthz")));
  EXPECT_EQ(slow.read_answer(patience)->body, "ok\n");
}

TEST(HttpServer, ServesTwoRequestsOnOneKeepAliveConnectionThenHonoursConnectionClose) {
  auto s = serve();
  auto p = connect(s->port());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(p.send(http_request_text("/healthz")));
    auto a = p.read_answer(patience);
    ASSERT_TRUE(a) << "request " << i;
    EXPECT_EQ(a->status, 200);
    EXPECT_FALSE(a->fields.contains("connection")) << a->fields["connection"];
  }
  ASSERT_TRUE(p.send(http_request_text("/healthz", "Connection: close\r\n")));
  auto last = p.read_answer(patience);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->fields["connection"], "close");
  EXPECT_TRUE(p.closed_within(patience));
}

TEST(HttpServer, AnswersPipelinedRequestsInOrder) {
  auto s = serve();
  auto p = connect(s->port());
  ASSERT_TRUE(p.send(http_request_text("/lines/1") + http_request_text("/lines/2")));
  EXPECT_EQ(p.read_answer(patience)->body, "line 1 ?\n");
  EXPECT_EQ(p.read_answer(patience)->body, "line 2 ?\n");
}

TEST(HttpServer, ClosesARequestWhoseHeaderNeverCompletesAfterTheHeaderTimeout) {
  http_server_options o;
  o.header_timeout = 200ms;
  auto s = serve(o);
  const auto started = clock::now();
  auto silent = connect(s->port());
  auto half_line = connect(s->port());
  auto half_header = connect(s->port());
  ASSERT_TRUE(half_line.send("GET /heal"));
  ASSERT_TRUE(half_header.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  for (auto* p : {&silent, &half_line, &half_header}) EXPECT_TRUE(p->closed_within(patience));
  // The deadline runs from the accept, which comes after `started`.
  EXPECT_GE(clock::now() - started, 200ms);
}

TEST(HttpServer, KeepsAnIdleKeepAliveConnectionUntilTheIdleTimeoutNotTheHeaderTimeout) {
  http_server_options o;
  o.header_timeout = 200ms;
  o.idle_timeout = 1s;
  auto s = serve(o);
  auto p = connect(s->port());
  ASSERT_TRUE(p.send(http_request_text("/healthz")));
  ASSERT_TRUE(p.read_answer(patience));
  std::this_thread::sleep_for(400ms);  // the property: idle past the header timeout, within the idle one
  ASSERT_TRUE(p.send(http_request_text("/healthz")));
  auto second = p.read_answer(patience);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 200);
  const auto answered = clock::now();
  EXPECT_TRUE(p.closed_within(patience));
  EXPECT_GE(clock::now() - answered, 900ms);
}

TEST(HttpServer, AnswersAnOversizedHeaderWith431) {
  http_server_options o;
  o.max_header_bytes = 8 * 1024;
  auto s = serve(o);
  auto p = connect(s->port());
  const std::string big(10 * 1024, 'x');
  ASSERT_TRUE(p.send(http_request_text("/healthz", "X-Big: " + big + "\r\n")));
  auto a = p.read_answer(patience);
  // The server drains what the client sent before it closes, so the 431 is not reset away.
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, 431);
  EXPECT_TRUE(p.closed_within(patience));
}

TEST(HttpServer, AnswersABodyOverTheCapWith413) {
  http_server_options o;
  o.max_body_bytes = 1024;
  auto s = serve(o);
  auto p = connect(s->port());
  ASSERT_TRUE(p.send(http_request_text("/healthz", "Content-Length: 4096\r\n") + std::string(4096, 'b')));
  auto a = p.read_answer(patience);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, 413);
}

TEST(HttpServer, AnswersGarbageWith400) {
  auto s = serve();
  auto p = connect(s->port());
  ASSERT_TRUE(p.send("\x01\x02 nonsense\r\n\r\n"));
  auto a = p.read_answer(patience);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, 400);
}

TEST(HttpServer, ClosesAConnectionOverTheLimitAtOnceAndServesAgainOnceOneLeaves) {
  http_server_options o;
  o.max_connections = 2;
  auto s = serve(o);
  std::optional<http_probe> first = connect(s->port());
  auto second = connect(s->port());
  // The listener accepts in arrival order, so the third is the one over the limit.
  auto third = connect(s->port());
  EXPECT_TRUE(third.closed_within(patience));
  ASSERT_TRUE(second.send(http_request_text("/healthz")));
  EXPECT_EQ(second.read_answer(patience)->status, 200);
  first.reset();
  // The server learns of the close asynchronously: retry until a newcomer is served, bounded.
  const auto deadline = clock::now() + patience;
  bool served = false;
  while (!served && clock::now() < deadline) {
    auto a = http_get(s->port(), "/healthz", 500ms);
    served = a && a->status == 200;
  }
  EXPECT_TRUE(served);
}

TEST(HttpServer, RefusesAPortInUseAndAnUnknownHostNamingTheEndpoint) {
  auto first = serve();
  auto second = http_server::start("127.0.0.1", first->port(), {}, {});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.code(), http_errc::bind_failed);
  EXPECT_NE(second.error().message.find("http endpoint 127.0.0.1:" + std::to_string(first->port())),
            std::string::npos)
      << second.error().message;
  auto bad = http_server::start("no-such-host.invalid", 0, {}, {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), http_errc::bad_endpoint);
}

// ---- a thousand idle connections do not delay a probe --------------------------------------------

constexpr int idle_connections = 1000;
constexpr int half_requests = 50;
// One bound for every build: on the 2-core VM the slowest probe took 0.4-0.8 ms (RelWithDebInfo), 0.6-0.8
// ms (TSan), 1.0-1.2 ms (ASan+UBSan, Debug), and up to 6 ms with both cores busy compiling, so the
// sanitizers need no looser bound (they would detect one with __SANITIZE_THREAD__/__SANITIZE_ADDRESS__).
constexpr auto probe_bound = 50ms;

// Raises the soft descriptor limit to `want`; the reason why not when the hard limit is lower.
std::optional<std::string> raise_descriptor_limit(rlim_t want) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return "getrlimit failed";
  if (lim.rlim_cur >= want) return std::nullopt;
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < want)
    return "RLIMIT_NOFILE hard limit " + std::to_string(lim.rlim_max) + " < " + std::to_string(want);
  lim.rlim_cur = want;
  if (setrlimit(RLIMIT_NOFILE, &lim) != 0) return "setrlimit failed";
  return std::nullopt;
}

TEST(HttpServer, AnswersHealthzFastBesideAThousandIdleAndHalfSentConnections) {
  // Both ends of every connection live in this process, plus a few spare.
  if (auto why = raise_descriptor_limit(2 * (idle_connections + half_requests) + 200)) GTEST_SKIP() << *why;
  http_server_options o;
  o.header_timeout = 60s;  // none of the idle sockets may time out while the probes are measured
  auto s = serve(o);
  std::vector<http_probe> idle;
  idle.reserve(idle_connections + half_requests);
  for (int i = 0; i < idle_connections; ++i) idle.push_back(connect(s->port()));
  for (int i = 0; i < half_requests; ++i) {
    idle.push_back(connect(s->port()));
    ASSERT_TRUE(idle.back().send(i % 2 ? "GET /heal" : "GET /healthz HTTP/1.1\r\nHost: x\r\n"));
  }
  // The listener accepts in arrival order: once this one is answered every idle socket is a session.
  ASSERT_TRUE(http_get(s->port(), "/healthz"));
  std::vector<double> ms;
  for (int i = 0; i < 20; ++i) {
    const auto t0 = clock::now();
    auto a = http_get(s->port(), "/healthz", patience);
    ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    ASSERT_TRUE(a);
    EXPECT_EQ(a->status, 200);
  }
  std::sort(ms.begin(), ms.end());
  RecordProperty("healthz_median_ms", std::to_string(ms[ms.size() / 2]));
  RecordProperty("healthz_max_ms", std::to_string(ms.back()));
  std::printf("[ figures  ] /healthz beside %d idle + %d half-sent: median %.3f ms, max %.3f ms\n",
              idle_connections, half_requests, ms[ms.size() / 2], ms.back());
  const double bound_ms = std::chrono::duration<double, std::milli>(probe_bound).count();
  EXPECT_LT(ms.back(), bound_ms);
  // The held sockets are live sessions: half-sent requests, completed, are answered.
  auto& half_line = idle[idle.size() - 1];    // sent "GET /heal"
  auto& half_header = idle[idle.size() - 2];  // sent all but the header's last line
  ASSERT_TRUE(half_line.send("thz HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(half_header.send("\r\n"));
  for (auto* p : {&half_line, &half_header}) {
    auto completed = p->read_answer(patience);
    ASSERT_TRUE(completed);
    EXPECT_EQ(completed->status, 200);
  }
}

}  // namespace
}  // namespace scenert::net
