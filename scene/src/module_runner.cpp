#include "module_runner.hpp"

#include <algorithm>
#include <exception>
#include <limits>

#include <fmt/format.h>

namespace scenert::detail {

module_runner::module_runner(scene& line, std::unique_ptr<game_module> module, std::uint32_t seed,
                             player_store* store)
    : scene_(line), module_(std::move(module)), seed_(seed), store_(store) {
  if (store_ != nullptr) {
    back_ = std::make_shared<way_back>();
    back_->to = this;
  }
}

module_runner::~module_runner() {
  if (!back_) return;
  std::lock_guard lock(back_->m);
  back_->to = nullptr;
}

// A module that throws fails its line only: the scene stops ticking it and the world moves its
// players out. The exception never leaves the line's thread.
template <class F>
void module_runner::guarded(F&& hook) {
  if (scene_.broken()) return;
  try {
    hook();
  } catch (...) {
    scene_.fail_module();
  }
}

namespace {

// Three little-endian u32 an action: the bytes of the line's click_actions_opcode frame.
std::string click_bytes(const std::vector<click_action>& actions) {
  std::string out;
  for (const auto& a : actions)
    for (std::uint32_t v : {a.kind, a.opcode, a.range})
      for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
  return out;
}

}  // namespace

void module_runner::init() {
  guarded([&] {
    module_->on_init(*this);
    clicks_ = click_bytes(module_->click_actions());
  });
}

// Seeded by the table, the scene and the line number, never by history: a reopened line replays
// exactly what a fresh one would.
void module_runner::activate() {
  const std::uint64_t line_seed = (std::uint64_t{seed_} << 32) ^
                                  (std::uint64_t{scene_.def().id} * 0x9e3779b97f4a7c15ull) ^
                                  scene_.line().line;
  random_.seed(line_seed);
  guarded([&] { module_->on_active(*this); });
}

void module_runner::deactivate() {
  try {
    module_->on_inactive(*this);
  } catch (...) {  // the line closes anyway; what the module failed to clear is cleared below
  }
  timers_.clear();
  ticking_ = false;
  opening_id_.clear();
  grants_ = 0;
}

void module_runner::start_tick() {
  ticking_ = true;
  for (auto& t : timers_)
    if (!t.due) t.due = scene_.now() + t.wait;
}

void module_runner::tick(const tick_context& ctx) {
  run_due_timers(ctx.now);
  guarded([&] { module_->on_tick(*this, ctx); });
  ticking_ = false;
}

// The module hears of the player first; the player hears of the module's click actions after its
// view of the line (the batch's events go out before its frames).
void module_runner::entered(player_id p) {
  guarded([&] { module_->on_player_enter(*this, p); });
  if (!clicks_.empty() && !scene_.broken())
    scene_.send_frame({module_frame::audience::player, p, click_actions_opcode, clicks_, 0});
}

void module_runner::leaving(player_id p) {
  guarded([&] { module_->on_player_leave(*this, p); });
}

// Anything but ok goes back to the client that sent it, as a refusal naming the opcode.
void module_runner::message(player_id p, module_opcode opcode, std::string_view bytes) {
  guarded([&] {
    auto answer = module_->on_message(*this, p, opcode, bytes);
    if (!answer)
      scene_.send_frame({module_frame::audience::player, p, opcode, answer.error().message,
                         static_cast<std::uint8_t>(answer.code())});
  });
}

// ---- the player store ----------------------------------------------------------------

result<std::string, store_errc> module_runner::grant(player_id player, item_id item, std::int64_t count,
                                                     std::string id) {
  if (store_ == nullptr)
    return fail(store_errc::no_store, fmt::format("{} has no player store", scene_.name()));
  if (count <= 0)
    return fail(store_errc::bad_grant,
                fmt::format("a grant of {} of item {}: the count must be above 0", count, item));
  if (id.size() > max_grant_id_bytes)
    return fail(store_errc::bad_grant,
                fmt::format("a grant id of {} bytes: at most {}", id.size(), max_grant_id_bytes));
  if (id.empty()) id = fresh_grant_id();
  store_->write(scenert::grant{id, player, item, count},
                [back = back_, generation = scene_.line().generation](grant_receipt r) {
                  back->post(generation, std::move(r));
                });
  return id;
}

// Unique across lines, openings and runs: a random 128 bits per opening (drawn at its first grant),
// then the opening's count of grants.
std::string module_runner::fresh_grant_id() {
  if (opening_id_.empty()) {
    std::random_device entropy;
    for (int i = 0; i < 4; ++i) opening_id_ += fmt::format("{:08x}", entropy());
  }
  return fmt::format("{}-{}", opening_id_, ++grants_);
}

// The store's thread: the answer goes through the line's mailbox, so the line alone touches its
// state. A closed line's mailbox refuses it; the grant is in the store all the same.
void module_runner::way_back::post(std::uint32_t generation, grant_receipt receipt) {
  std::lock_guard lock(m);
  if (to == nullptr) return;
  (void)to->scene_.post([runner = to, generation, r = std::move(receipt)]() mutable {
    runner->granted(generation, std::move(r));
  });
}

// The frame first, then the hook: a module that answers in on_granted is heard after the 1013.
void module_runner::granted(std::uint32_t generation, grant_receipt r) {
  if (r.code == store_errc::ok && !r.repeated)
    scene_.send_frame(
        {module_frame::audience::player, r.what.player, 0, r.what.id, 0, true, r.what.item, r.what.count});
  if (generation != scene_.line().generation || !scene_.active()) return;  // another opening's grant
  guarded([&] { module_->on_granted(*this, r); });
}

// ---- timers ----------------------------------------------------------------------------

timer_id module_runner::add_timer(nanoseconds wait, nanoseconds period,
                                  std::function<void(module_context&)> fn) {
  // A timer never runs in the tick that made it: a zero delay means the next tick.
  wait = std::max(wait, nanoseconds(1));
  timer t{next_timer_++, std::nullopt, wait, period, std::move(fn)};
  if (ticking_) t.due = scene_.now() + wait;
  timers_.push_back(std::move(t));
  return timers_.back().id;
}

timer_id module_runner::after(nanoseconds delay, std::function<void(module_context&)> fn) {
  return add_timer(delay, nanoseconds(0), std::move(fn));
}

timer_id module_runner::every(nanoseconds period, std::function<void(module_context&)> fn) {
  period = std::max(period, nanoseconds(1));
  return add_timer(period, period, std::move(fn));
}

bool module_runner::cancel(timer_id id) {
  auto it = std::find_if(timers_.begin(), timers_.end(), [id](const timer& t) { return t.id == id; });
  if (it == timers_.end()) return false;
  timers_.erase(it);
  return true;
}

// Due timers run earliest first (ties: the one made first). A periodic timer late by more than a
// period runs once and keeps its phase, never a burst of catch-up runs (as the pool's ticks).
void module_runner::run_due_timers(time_point now) {
  while (!scene_.broken()) {
    auto next = timers_.end();
    for (auto it = timers_.begin(); it != timers_.end(); ++it)
      if (it->due && *it->due <= now && (next == timers_.end() || *it->due < *next->due)) next = it;
    if (next == timers_.end()) return;
    auto fn = next->fn;  // the callback may cancel its own timer or add others
    if (next->period.count() == 0) {
      timers_.erase(next);
    } else {
      const auto periods = (now - *next->due) / next->period + 1;
      next->due = *next->due + periods * next->period;
    }
    guarded([&] { fn(*this); });
  }
}

// ---- frames, entities ------------------------------------------------------------------

std::optional<grid::cell_point> module_runner::where(player_id player) const {
  auto e = scene_.entity_of(player);
  if (!e) return std::nullopt;
  return scene_.grid().position_of(*e);
}

void module_runner::send(player_id player, module_opcode opcode, std::string_view bytes) {
  scene_.send_frame({module_frame::audience::player, player, opcode, std::string(bytes), 0});
}

void module_runner::send_to_viewers(monster_id entity, module_opcode opcode, std::string_view bytes) {
  scene_.send_frame({module_frame::audience::viewers, entity, opcode, std::string(bytes), 0});
}

void module_runner::send_to_line(module_opcode opcode, std::string_view bytes) {
  scene_.send_frame({module_frame::audience::line, 0, opcode, std::string(bytes), 0});
}

std::optional<monster_id> module_runner::spawn(const entity_spec& spec) {
  auto id = scene_.place_entity(spec);
  if (!id) return std::nullopt;
  return monster_id{*id};
}

namespace {
// Entity ids are the grid's (32 bits): a larger one names nothing on the line.
std::optional<grid::entity_id> grid_id(monster_id m) {
  if (m > std::numeric_limits<grid::entity_id>::max()) return std::nullopt;
  return static_cast<grid::entity_id>(m);
}
}  // namespace

bool module_runner::remove(monster_id entity) {
  auto id = grid_id(entity);
  return id && scene_.remove_entity(*id);
}

bool module_runner::set_look(monster_id entity, entity_look look) {
  auto id = grid_id(entity);
  return id && scene_.set_entity_look(*id, look);
}

bool module_runner::move(monster_id entity, grid::cell_point to) {
  auto id = grid_id(entity);
  return id && scene_.move_entity(*id, to);
}

std::optional<entity_look> module_runner::look(monster_id entity) const {
  auto id = grid_id(entity);
  return id ? scene_.look_of(*id) : std::nullopt;
}

std::optional<grid::cell_point> module_runner::where_entity(monster_id entity) const {
  auto id = grid_id(entity);
  return id ? scene_.entity_at(*id) : std::nullopt;
}

std::optional<monster_view> module_runner::brain(monster_id entity) const {
  auto id = grid_id(entity);
  return id ? scene_.monster(*id) : std::nullopt;
}

}  // namespace scenert::detail
