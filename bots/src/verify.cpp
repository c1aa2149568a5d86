#include <scenert/bots/verify.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace scenert::bots {
namespace {

using json = nlohmann::json;

// ---- /lines/SCENE/LINE -------------------------------------------------------------------------

// Reads fields and keeps the first error: a bad field reads as 0 or as an empty array, so a parse
// runs to its end and checks `error` once instead of after every field.
struct field_reader {
  std::string error;

  bool ok() const noexcept { return error.empty(); }
  void refuse(const std::string& path, std::string_view reason) {
    if (ok()) error = fmt::format("{}: {}", path.empty() ? "/" : path, reason);
  }
  const json* get(const json& object, const std::string& path, std::string_view key) {
    auto it = object.find(key);
    if (it != object.end()) return &*it;
    refuse(path, "missing");
    return nullptr;
  }

  std::uint32_t u32(const json& object, const std::string& path, std::string_view key) {
    const json* v = get(object, path, key);
    if (v == nullptr) return 0;
    if (!v->is_number_unsigned()) {
      refuse(path, "not an unsigned integer");
      return 0;
    }
    if (v->get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max()) {
      refuse(path, "out of range");
      return 0;
    }
    return v->get<std::uint32_t>();
  }
  std::int32_t i32(const json& object, const std::string& path, std::string_view key) {
    const json* v = get(object, path, key);
    if (v == nullptr) return 0;
    if (!v->is_number_integer()) {
      refuse(path, "not an integer");
      return 0;
    }
    const bool fits = v->is_number_unsigned()
                          ? v->get<std::uint64_t>() <= std::numeric_limits<std::int32_t>::max()
                          : v->get<std::int64_t>() >= std::numeric_limits<std::int32_t>::min() &&
                                v->get<std::int64_t>() <= std::numeric_limits<std::int32_t>::max();
    if (!fits) {
      refuse(path, "out of range");
      return 0;
    }
    return v->get<std::int32_t>();
  }
  double number(const json& object, const std::string& path, std::string_view key) {
    const json* v = get(object, path, key);
    if (v == nullptr) return 0;
    if (!v->is_number()) {
      refuse(path, "not a number");
      return 0;
    }
    return v->get<double>();
  }
  // An absent optional array reads as empty.
  const json& array(const json& object, const std::string& path, std::string_view key, bool required) {
    static const json empty = json::array();
    auto it = object.find(key);
    if (it == object.end()) {
      if (required) refuse(path, "missing");
      return empty;
    }
    if (!it->is_array()) {
      refuse(path, "not an array");
      return empty;
    }
    return *it;
  }
  bool object(const json& v, const std::string& path) {
    if (!v.is_object()) refuse(path, "not an object");
    return v.is_object();
  }
};

std::string at(const std::string& path, std::string_view key) { return fmt::format("{}/{}", path, key); }
std::string at(const std::string& path, std::size_t i) { return fmt::format("{}/{}", path, i); }

view_geometry read_geometry(field_reader& r, const json& parent, const std::string& path) {
  view_geometry g;
  const std::string p = at(path, "geometry");
  const json* j = r.get(parent, p, "geometry");
  if (j == nullptr || !r.object(*j, p)) return g;
  g.width = r.u32(*j, at(p, "width"), "width");
  g.height = r.u32(*j, at(p, "height"), "height");
  g.cell_size = r.number(*j, at(p, "cell_size"), "cell_size");
  g.origin_x = r.number(*j, at(p, "origin_x"), "origin_x");
  g.origin_z = r.number(*j, at(p, "origin_z"), "origin_z");
  g.area_width = r.u32(*j, at(p, "area_width"), "area_width");
  g.area_height = r.u32(*j, at(p, "area_height"), "area_height");
  g.eyesight_x = r.u32(*j, at(p, "eyesight_x"), "eyesight_x");
  g.eyesight_y = r.u32(*j, at(p, "eyesight_y"), "eyesight_y");
  if (!(g.cell_size > 0) || !std::isfinite(g.cell_size)) r.refuse(at(p, "cell_size"), "must be above 0");
  // An area of 0 cells would divide by zero when placing players.
  if (g.area_width == 0) r.refuse(at(p, "area_width"), "must be at least 1");
  if (g.area_height == 0) r.refuse(at(p, "area_height"), "must be at least 1");
  return g;
}

// Reads `parent`'s "players" into `v`; a player twice in one document is refused (`pids` spans it).
void read_players(field_reader& r, const json& parent, const std::string& path, true_view& v,
                  std::unordered_set<std::int32_t>& pids) {
  const std::string p = at(path, "players");
  const json& list = r.array(parent, p, "players", true);
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    const std::string pi = at(p, i);
    if (!r.object(list[i], pi)) break;
    true_player q{r.i32(list[i], at(pi, "id"), "id"), r.u32(list[i], at(pi, "x"), "x"),
                  r.u32(list[i], at(pi, "y"), "y")};
    if (!r.ok()) break;
    if (q.x >= v.geometry.width)
      r.refuse(at(pi, "x"), fmt::format("{} is off the map (width {})", q.x, v.geometry.width));
    else if (q.y >= v.geometry.height)
      r.refuse(at(pi, "y"), fmt::format("{} is off the map (height {})", q.y, v.geometry.height));
    else if (!pids.insert(q.pid).second)
      r.refuse(at(pi, "id"), fmt::format("player {} twice", q.pid));
    v.players.push_back(q);
  }
}

void read_phases(field_reader& r, const json& doc, std::vector<true_view>& views,
                 std::unordered_set<std::int32_t>& pids) {
  const json& list = r.array(doc, "/phases", "phases", false);
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    const std::string p = at("/phases", i);
    if (!r.object(list[i], p)) break;
    true_view v{views.front().scene, views.front().line, r.u32(list[i], at(p, "phase"), "phase"), {}, {}};
    (void)r.u32(list[i], at(p, "space"), "space");  // checked, not kept: a phase id names it on its line
    if (r.ok() && v.phase == 0) r.refuse(at(p, "phase"), "0 is the line itself");
    for (const auto& other : views)
      if (r.ok() && other.phase == v.phase) r.refuse(at(p, "phase"), fmt::format("phase {} twice", v.phase));
    v.geometry = read_geometry(r, list[i], p);
    if (r.ok()) read_players(r, list[i], p, v, pids);
    views.push_back(std::move(v));
  }
}

result<json, std::string> parse_json(std::string_view text) {
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) return fail(std::string("bad_document"), std::string("/: not valid JSON"));
  if (!doc.is_object()) return fail(std::string("bad_document"), std::string("/: not an object"));
  return doc;
}

// ---- compare_views -----------------------------------------------------------------------------

constexpr std::size_t max_examples = 10;

struct cell {
  std::int64_t x = 0, y = 0;
  bool operator==(const cell&) const = default;
};

// The server's rule (front_play.cpp): floor((world - origin) / cell_size). A position no cell can
// hold (not finite, far off) maps to a cell no player stands on.
std::int64_t cell_coordinate(double world, double origin, double size) {
  const double c = std::floor((world - origin) / size);
  constexpr double far = 1e15;
  if (!std::isfinite(c) || c < -far || c > far) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(c);
}

cell cell_of(const view_geometry& g, float x, float z) {
  return {cell_coordinate(x, g.origin_x, g.cell_size), cell_coordinate(z, g.origin_z, g.cell_size)};
}
cell cell_of(const true_player& p) { return {p.x, p.y}; }

std::uint32_t area_along(std::uint32_t c, std::uint32_t size) { return c / std::max<std::uint32_t>(size, 1); }

// One view's players, found by pid and by area.
class view_index {
 public:
  explicit view_index(const true_view& v) : view_(&v) {
    by_pid_.reserve(v.players.size());
    by_area_.reserve(v.players.size());
    for (std::uint32_t i = 0; i < v.players.size(); ++i) {
      const true_player& p = v.players[i];
      by_pid_.emplace(p.pid, i);
      by_area_.push_back({area_along(p.y, g().area_height), area_along(p.x, g().area_width), i});
    }
    std::sort(by_area_.begin(), by_area_.end());
  }

  const true_view& view() const noexcept { return *view_; }
  const true_player* find(std::int32_t pid) const {
    auto it = by_pid_.find(pid);
    return it == by_pid_.end() ? nullptr : &view_->players[it->second];
  }

  /// Calls `fn(q)` for every player `p` sees: each area row of its eyesight is one sorted range.
  template <class F>
  void for_each_neighbour(const true_player& p, F&& fn) const {
    const std::int64_t ax = area_along(p.x, g().area_width), ay = area_along(p.y, g().area_height);
    const std::int64_t x0 = std::max<std::int64_t>(0, ax - g().eyesight_x), x1 = ax + g().eyesight_x;
    const std::int64_t y0 = std::max<std::int64_t>(0, ay - g().eyesight_y), y1 = ay + g().eyesight_y;
    for (std::int64_t row = y0; row <= y1; ++row) {
      auto it = std::lower_bound(by_area_.begin(), by_area_.end(), placed{row, x0, 0});
      for (; it != by_area_.end() && it->ay == row && it->ax <= x1; ++it) {
        const true_player& q = view_->players[it->index];
        if (q.pid != p.pid) fn(q);
      }
    }
  }

 private:
  struct placed {
    std::int64_t ay = 0, ax = 0;
    std::uint32_t index = 0;
    auto operator<=>(const placed&) const = default;
  };
  const view_geometry& g() const noexcept { return view_->geometry; }

  const true_view* view_;
  std::unordered_map<std::int32_t, std::uint32_t> by_pid_;
  std::vector<placed> by_area_;  // by (area row, area column)
};

using view_key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;  // scene, line, phase

// Compares bots one at a time, reusing its scratch lists.
class comparer {
 public:
  explicit comparer(std::span<const true_view> truth) {
    for (const auto& v : truth) views_.try_emplace(view_key{v.scene, v.line, v.phase}, v);
  }

  view_check run(std::span<const bot_view> bots) {
    for (const auto& b : bots) compare(b);
    return std::move(out_);
  }

 private:
  void compare(const bot_view& b) {
    ++out_.bots;
    auto v = views_.find(view_key{b.scene, b.line, b.phase});
    const true_player* self = v == views_.end() ? nullptr : v->second.find(b.pid);
    if (self == nullptr) {
      ++out_.misplaced;
      note(b, "the scene does not hold it there");
      return;
    }
    const view_geometry& g = v->second.view().geometry;
    if (const cell c = cell_of(g, b.x, b.z); c != cell_of(*self)) wrong_position(b, "itself", *self, c);
    collect(v->second, *self, b);
    merge(b, g);
  }

  // Both lists sorted by pid; among a pid seen twice, the first in the bot's list counts.
  void collect(const view_index& index, const true_player& self, const bot_view& b) {
    neighbours_.clear();
    index.for_each_neighbour(self, [&](const true_player& q) { neighbours_.push_back(&q); });
    std::sort(neighbours_.begin(), neighbours_.end(), [](auto* l, auto* r) { return l->pid < r->pid; });
    seen_.clear();
    for (const auto& s : b.seen) seen_.push_back(&s);
    std::stable_sort(seen_.begin(), seen_.end(), [](auto* l, auto* r) { return l->pid < r->pid; });
    seen_.erase(std::unique(seen_.begin(), seen_.end(), [](auto* l, auto* r) { return l->pid == r->pid; }),
                seen_.end());
    out_.pairs += neighbours_.size();
  }

  void merge(const bot_view& b, const view_geometry& g) {
    auto n = neighbours_.begin();
    auto s = seen_.begin();
    while (n != neighbours_.end() || s != seen_.end()) {
      if (s == seen_.end() || (n != neighbours_.end() && (*n)->pid < (*s)->pid)) {
        ++out_.missing;
        note(b, "misses player {} at cell ({},{})", (*n)->pid, (*n)->x, (*n)->y);
        ++n;
      } else if (n == neighbours_.end() || (*s)->pid < (*n)->pid) {
        const cell c = cell_of(g, (*s)->x, (*s)->z);
        ++out_.extra;
        note(b, "sees player {} at cell ({},{}), not a neighbour", (*s)->pid, c.x, c.y);
        ++s;
      } else {
        if (const cell c = cell_of(g, (*s)->x, (*s)->z); c != cell_of(**n))
          wrong_position(b, fmt::format("player {}", (*n)->pid), **n, c);
        ++n, ++s;
      }
    }
  }

  void wrong_position(const bot_view& b, const std::string& who, const true_player& truth, cell seen) {
    ++out_.wrong_position;
    note(b, "sees {} at cell ({},{}), the scene holds it at ({},{})", who, seen.x, seen.y, truth.x, truth.y);
  }

  // Formats only the first few: a broken run may have millions of mismatches.
  template <class... A>
  void note(const bot_view& b, fmt::format_string<A...> what, A&&... args) {
    if (out_.examples.size() >= max_examples) return;
    out_.examples.push_back(fmt::format("bot {} on scene {} line {} phase {}: {}", b.pid, b.scene, b.line,
                                        b.phase, fmt::format(what, std::forward<A>(args)...)));
  }

  std::map<view_key, view_index> views_;
  std::vector<const true_player*> neighbours_;
  std::vector<const seen_player*> seen_;
  view_check out_;
};

}  // namespace

result<std::vector<true_view>, std::string> parse_line_document(std::string_view text) {
  auto doc = parse_json(text);
  if (!doc) return doc.error();
  field_reader r;
  std::vector<true_view> views(1);
  views[0].scene = r.u32(*doc, "/scene", "scene");
  views[0].line = r.u32(*doc, "/line", "line");
  views[0].geometry = read_geometry(r, *doc, "");
  std::unordered_set<std::int32_t> pids;
  if (r.ok()) read_players(r, *doc, "", views[0], pids);
  if (r.ok()) read_phases(r, *doc, views, pids);
  if (!r.ok()) return fail(std::string("bad_document"), std::move(r.error));
  return views;
}

std::uint64_t leave_out_changed(std::vector<true_view>& truth, std::vector<bot_view>& views,
                                const std::unordered_set<std::int32_t>& changed) {
  if (changed.empty()) return 0;
  std::unordered_set<std::int32_t> held;
  const auto out = [&](std::int32_t pid) {
    if (!changed.contains(pid)) return false;
    held.insert(pid);
    return true;
  };
  for (auto& t : truth) std::erase_if(t.players, [&](const true_player& p) { return out(p.pid); });
  for (auto& v : views) std::erase_if(v.seen, [&](const seen_player& p) { return out(p.pid); });
  std::erase_if(views, [&](const bot_view& v) { return out(v.pid); });
  return held.size();
}

view_check compare_views(std::span<const true_view> truth, std::span<const bot_view> bots) {
  return comparer(truth).run(bots);
}

}  // namespace scenert::bots
