// scene_node: the lease, the beats, the watch of the other nodes and the endpoint toward the
// gateways. Its timers run on its own executor (one thread): a beat and the watch make round trips
// to the server, which must hold up neither a tick nor the endpoint's answers.

#include <utility>  // before Asio (Boost 1.74 with g++ 12)

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <scenert/cluster/cluster_directory.hpp>
#include <scenert/cluster/kv_bucket.hpp>
#include <scenert/cluster/line_store.hpp>
#include <scenert/cluster/nats_link.hpp>
#include <scenert/cluster/scene_node.hpp>
#include <scenert/scene/world.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <thread>

namespace scenert::cluster {

namespace asio = boost::asio;
using clock = std::chrono::steady_clock;

// Tries of a start's step that found the cluster's server unavailable (a timeout under load, or a
// listing of keys that fails at once: nats.c, 3.4.1 in Debian 12, may answer kvStore_Keys with
// NATS_TIMEOUT well within its timeout, nats-io/nats.c#916, as seen right after a nats-server
// restart), the wait before the next try doubling from start_backoff: about 8 s in all.
constexpr int start_tries = 6;
constexpr auto start_backoff = std::chrono::milliseconds(250);

namespace {
// The buckets every node and gateway of a cluster shares.
constexpr const char* nodes_bucket = "scenert-nodes";
constexpr const char* lines_bucket = "scenert-lines";
}  // namespace

struct scene_node::impl {
  impl(scene_node_options o, std::unique_ptr<nats_link> l, kv_bucket n, kv_bucket ls, node_lease le)
      : opt(std::move(o)),
        link(std::move(l)),
        nodes(std::move(n)),
        lines(std::move(ls)),
        lease(std::move(le)) {}

  scene_node_options opt;
  std::unique_ptr<nats_link> link;
  kv_bucket nodes, lines;
  node_lease lease;
  heartbeat_watch watch;
  std::shared_ptr<line_directory> directory;
  std::shared_ptr<player_count_sync> counts;  // the directory's, synced once a beat
  std::unique_ptr<node_endpoint> endpoint;
  world* w = nullptr;
  std::uint64_t link_ups = 0;  // the link's reconnects at the last beat

  asio::io_context io;
  asio::steady_timer beat_timer{io}, poll_timer{io};
  std::thread io_thread;

  std::atomic<bool> is_fenced{false};
  std::atomic<std::uint64_t> beats{0}, beat_failures{0}, declared_dead{0}, tombstoned{0},
      line_counts_written{0};

  void warn(std::string_view what) const {
    if (opt.warn) opt.warn(what);
  }
  void beat_later();
  void poll_later();
  void beat(clock::time_point now);
  void watch_others(clock::time_point now);
  void take_lines_of(const node_entry& silent);
  cluster_result<void> take_predecessors_lines();
};

std::optional<scene_table> hosted_part(const scene_table& table, const std::vector<std::string>& kinds) {
  auto wanted = [&kinds](scene_kind k) {
    return std::find(kinds.begin(), kinds.end(), scene_kind_names[static_cast<std::size_t>(k)]) !=
           kinds.end();
  };
  scene_table part = table;
  std::erase_if(part.scenes, [&](const scene_def& s) {
    if (s.kind != scene_kind::space) return !wanted(s.kind);
    const scene_def* town = table.find_scene(s.space->bind_town);
    return town == nullptr || !wanted(town->kind);
  });
  if (part.scenes.empty()) return std::nullopt;
  return part;
}

cluster_result<std::unique_ptr<scene_node>> scene_node::join(const scene_table& table, scene_node_options o) {
  link_options lo;
  lo.url = o.url;
  lo.name = o.name;
  auto link = nats_link::connect(lo);
  if (!link) return link.error();
  auto nodes = (*link)->bucket(nodes_bucket);
  if (!nodes) return nodes.error();
  auto lines = (*link)->bucket(lines_bucket);
  if (!lines) return lines.error();
  // Gateways send it nothing until its first beat, which `start` makes once it listens.
  auto lease = node_lease::join(*nodes, o.name, 0, o.scenes, node_lease::listening::from_first_beat);
  if (!lease) return lease.error();
  auto i =
      std::make_unique<impl>(std::move(o), std::move(link).value(), *nodes, *lines, std::move(lease).value());
  if (auto taken = i->take_predecessors_lines(); !taken) return taken.error();
  cluster_directory_options dopt;
  dopt.warn = i->opt.warn;
  dopt.linked = [l = i->link.get()] { return l->connected(); };
  auto directory =
      make_synced_cluster_directory(table, line_store(i->lines), i->lease.record(), std::move(dopt));
  i->directory = std::move(directory.directory);
  i->counts = std::move(directory.counts);
  i->endpoint = std::make_unique<node_endpoint>(*i->link, i->opt.name, i->lease.record().epoch,
                                                node_endpoint_options{i->opt.dead_after, i->opt.resume});
  i->link_ups = i->link->reconnects();
  return std::unique_ptr<scene_node>(new scene_node(std::move(i)));
}

scene_node::scene_node(std::unique_ptr<impl> i) : impl_(std::move(i)) {}

scene_node::~scene_node() { stop(); }

cluster_result<id_block> scene_node::take_player_ids(std::int32_t count) {
  return cluster::take_player_ids(impl_->nodes, count);
}

std::shared_ptr<line_directory> scene_node::take_directory() { return std::move(impl_->directory); }

std::function<void(line_handle, phase_id, std::span<const line_event>)> scene_node::on_line_events() {
  return impl_->endpoint->on_line_events();
}

std::function<void(line_handle, std::span<const module_frame>)> scene_node::on_module_frames() {
  return impl_->endpoint->on_module_frames();
}

cluster_result<void> scene_node::start(world& w) {
  impl_->w = &w;
  // A claim asks the world where its player stands; the answer comes on the world's thread.
  auto where = [&w](player_id p, unique_function<void(location)> answer) {
    w.query([p, answer = std::move(answer)](const line_directory& d) mutable { answer(d.locate(p)); });
  };
  if (auto started = impl_->endpoint->start(w, std::move(where)); !started) return started;
  // The first beat at once: until it, gateways send this start nothing (`node_record::starting`).
  asio::post(impl_->io, [i = impl_.get()] {
    i->beat(clock::now());
    if (!i->is_fenced) i->beat_later();
  });
  impl_->poll_later();
  impl_->io_thread = std::thread([i = impl_.get()] { i->io.run(); });
  return {};
}

bool scene_node::fenced() const noexcept { return impl_->is_fenced.load(); }

void scene_node::stop() {
  if (impl_->io_thread.joinable()) {
    asio::post(impl_->io, [i = impl_.get()] { i->io.stop(); });
    impl_->io_thread.join();
  }
  impl_->endpoint->stop();
}

void scene_node::leave() {
  if (auto gone = declare_dead(impl_->nodes, self().name, impl_->lease.revision()); !gone)
    impl_->warn(fmt::format("leaving the cluster: {}", gone.error().message));
}

const node_record& scene_node::self() const noexcept { return impl_->lease.record(); }

scene_node_stats scene_node::stats() const {
  auto n = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  const auto& i = *impl_;
  scene_node_stats s;
  s.epoch = self().epoch;
  s.connected = i.link->connected();
  s.link_reconnects = i.link->reconnects();
  s.beats = n(i.beats), s.beat_failures = n(i.beat_failures), s.declared_dead = n(i.declared_dead);
  s.tombstoned = n(i.tombstoned), s.line_counts_written = n(i.line_counts_written);
  s.endpoint = i.endpoint->stats();
  return s;
}

void scene_node::impl::beat_later() {
  beat_timer.expires_after(opt.beat);
  beat_timer.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    beat(clock::now());
    if (!is_fenced) beat_later();
  });
}

void scene_node::impl::poll_later() {
  poll_timer.expires_after(opt.poll_every);
  poll_timer.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    endpoint->poll(clock::now());
    poll_later();
  });
}

void scene_node::impl::beat(clock::time_point now) {
  // Nobody could beat across a link outage, and the others reconnect when they can (one may come
  // back a while after this node): silence counts again only dead_after after it is noticed.
  if (const auto ups = link->reconnects(); ups != link_ups) {
    link_ups = ups;
    watch.restart(now + opt.dead_after);
  }
  if (auto b = lease.beat(static_cast<std::uint32_t>(w->snapshot()->players)); !b) {
    beat_failures.fetch_add(1, std::memory_order_relaxed);
    if (b.code() == cluster_errc::fenced) {
      is_fenced = true;
      if (opt.error) opt.error(fmt::format("{}: this node stops serving", b.error().message));
      return;
    }
    warn(b.error().message);  // the server is away: nobody can declare us meanwhile
    watch.restart(now + opt.dead_after);
    return;
  }
  beats.fetch_add(1, std::memory_order_relaxed);
  watch_others(now);
  // Once per beat, only the lines whose count changed: the world's thread never waits for this.
  line_counts_written.fetch_add(counts->sync(), std::memory_order_relaxed);
}

// A node whose record stood still for dead_after is declared dead (one watcher wins) and loses its
// lines; its players are placed again by their gateways.
void scene_node::impl::watch_others(clock::time_point now) {
  auto all = list_nodes(nodes);
  if (!all) {
    watch.restart(now + opt.dead_after);
    return warn(all.error().message);
  }
  watch.saw(*all, now);
  for (const auto& silent : watch.silent(now, opt.dead_after))
    if (silent.record.name != lease.record().name) take_lines_of(silent);
}

// A node started again under its name before the others declared its previous start dead (a quick
// restart after a crash) would leave that start's lines open in the directory for good: it takes them
// itself; the gateways see the new epoch and place the old start's players again.
cluster_result<void> scene_node::impl::take_predecessors_lines() {
  const auto& me = lease.record();
  if (me.epoch <= 1) return {};
  // The listing of the lines may time out on a loaded machine or a busy server: a start is not given
  // up for one such (the tombstoning is idempotent: a retry marks what the last try did not).
  auto taken = line_store(lines).tombstone(me.name, me.epoch - 1);
  auto backoff = start_backoff;
  for (int tries = 1; !taken && taken.code() == cluster_errc::unavailable && tries < start_tries; ++tries) {
    warn(fmt::format("node {}: taking epoch {}'s lines, try {} of {}: {}", me.name, me.epoch - 1, tries,
                     start_tries, taken.error().message));
    std::this_thread::sleep_for(backoff);  // the joining thread: nothing is served yet
    backoff *= 2;
    taken = line_store(lines).tombstone(me.name, me.epoch - 1);
  }
  if (!taken) return taken.error();
  if (taken->empty()) return {};  // it was declared dead: its lines went then
  tombstoned.fetch_add(taken->size(), std::memory_order_relaxed);
  warn(fmt::format("node {} (epoch {}) was not declared dead before this start: {} of its lines tombstoned",
                   me.name, me.epoch - 1, taken->size()));
  return {};
}

void scene_node::impl::take_lines_of(const node_entry& silent) {
  auto dead = declare_dead(nodes, silent.record.name, silent.revision);
  if (!dead) return;  // it beat meanwhile, or another watcher was first
  auto taken = line_store(lines).tombstone(dead->record.name, dead->record.epoch);
  if (!taken) {
    if (opt.error)
      opt.error(fmt::format("declared node {} (epoch {}) dead but could not take its lines: {}",
                            dead->record.name, dead->record.epoch, taken.error().message));
    return;
  }
  declared_dead.fetch_add(1, std::memory_order_relaxed);
  tombstoned.fetch_add(taken->size(), std::memory_order_relaxed);
  warn(fmt::format("node {} (epoch {}) silent for {} ms: declared dead, {} of its lines tombstoned",
                   dead->record.name, dead->record.epoch, opt.dead_after.count(), taken->size()));
}

}  // namespace scenert::cluster
