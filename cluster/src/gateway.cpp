// The gateway: its start (link, buckets, player ids, remote world, front), the timer that drives the
// remote world's poll() on the gateway's own thread, the players of a dead node placed again, and
// its stop.

#include <scenert/cluster/gateway.hpp>

#include "subjects.hpp"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace scenert::cluster {

namespace asio = boost::asio;

namespace {

using clock = std::chrono::steady_clock;

constexpr const char* nodes_bucket = "scenert-nodes";
constexpr const char* sessions_bucket = "scenert-sessions";  // resume tokens, for every gateway
// How often the remote world is polled: its beat, its time-outs, its reading of the nodes.
constexpr auto poll_period = std::chrono::milliseconds(250);
// After the link came back, the clients' views are sent again once every node answered with its
// lines, or after this long.
constexpr auto resync_clients_within = std::chrono::seconds(5);

error<gateway_errc> cluster_failure(const gateway_options& o, const error<cluster_errc>& e) {
  return fail(gateway_errc::cluster, fmt::format("--cluster {}: {}", o.cluster, e.message));
}

}  // namespace

// The gateway's own thread runs `io`: the poll timer and what the link's thread hands it when the
// link came back. A poll waits on the server (it reads the nodes' bucket): here, never on a front's
// I/O thread or a library thread. Members are destroyed bottom up: the world before the front it
// calls, the link (whose thread posts to `io`) before `io`.
struct gateway::impl {
  gateway_options opt;
  asio::io_context io;
  asio::steady_timer poll_timer{io};
  std::thread thread;
  std::unique_ptr<nats_link> link;
  std::optional<kv_bucket> nodes, sessions;
  id_block ids;
  std::unique_ptr<net::front> door;
  std::unique_ptr<remote_world> world;
  std::optional<clock::time_point> resync_clients_by;  // (the gateway's thread)
  bool stopped = false;

  explicit impl(gateway_options o) : opt(std::move(o)) {}

  void info(std::string_view what) const {
    if (opt.info) opt.info(what);
  }
  void warn(std::string_view what) const {
    if (opt.warn) opt.warn(what);
  }

  result<void, gateway_errc> connect();
  remote_world_options world_options();
  void place_again(const std::string& node, const std::vector<orphan>& players);
  void relinked();
  void arm();
  void poll();
};

// The link, the buckets and this gateway's block of player ids.
result<void, gateway_errc> gateway::impl::connect() {
  link_options lo;
  lo.url = opt.cluster;
  lo.name = opt.name;
  // From the library's thread: the gateway's own thread asks the nodes again.
  lo.on_reconnected = [this] { asio::post(io, [this] { relinked(); }); };
  auto l = nats_link::connect(lo);
  if (!l) return cluster_failure(opt, l.error());
  link = std::move(l).value();
  auto n = link->bucket(nodes_bucket);
  if (!n) return cluster_failure(opt, n.error());
  nodes = std::move(n).value();
  auto s = link->bucket(sessions_bucket);
  if (!s) return cluster_failure(opt, s.error());
  sessions = std::move(s).value();
  // Player ids are the cluster's: this gateway gives out a block no other gateway has.
  auto taken = take_player_ids(*nodes, player_ids_per_start);
  if (!taken) return cluster_failure(opt, taken.error());
  ids = *taken;
  return {};
}

// This start of the gateway, as the nodes know it: its name and the first of its player ids, which
// no other start of any gateway took. A gateway started again under its name is thus a new gateway
// to the nodes: they hold its predecessor's players for their clients to resume, then let them go,
// as for any gateway that died (under the bare name, the new start's beats would keep them forever).
remote_world_options gateway::impl::world_options() {
  return {.gateway = fmt::format("{}-{}", opt.name, ids.first),
          .answer_timeout = opt.answer_timeout,
          .on_line_events = door->on_line_events(),
          .on_module_frames = door->on_module_frames(),
          .warn = opt.warn,
          .on_node_lost = [this](const std::string& node,
                                 std::vector<orphan> players) { place_again(node, players); },
          .sessions = *sessions,
          .on_claimed_elsewhere = [this](player_id p) { door->let_go(p); },
          .on_stands_on = door->on_stands_on(),
          .journeys = opt.journeys,
          .table = opt.table,
          .open_lines_on = opt.open_lines_on};
}

// The players of a node declared dead: towns and fields go on with another line of the same scene,
// where they stood; dungeon and phase players (a phase lives on its town's line: the town) and those
// in transit go home, to the landing scene.
void gateway::impl::place_again(const std::string& node, const std::vector<orphan>& players) {
  const scene_id home = door->landing_scene();
  std::size_t stayed = 0;
  for (const auto& lost : players) {
    const scene_def* def = lost.scene != 0 ? opt.table->find_scene(lost.scene) : nullptr;
    const bool stays = def != nullptr && (def->kind == scene_kind::town || def->kind == scene_kind::field);
    stayed += stays ? 1 : 0;
    door->place_again(lost.player, stays ? lost.scene : home, stays ? lost.at : std::nullopt);
  }
  warn(fmt::format(
      "gateway {}: node {} was declared dead; {} of its players placed again ({} on their scene, {} in "
      "the landing scene)",
      opt.name, node, players.size(), stayed, players.size() - stayed));
}

// The link came back: events may have been lost, every node is asked for its lines (the gateway's
// thread).
void gateway::impl::relinked() {
  warn(fmt::format("gateway {}: the link to {} came back; asking every node for its lines", opt.name,
                   opt.cluster));
  world->resync_all();
  resync_clients_by = clock::now() + resync_clients_within;
}

void gateway::impl::arm() {
  poll_timer.expires_after(poll_period);
  poll_timer.async_wait([this](const boost::system::error_code& e) {
    if (!e) poll();
  });
}

// The remote world's beat, time-outs and reading of the nodes; after the link came back, the
// clients' views once the nodes answered (the gateway's thread).
void gateway::impl::poll() {
  const auto now = clock::now();
  world->poll(now);
  if (resync_clients_by && (world->resynced() || now >= *resync_clients_by)) {
    door->resync_views();
    resync_clients_by.reset();
    info(fmt::format("gateway {}: every client's view sent again", opt.name));
  }
  arm();
}

result<std::unique_ptr<gateway>, gateway_errc> gateway::start(gateway_options options) {
  // The nodes know this start as NAME-FIRSTID (world_options): the name leaves room for ten digits.
  if (!valid_name(options.name) || options.name.size() > max_gateway_name)
    return fail(gateway_errc::cluster,
                fmt::format("--name '{}': a gateway's name is 1-{} letters, digits, '-' or '_'", options.name,
                            max_gateway_name));
  auto i = std::make_unique<impl>(std::move(options));
  if (auto connected = i->connect(); !connected) return connected.error();
  net::front_options fo = i->opt.front;
  fo.first_player_id = i->ids.first;
  fo.last_player_id = i->ids.last;
  i->door = net::front::create(*i->opt.table, std::move(fo));
  auto w = remote_world::start(*i->link, *i->nodes, i->world_options());
  if (!w)
    return fail(gateway_errc::cluster,
                fmt::format("--cluster {} --name {}: {}", i->opt.cluster, i->opt.name, w.error().message));
  i->world = std::move(w).value();
  if (auto started = i->door->start(*i->world); !started)
    return fail(gateway_errc::front, started.error().message);
  i->arm();
  i->thread = std::thread([raw = i.get()] { raw->io.run(); });
  return std::unique_ptr<gateway>(new gateway(std::move(i)));
}

gateway::gateway(std::unique_ptr<impl> i) : impl_(std::move(i)) {}

gateway::~gateway() { stop(); }

void gateway::stop() {
  if (std::exchange(impl_->stopped, true)) return;
  impl_->io.stop();  // a poll under way ends first
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->door->stop();
}

gateway_stats gateway::stats() const {
  return {impl_->door->stats(), impl_->world->stats(), impl_->link->connected(), impl_->link->reconnects()};
}

std::uint16_t gateway::tcp_port() const noexcept { return impl_->door->tcp_port(); }

std::uint16_t gateway::ws_port() const noexcept { return impl_->door->ws_port(); }

id_block gateway::player_ids() const noexcept { return impl_->ids; }

}  // namespace scenert::cluster
