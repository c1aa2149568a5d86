#include <scenert/scene/world.hpp>

#include <ctime>

#include <fmt/format.h>

#include "world_impl.hpp"

namespace scenert {

// The default for a port that hosts no lines (a cluster's gateway): a request like any other. Out of
// line: a reply is moved here, which needs `placement` whole.
void world_port::to_line(const world_request& request, world_reply reply) {
  submit(request, std::move(reply));
}

// ---- the public face: everything goes through the inbox --------------------------------

std::shared_ptr<world> world::create(const scene_table& table, processor_pool& pool, world_options options) {
  std::shared_ptr<world> w(new world(table, pool, std::move(options)));
  w->self_ = w;
  return w;
}

world::world(const scene_table& table, processor_pool& pool, world_options options)
    : service("world"), impl_(std::make_unique<impl>(*this, table, pool, std::move(options))) {}

world::~world() = default;

std::shared_ptr<const world_maps> world_maps::build(const scene_table& table) {
  auto maps = std::make_shared<world_maps>();
  for (const auto& m : table.maps) {
    auto data = make_map_data(m);
    auto nav = make_nav_map(*data);
    maps->by_id.emplace(m.id, shared_map{std::move(data), std::move(nav)});
  }
  return maps;
}

void world::start() {
  auto added = impl_->pool.add(self_.lock(), impl_->opt.hz);
  SCENERT_ASSERT(added.has_value(), "world::start: the pool refused the world");
}

void world::submit(const world_request& request, world_reply reply) {
  const bool queued = impl_->events.emplace(request, std::move(reply));  // built in place: the hot path
  SCENERT_ASSERT(queued, "world: the inbox is closed");
}

// A client's move or message skips the world's tick: the line checks where the player stands.
void world::to_line(const world_request& request, world_reply reply) {
  const bool for_line = request.what == world_request::kind::message ||
                        (request.what == world_request::kind::move && request.line.scene != 0);
  if (!for_line) return submit(request, std::move(reply));
  if (impl_->post_to_line(request)) {
    if (reply) reply(world_result(placement{request.line, 0, request.phase}));
    return;
  }
  impl_->stale_posts.fetch_add(1, std::memory_order_relaxed);
  if (reply)
    reply(world_result(fail(
        world_errc::stale_line,
        fmt::format("player {}: {} meant for {}: no such line is open now", request.player,
                    request.what == world_request::kind::move ? "move" : "message", where(request.line)))));
}

std::future<world_result> world::submit(const world_request& request) {
  std::promise<world_result> promise;
  auto future = promise.get_future();
  submit(request, [p = std::move(promise)](world_result r) mutable { p.set_value(std::move(r)); });
  return future;
}

void world::shutdown(unique_function<void()> done) {
  world_event e;
  e.what = world_event::type::shutdown;
  e.carried = std::make_unique<world_event::payload>(
      world_event::directory_fn([d = std::move(done)](const line_directory&) mutable {
        if (d) d();
      }));
  impl_->push(std::move(e));
}

std::future<void> world::shutdown() {
  std::promise<void> promise;
  auto future = promise.get_future();
  shutdown([p = std::move(promise)]() mutable { p.set_value(); });
  return future;
}

std::shared_ptr<const world_snapshot> world::snapshot() const {
  std::lock_guard lock(impl_->snap_mutex);
  return impl_->snap;
}

void world::query(unique_function<void(const line_directory&)> fn) {
  world_event e;
  e.what = world_event::type::query;
  e.carried = std::make_unique<world_event::payload>(std::move(fn));
  impl_->push(std::move(e));
}

std::future<location> world::locate(player_id player) {
  std::promise<location> promise;
  auto future = promise.get_future();
  query([player, p = std::move(promise)](const line_directory& d) mutable { p.set_value(d.locate(player)); });
  return future;
}

std::shared_ptr<scene> world::line_object(line_handle line) const {
  auto* c = impl_->find(line.scene);
  if (!c || !impl_->dir->check(line)) return nullptr;
  return c->lines[line.line - 1].object;
}

void world::on_active() {
  impl_->ensure_min_lines();
  impl_->publish(true);
}

void world::on_tick(const tick_context&) {
  impl_->drain();
  impl_->run_grace();
  if (!impl_->shutting_down) impl_->ensure_min_lines();
  impl_->flush_roster();
  impl_->check_shut_down();
  impl_->publish(false);
}

static_assert(sizeof(world_event) <= 160, "world_event: keep the inbox's stream small");

// ---- impl: inbox and dispatch ------------------------------------------------------------

world::impl::impl(world& w, const scene_table& t, processor_pool& p, world_options o)
    : self(w), table(t), pool(p), opt(std::move(o)), dir(opt.directory) {
  if (!dir) dir = make_local_line_directory(table);
  time = pool.options().manual ? static_cast<const clock*>(pool.options().manual) : &steady;
  const auto built = opt.maps ? opt.maps : world_maps::build(table);
  const auto& maps = built->by_id;
  for (const auto& def : table.scenes) {
    if (def.kind == scene_kind::space) continue;  // phases are children of town lines
    auto& c = containers[def.id];
    c.def = &def;
    auto it = maps.find(def.map);
    SCENERT_ASSERT(it != maps.end(), "world: a scene names an unknown map (validate the table first)");
    SCENERT_ASSERT(def.hard_capacity >= def.capacity,
                   "world: hard_capacity below capacity (validate the table first)");
    c.map = it->second.data;
    c.nav = it->second.nav;
    ordered.push_back(&c);
  }
  snap = std::make_shared<world_snapshot>();
}

std::int64_t world::impl::now_ns() const { return time->now().time_since_epoch().count(); }

std::string where(line_handle l) {
  return fmt::format("scene {} line {} (generation {})", l.scene, l.line, l.generation);
}

// The world's inbox never closes: a request after shutdown is answered shutting_down.
void world::impl::push(world_event e) {
  const bool queued = events.post(std::move(e));
  SCENERT_ASSERT(queued, "world: the inbox is closed");
}

void world::impl::notice(world_event::type what, line_handle line, player_id player) {
  world_event e;
  e.what = what;
  e.req.line = line;
  e.req.player = player;
  push(std::move(e));
}

void world::impl::scene_empty(line_handle line) { notice(world_event::type::scene_empty, line); }

void world::impl::player_left(line_handle line, player_id player) {
  notice(world_event::type::player_left, line, player);
}

void world::impl::scene_quarantined(line_handle line) { notice(world_event::type::quarantined, line); }

// Takes what is queued when the tick begins (posts meanwhile wait for the next tick), O(1) each.
void world::impl::drain() {
  const std::size_t queued = events.depth();
  if (queued == 0) return;
  auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
  };
  const auto began = cpu_now();
  (void)events.drain([this](world_event& e) { handle(e); }, queued);
  busy_ns += cpu_now() - began;
}

void world::impl::handle(world_event& e) {
  switch (e.what) {
    case world_event::type::request: {
      auto answer = apply(e.req, e.reply);
      ++requests;
      if (answer) {
        if (!answer->has_value()) ++errors;
        if (e.reply) e.reply(std::move(*answer));
      }
      break;
    }
    case world_event::type::scene_empty:
      on_scene_empty(e.req.line);
      break;
    case world_event::type::player_left:
      on_player_left(e.req.line, e.req.player);
      break;
    case world_event::type::quarantined:
      on_quarantined(e.req.line);
      break;
    case world_event::type::line_closed:
      on_line_closed(e.req.line);
      break;
    case world_event::type::group_removed:
      groups[e.index].in_pool = false;
      groups[e.index].removing = false;
      --groups_in_pool;
      offer_room(e.index);  // may take members again
      break;
    case world_event::type::phase_answer:
      on_phase_answer(e);
      break;
    case world_event::type::phase_closed:
      on_phase_closed(e.req.line, e.index, std::get<std::vector<player_id>>(*e.carried));
      break;
    case world_event::type::shutdown:
      begin_shutdown(std::move(std::get<world_event::directory_fn>(*e.carried)));
      break;
    case world_event::type::query:
      std::get<world_event::directory_fn> (*e.carried)(*dir);
      break;
  }
}

}  // namespace scenert
