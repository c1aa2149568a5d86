#include <scenert/loadtest/plan.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

namespace scenert::loadtest {
namespace {

using rng = std::mt19937_64;

// Seconds a party member waits after its leader before following it, so the leader has landed
// (a switch lands once the old line's scene ticked: up to one frame at 5 Hz, plus the world's tick).
constexpr double follow_delay = 0.3;
constexpr double member_spacing = 0.005;

double uniform(rng& r, double a, double b) { return std::uniform_real_distribution<double>(a, b)(r); }
std::size_t pick(rng& r, std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(r); }

std::uint32_t room_of(const scene_def& d) { return std::max(d.capacity, d.hard_capacity); }

// The scenes a plan draws from: where players live, where parties fight, and the phases of towns.
struct scene_sets {
  std::vector<const scene_def*> home, dungeons, spaces;
};

scene_sets sort_scenes(const scene_table& t) {
  scene_sets s;
  for (const auto& d : t.scenes) {
    if (d.kind == scene_kind::town || d.kind == scene_kind::field) s.home.push_back(&d);
    if (d.kind == scene_kind::dungeon) s.dungeons.push_back(&d);
    if (d.kind == scene_kind::space) s.spaces.push_back(&d);
  }
  if (s.home.empty())  // a table of dungeons or guilds only: live in whatever has lines
    for (const auto& d : t.scenes)
      if (d.kind != scene_kind::space && d.kind != scene_kind::dungeon) s.home.push_back(&d);
  if (s.home.empty()) s.home = s.dungeons;
  return s;
}

class planner {
 public:
  planner(const scene_table& t, const plan_options& o) : table_(t), options_(o), sets_(sort_scenes(t)) {
    rng_.seed(o.seed);
    rate_ = o.rate > 0 ? o.rate : std::max(1.0, o.players / std::max(0.25, o.seconds / 4));
  }

  load_plan run() {
    for (std::uint32_t first = 0; first < options_.players && !sets_.home.empty();) {
      auto size = static_cast<std::uint32_t>(std::uniform_int_distribution<int>(1, 5)(rng_));
      size = std::min(size, options_.players - first);
      plan_party(first, size);
      first += size;
    }
    return finish();
  }

 private:
  // Where one member is planned to be from a given time on.
  using timeline = std::vector<std::pair<double, const scene_def*>>;

  void plan_party(std::uint32_t first, std::uint32_t size) {
    std::vector<timeline> where(size);
    const scene_def* home = sets_.home[pick(rng_, sets_.home.size())];
    for (std::uint32_t j = 0; j < size; ++j) {
      const double arrive = (first + j) / rate_;
      add(arrive, {.player = id(first + j), .what = step_kind::enter, .scene = home->id});
      where[j].emplace_back(arrive, home);
    }
    const double start = (first + size - 1) / rate_ + 0.2;
    const double end = start + uniform(rng_, 0.3, 1.1) * options_.seconds;
    plan_events(first, size, start, std::min(end, options_.seconds), where);
    for (std::uint32_t j = 0; j < size; ++j)
      plan_walks(id(first + j), where[j], std::min(end, options_.seconds));
    for (std::uint32_t j = 0; j < size; ++j)
      add(end + j * member_spacing, {.player = id(first + j), .what = step_kind::leave});
  }

  void plan_events(std::uint32_t first, std::uint32_t size, double t, double end,
                   std::vector<timeline>& where) {
    t += uniform(rng_, 0.5, 2.0);
    while (t < end) {
      const double roll = uniform(rng_, 0, 1);
      const scene_def* at = where[0].back().second;
      if (roll < 0.4)
        t = dungeon_run(first, size, t, end, where);
      else if (roll < 0.7)
        t = change_home(first, size, t, at, where);
      else if (roll < 0.9 && options_.phases)
        t = phase_visit(first, size, t, end, at);
      t += uniform(rng_, 1.0, 3.0);
    }
  }

  // The leader transfers into a dungeon, the mates join it there, and later all go home; only
  // when everyone is back before the party leaves.
  double dungeon_run(std::uint32_t first, std::uint32_t size, double t, double end,
                     std::vector<timeline>& where) {
    std::vector<const scene_def*> fit;
    for (const auto* d : sets_.dungeons)
      if (room_of(*d) >= size && (size == 1 || d->capacity > 1)) fit.push_back(d);
    if (fit.empty()) return t;
    const scene_def* dungeon = fit[pick(rng_, fit.size())];
    const double stay = uniform(rng_, 0.8, 2.5);
    if (t + follow_delay + stay + size * member_spacing >= end) return t;
    const bool private_run =
        dungeon->instances == instance_mode::party || (dungeon->instances == instance_mode::both && size > 1);
    if (private_run) {  // no one to follow: the world seats every member in the party's instance
      const party_id party = ++parties_;
      for (std::uint32_t j = 0; j < size; ++j) {
        const double at = t + j * member_spacing;
        add(at, {.player = id(first + j),
                 .what = step_kind::enter_instance,
                 .scene = dungeon->id,
                 .party = party});
        where[j].emplace_back(at, dungeon);
      }
      if (t < options_.seconds) ++party_runs_[dungeon->id];
    } else {
      follow(first, size, t, step_kind::transfer, dungeon, where);
    }
    t += follow_delay + stay;
    const scene_def* back = sets_.home[pick(rng_, sets_.home.size())];
    for (std::uint32_t j = 0; j < size; ++j) {
      add(t + j * member_spacing, {.player = id(first + j), .what = step_kind::transfer, .scene = back->id});
      where[j].emplace_back(t + j * member_spacing, back);
    }
    return t;
  }

  // The leader moves to another town or field; the mates join its line.
  double change_home(std::uint32_t first, std::uint32_t size, double t, const scene_def* at,
                     std::vector<timeline>& where) {
    std::vector<const scene_def*> other;
    for (const auto* d : sets_.home)
      if (d != at) other.push_back(d);
    if (other.empty()) return t;
    follow(first, size, t, step_kind::transfer, other[pick(rng_, other.size())], where);
    return t;
  }

  // Every member visits one phase of its town and comes back.
  double phase_visit(std::uint32_t first, std::uint32_t size, double t, double end, const scene_def* at) {
    std::vector<const scene_def*> bound;
    for (const auto* s : sets_.spaces)
      if (s->space && s->space->bind_town == at->id) bound.push_back(s);
    if (bound.empty()) return t;
    const scene_def* space = bound[pick(rng_, bound.size())];
    const double back = t + uniform(rng_, 1.0, 2.0);
    if (back + size * member_spacing >= end) return t;
    for (std::uint32_t j = 0; j < size; ++j) {
      add(t + j * member_spacing,
          {.player = id(first + j), .what = step_kind::enter_phase, .scene = space->id});
      add(back + j * member_spacing, {.player = id(first + j), .what = step_kind::leave_phase});
    }
    // A phase sits on its town's map: walks keep their bounds.
    return back;
  }

  // The leader does `what` into `to`; the mates follow it with join_team.
  void follow(std::uint32_t first, std::uint32_t size, double t, step_kind what, const scene_def* to,
              std::vector<timeline>& where) {
    add(t, {.player = id(first), .what = what, .scene = to->id});
    where[0].emplace_back(t, to);
    for (std::uint32_t j = 1; j < size; ++j) {
      const double at = t + follow_delay + j * member_spacing;
      add(at, {.player = id(first + j), .what = step_kind::join_team, .mate = id(first)});
      where[j].emplace_back(at, to);
    }
  }

  void plan_walks(player_id p, const timeline& where, double end) {
    const double period = options_.move_period;
    for (double t = where.front().first + uniform(rng_, 0.2, 2 * period); t < end;
         t += uniform(rng_, 0.5 * period, 1.5 * period)) {
      const scene_def* s = where.front().second;
      for (const auto& [from, scene] : where)
        if (from <= t) s = scene;
      const map_def* m = table_.find_map(s->map);
      if (!m || m->width == 0 || m->height == 0) continue;
      add(t, {.player = p,
              .what = step_kind::move,
              .x = static_cast<std::uint32_t>(pick(rng_, m->width)),
              .y = static_cast<std::uint32_t>(pick(rng_, m->height))});
    }
  }

  static player_id id(std::uint32_t index) { return player_id{index} + 1; }

  void add(double at, plan_step s) {
    if (at >= options_.seconds) return;
    s.at = std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(at * 1e9)));
    steps_.push_back(s);
  }

  load_plan finish() {
    load_plan plan;
    std::stable_sort(steps_.begin(), steps_.end(),
                     [](const plan_step& a, const plan_step& b) { return a.at < b.at; });
    plan.steps = std::move(steps_);
    plan.players = options_.players;
    plan.rate = rate_;
    plan.party_runs = std::move(party_runs_);
    plan.digest = 1469598103934665603ull;
    auto mix = [&](std::uint64_t v) { plan.digest = (plan.digest ^ v) * 1099511628211ull; };
    for (const auto& s : plan.steps) {
      ++plan.counts[static_cast<std::size_t>(s.what)];
      mix(static_cast<std::uint64_t>(s.at.count()));
      mix(s.player);
      mix(static_cast<std::uint64_t>(s.what));
      mix(s.scene);
      mix(s.mate);
      mix(s.party);
      mix((std::uint64_t{s.x} << 32) | s.y);
    }
    return plan;
  }

  const scene_table& table_;
  plan_options options_;
  scene_sets sets_;
  rng rng_;
  double rate_ = 1;
  party_id parties_ = 0;
  std::map<scene_id, std::uint64_t> party_runs_;
  std::vector<plan_step> steps_;
};

}  // namespace

std::string_view to_string(step_kind k) noexcept { return step_kind_names[static_cast<std::size_t>(k)]; }

load_plan make_plan(const scene_table& table, const plan_options& options) {
  return planner(table, options).run();
}

}  // namespace scenert::loadtest
