#include "admin_server.hpp"

#include <atomic>
#include <charconv>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

namespace scenert::apps {

struct admin_server::impl {
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> finished{false};
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
void route(httplib::Server& server, const char* path, std::function<admin_response()> handler) {
  if (!handler) return;
  server.Get(path, [h = std::move(handler)](const httplib::Request&, httplib::Response& res) {
    admin_response r = h();
    res.status = r.status;
    res.set_content(r.body, r.content_type.c_str());
  });
}
}  // namespace

result<std::unique_ptr<admin_server>, admin_errc> admin_server::start(const endpoint& at,
                                                                      admin_handlers handlers) {
  auto i = std::make_unique<impl>();
  // httplib's default adds SO_REUSEPORT, which lets a second process bind the same port unnoticed.
  i->server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  route(i->server, "/livez", std::move(handlers.livez));
  route(i->server, "/readyz", std::move(handlers.readyz));
  route(i->server, "/healthz", std::move(handlers.healthz));
  route(i->server, "/metrics", std::move(handlers.metrics));
  route(i->server, "/scenes", std::move(handlers.scenes));
  int port = at.port;
  if (at.port == 0) {
    port = i->server.bind_to_any_port(at.host);
  } else if (!i->server.bind_to_port(at.host, at.port)) {
    port = -1;
  }
  if (port <= 0)
    return fail(admin_errc::bind_failed, fmt::format("admin endpoint {}:{}: cannot bind", at.host, at.port));
  i->thread = std::thread([p = i.get()] {
    p->server.listen_after_bind();
    p->finished = true;
  });
  // httplib's stop() does nothing until the listen loop runs; wait so the destructor can stop it.
  while (!i->server.is_running() && !i->finished) std::this_thread::yield();
  return std::unique_ptr<admin_server>(new admin_server(std::move(i), static_cast<std::uint16_t>(port)));
}

admin_server::admin_server(std::unique_ptr<impl> i, std::uint16_t port) : impl_(std::move(i)), port_(port) {}

admin_server::~admin_server() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace scenert::apps
