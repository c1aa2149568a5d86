#include <scenert/admin/server.hpp>

#include <charconv>

#include <fmt/format.h>
#include <scenert/net/http_server.hpp>

namespace scenert::admin {

struct admin_server::impl {
  std::unique_ptr<net::http_server> http;
};

result<endpoint, admin_errc> parse_endpoint(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return fail(admin_errc::bad_endpoint, fmt::format("admin endpoint '{}': expected HOST:PORT", text));
  endpoint e{std::string(text.substr(0, colon)), 0};
  const auto port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc{} || end != port.data() + port.size() || value > 65535)
    return fail(admin_errc::bad_endpoint,
                fmt::format("admin endpoint '{}': port must be a number in 0..65535", text));
  e.port = static_cast<std::uint16_t>(value);
  return e;
}

namespace {
net::http_response to_http(admin_response r) {
  return net::http_response{r.status, std::move(r.content_type), std::move(r.body), {}};
}

net::http_handler route(std::function<admin_response()> handler) {
  if (!handler) return {};
  return [h = std::move(handler)](const net::http_request&) { return to_http(h()); };
}

net::http_async_handler route_async(std::function<void(std::string_view, admin_reply)> handler) {
  if (!handler) return {};
  return [h = std::move(handler)](const net::http_request& req, net::http_reply reply) {
    h(req.rest, admin_reply{[reply](admin_response r) { reply.answer(to_http(std::move(r))); },
                            [reply](admin_response r) { reply.on_timeout(to_http(std::move(r))); }});
  };
}

admin_errc to_admin(net::http_errc e) {
  return e == net::http_errc::bad_endpoint ? admin_errc::bad_endpoint : admin_errc::bind_failed;
}
}  // namespace

result<std::unique_ptr<admin_server>, admin_errc> admin_server::start(const endpoint& at,
                                                                      admin_handlers handlers,
                                                                      std::string name) {
  // The probes answer on the I/O thread at once; the reports may wait (/scenes asks the world's
  // thread, for up to a second) or walk every scene, so they run on the helper thread and never
  // hold a probe back. /lines waits for a scene's thread without holding any thread: its answer is
  // posted back to the I/O thread.
  net::http_routes routes;
  routes.on("/livez", route(std::move(handlers.livez)))
      .on("/readyz", route(std::move(handlers.readyz)))
      .on("/healthz", route(std::move(handlers.healthz)))
      .on_slow("/metrics", route(std::move(handlers.metrics)))
      .on_slow("/scenes", route(std::move(handlers.scenes)))
      .on_prefix_async("/lines/", route_async(std::move(handlers.lines)), handlers.lines_timeout)
      .on("/history", route(std::move(handlers.history)));
  // The pages are files held in memory: the I/O thread answers them at once. Every path no other
  // route takes comes here, so a missing file is this route's 404.
  if (handlers.page)
    routes.on_prefix("/", [page = std::move(handlers.page)](const net::http_request& req) {
      if (const admin_response* file = page(req.path)) return to_http(*file);
      return net::http_response{404, "text/plain; charset=utf-8", "not found\n", {}};
    });
  if (handlers.websocket)
    routes.on_upgrade("/ws", [ws = std::move(handlers.websocket)](net::http_upgrade up) {
      ws(up.socket, std::move(up.bytes));
    });
  net::http_server_options options;
  options.name = std::move(name);  // "admin endpoint HOST:PORT: cannot bind: ..."
  auto http = net::http_server::start(at.host, at.port, std::move(routes), std::move(options));
  if (!http) return fail(to_admin(http.code()), http.error().message);
  const auto port = (*http)->port();
  auto i = std::make_unique<impl>();
  i->http = std::move(*http);
  return std::unique_ptr<admin_server>(new admin_server(std::move(i), port));
}

admin_server::admin_server(std::unique_ptr<impl> i, std::uint16_t port) : impl_(std::move(i)), port_(port) {}

admin_server::~admin_server() = default;

}  // namespace scenert::admin
