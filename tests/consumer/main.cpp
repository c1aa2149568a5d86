// Links against the installed package and uses its public API.
#include <scenert/cluster/nats_link.hpp>
#include <scenert/config/table_loader.hpp>
#include <scenert/nav/search.hpp>
#include <scenert/net/messages.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/space/space_module.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

enum class demo_errc { ok = 0, odd };

static scenert::result<int, demo_errc> half(int x) {
  if (x % 2) return scenert::fail(demo_errc::odd, "odd");
  return x / 2;
}

struct ticker final : scenert::service {
  ticker() : service("ticker") {}
  int ticks = 0;
  void on_tick(const scenert::tick_context&) override { ++ticks; }
};

int main() {
  auto r = half(8);
  if (!r || *r != 4) return 1;
  scenert::manual_clock clock;
  scenert::pool_options options;
  options.manual = &clock;
  scenert::processor_pool pool(options);
  auto t = std::make_shared<ticker>();
  if (!pool.add(t, 10)) return 1;
  pool.advance(std::chrono::seconds(1));
  if (t->ticks != 10) return 1;
  const auto table = scenert::parse_table(R"({"version": 1, "scenes": []})", "inline.json");
  if (table.ok() || table.diagnostics.empty()) return 1;
  scenert::map_def map{1, "m", 32, 32, 8, 8, 1, 1, {}};
  if (scenert::make_map_data(map)->area_count() != 16) return 1;
  scenert::scene_table phases;
  if (!scenert::attach_space_modules(phases)) return 1;
  std::string frame;
  scenert::net::append_frame(frame, scenert::net::client_message{scenert::net::talk{"hi"}});
  if (!scenert::net::decode_client(2, std::string_view(frame).substr(scenert::net::header_size))) return 1;
  scenert::cluster::link_options nobody;
  nobody.url = "nats://127.0.0.1:1";  // nothing listens on port 1: a clear error, not a crash
  nobody.timeout = std::chrono::milliseconds(200);
  auto link = scenert::cluster::nats_link::connect(nobody);
  if (link || link.code() != scenert::cluster::cluster_errc::unavailable) return 1;
  const std::vector<std::uint8_t> no_blocks(16, 0);
  const auto nav_map = scenert::nav::nav_map::create(4, 4, no_blocks);
  scenert::nav::search_context search;
  std::vector<scenert::nav::cell> path;
  if (!nav_map) return 1;
  const auto found = search.find(**nav_map, {0, 0}, {3, 3}, scenert::nav::algorithm::jps, path);
  if (found.status != scenert::nav::search_status::found || path.size() != 4) return 1;
  std::puts(
      "consumer: scenert package found and linked; a pool ticked a service 10 times, a bad table was refused,"
      " a map was built, the space hook was made, a frame went through the wire's codec, the cluster's link"
      " refused an address where no server listens, a monster's path was found");
  return 0;
}
