// libFuzzer target over a connection of a real world: each input is a byte stream a client sends
// to the front (over loopback), with the world on a manual-clock pool. The stream ends with the
// client's half close, and the input is done when the server has closed the connection: every
// frame went through the reader, the decoders and the message handlers (logins, moves, requests).
// A crash, a sanitizer report or a connection the server never closes fails.
#include <scenert/net/front.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include <scenert/config/table_loader.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/world.hpp>

#include "loopback_socket.hpp"  // tests/

namespace {

using namespace std::chrono_literals;

// The example table's world on a manual-clock pool, with the front on a free loopback port.
struct host {
  scenert::manual_clock clock;
  scenert::scene_table table;
  std::unique_ptr<scenert::processor_pool> pool;
  std::unique_ptr<scenert::net::front> door;
  std::shared_ptr<scenert::world> world;

  host() {
    auto loaded = scenert::load_table_file(SCENERT_SOURCE_DIR "/examples/mmo.json");
    if (!loaded.ok()) std::abort();
    table = *loaded.table;
    scenert::pool_options po;
    po.manual = &clock;
    po.log = [](scenert::log_level, std::string_view) {};
    pool = std::make_unique<scenert::processor_pool>(std::move(po));
    if (!pool->start()) std::abort();
    scenert::net::front_options fo;
    fo.max_payload = 4096;
    fo.guest_wait = 0ms;
    door = scenert::net::front::create(table, fo);
    scenert::world_options wo;
    wo.on_line_events = door->on_line_events();
    world = scenert::world::create(table, *pool, std::move(wo));
    world->start();
    pool->advance(250ms);
    if (!door->start(*world)) std::abort();
  }
};

host& the_host() {
  static host h;
  return h;
}

int connect_to(std::uint16_t port) {
  const int fd = scenert::test::connect_loopback(port);
  if (fd < 0) std::abort();
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  host& h = the_host();
  const int fd = connect_to(h.door->tcp_port());
  for (std::size_t sent = 0; sent < size;) {
    const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server closed it already (a bad frame)
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  // Read until the server closes, moving the world's clock so that requests get their answers.
  char sink[1 << 16];
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    if (std::chrono::steady_clock::now() > deadline) std::abort();  // the server never closed it
    h.pool->advance(20ms);
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5) <= 0) continue;
    if (::recv(fd, sink, sizeof sink, 0) <= 0) break;
  }
  ::close(fd);
  return 0;
}
