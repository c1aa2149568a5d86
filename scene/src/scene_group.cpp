#include <scenert/scene/scene_group.hpp>

#include <algorithm>
#include <utility>

#include <scenert/scene/scene.hpp>

namespace scenert {

scene_group::scene_group(std::string name, scene_group_options options)
    : service(std::move(name)), options_(options) {
  SCENERT_ASSERT(options_.hz > 0, "scene_group: frame rate must be positive");
  if (options_.member_budget.count() == 0) {
    auto period = std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(1.0 / options_.hz));
    options_.member_budget = period / std::max<std::uint32_t>(1, options_.slots);
  }
}

scene_group::~scene_group() = default;

void scene_group::add_member(std::shared_ptr<scene> s) {
  SCENERT_ASSERT(s != nullptr, "add_member: null scene");
  const bool queued = changes_.post({std::move(s), true, {}});
  SCENERT_ASSERT(queued, "add_member: the group's inbox is closed");
}

void scene_group::remove_member(std::shared_ptr<scene> s, unique_function<void()> on_removed) {
  SCENERT_ASSERT(s != nullptr, "remove_member: null scene");
  const bool queued = changes_.post({std::move(s), false, std::move(on_removed)});
  SCENERT_ASSERT(queued, "remove_member: the group's inbox is closed");
}

namespace {

constexpr std::size_t prefetch_ahead = 2;

// The first cache lines of a member: the service's fields and the scene's per-tick ones.
void prefetch(const scene& s) {
  const auto* p = reinterpret_cast<const char*>(&s);
  __builtin_prefetch(p);
  __builtin_prefetch(p + 64);
  __builtin_prefetch(p + 128);
}

}  // namespace

time_point scene_group::now() const {
  return options_.time ? options_.time->now() : std::chrono::steady_clock::now();
}

void scene_group::apply_changes() {
  (void)changes_.drain([this](member_change& c) { apply(c); });
}

void scene_group::apply(member_change& c) {
  if (c.joins) {
    c.s->activate();
    const std::uint64_t failed = c.s->failures();
    members_.push_back({std::move(c.s), 0, failed});
    return;
  }
  auto it = std::find_if(members_.begin(), members_.end(), [&](const member& m) { return m.s == c.s; });
  if (it != members_.end()) {
    members_.erase(it);  // keeps the others' order
    c.s->deactivate();
  }
  if (c.on_removed) c.on_removed();
}

void scene_group::on_tick(const tick_context& ctx) {
  apply_changes();
  count_.store(members_.size(), std::memory_order_relaxed);
  const time_point start = now();
  time_point began = start;  // one clock read per member: its end is the next one's start
  const std::size_t n = members_.size();
  for (std::size_t i = 0; i < n; ++i) {
    auto& m = members_[i];
    // Idle members cost mostly the cache misses on their objects: fetch a later one meanwhile.
    if (i + prefetch_ahead < n) prefetch(*members_[i + prefetch_ahead].s);
    // The next member's object was fetched a member ago: fetch what its AI reads through it.
    if (i + 1 < n) members_[i + 1].s->prefetch_ai();
    // Members run one after another: each is told the group's interval plus the time the
    // members before it took in this tick (seed 004), so its own clock does not drift.
    tick_context member_ctx{ctx.interval + (began - start), began, m.ticks++};
    // The failure count lives in the service's shared state, a cache line of its own: read only
    // when a tick did not go well, not for every idle member.
    if (m.s->tick(member_ctx, options_.quarantine_after, options_.mailbox_batch) != tick_outcome::ok) {
      const std::uint64_t failed = m.s->failures();
      failures_.fetch_add(failed - std::exchange(m.failures, failed), std::memory_order_relaxed);
    }
    const time_point ended = now();
    if (ended - began > options_.member_budget) {
      overruns_.fetch_add(1, std::memory_order_relaxed);
      m.s->count_overrun();
    }
    began = ended;
  }
}

void scene_group::on_inactive() {
  apply_changes();
  for (auto& m : members_) m.s->deactivate();
  members_.clear();
  count_.store(0, std::memory_order_relaxed);
}

}  // namespace scenert
