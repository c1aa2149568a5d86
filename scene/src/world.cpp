#include <scenert/scene/world.hpp>

#include <ctime>

#include <fmt/format.h>

#include "world_impl.hpp"

namespace scenert {

// ---- the public face: everything goes through the inbox --------------------------------

std::shared_ptr<world> world::create(const scene_table& table, processor_pool& pool, world_options options) {
  std::shared_ptr<world> w(new world(table, pool, std::move(options)));
  w->self_ = w;
  return w;
}

world::world(const scene_table& table, processor_pool& pool, world_options options)
    : service("world"), impl_(std::make_unique<impl>(*this, table, pool, std::move(options))) {}

world::~world() = default;

void world::start() {
  auto added = impl_->pool.add(self_.lock(), impl_->opt.hz);
  SCENERT_ASSERT(added.has_value(), "world::start: the pool refused the world");
}

void world::submit(const world_request& request, world_reply reply) {
  auto& in = *impl_;
  std::lock_guard lock(in.inbox_mutex);
  auto& e = in.inbox.emplace_back();  // built in place: the inbox is the hot path
  e.req = request;
  e.reply = std::move(reply);
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
  e.fn = std::make_unique<world_event::directory_fn>([d = std::move(done)](const line_directory&) mutable {
    if (d) d();
  });
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
  e.fn = std::make_unique<world_event::directory_fn>(std::move(fn));
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
  return c->objects[line.line - 1];
}

void world::on_active() {
  impl_->ensure_min_lines();
  impl_->publish(true);
}

void world::on_tick(const tick_context&) {
  impl_->drain();
  impl_->run_grace();
  if (!impl_->shutting_down) impl_->ensure_min_lines();
  impl_->check_shut_down();
  impl_->flush_roster();
  impl_->publish(false);
}

static_assert(sizeof(world_event) <= 128, "world_event: keep the inbox's stream small");

// ---- impl: inbox and dispatch ------------------------------------------------------------

world::impl::impl(world& w, const scene_table& t, processor_pool& p, world_options o)
    : self(w), table(t), pool(p), opt(std::move(o)), dir(opt.directory) {
  if (!dir) dir = make_local_line_directory(table);
  time = pool.options().manual ? static_cast<const clock*>(pool.options().manual) : &steady;
  std::unordered_map<map_id, std::shared_ptr<const grid::map_data>> maps;
  for (const auto& m : table.maps) maps.emplace(m.id, make_map_data(m));
  for (const auto& def : table.scenes) {
    if (def.kind == scene_kind::space) continue;  // phases are children of town lines
    auto& c = containers[def.id];
    c.def = &def;
    auto it = maps.find(def.map);
    SCENERT_ASSERT(it != maps.end(), "world: a scene names an unknown map (validate the table first)");
    c.map = it->second;
    ordered.push_back(&c);
  }
  snap = std::make_shared<world_snapshot>();
}

std::int64_t world::impl::now_ns() const { return time->now().time_since_epoch().count(); }

void world::impl::push(world_event e) {
  std::lock_guard lock(inbox_mutex);
  inbox.push_back(std::move(e));
}

void world::impl::scene_empty(line_handle line) {
  world_event e;
  e.what = world_event::type::scene_empty;
  e.req.line = line;
  push(std::move(e));
}

void world::impl::player_left(line_handle line, player_id player) {
  world_event e;
  e.what = world_event::type::player_left;
  e.req.line = line;
  e.req.player = player;
  push(std::move(e));
}

void world::impl::scene_quarantined(line_handle line) {
  world_event e;
  e.what = world_event::type::quarantined;
  e.req.line = line;
  push(std::move(e));
}

// Takes the whole inbox at once: one lock per tick for the producers' side, then O(1) per event.
void world::impl::drain() {
  {
    std::lock_guard lock(inbox_mutex);
    batch.swap(inbox);
  }
  if (batch.empty()) return;
  auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
  };
  const auto began = cpu_now();
  for (auto& e : batch) handle(e);
  batch.clear();
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
    case world_event::type::shutdown:
      begin_shutdown(std::move(*e.fn));
      break;
    case world_event::type::query:
    case world_event::type::run:
      (*e.fn)(*dir);
      break;
  }
}

}  // namespace scenert
