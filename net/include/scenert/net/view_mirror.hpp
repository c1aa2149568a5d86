#pragma once
/// view_mirror: the network side's copy of one line's players by area (seed 000's mirrored screen
/// index). Fed the line's events, it tells who must hear what, so the scene sends each event once and
/// the front fans it out to the viewers off the scene's thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <scenert/runtime/result.hpp>
#include <scenert/scene/grid/map_data.hpp>
#include <scenert/scene/line_event.hpp>

namespace scenert::net {

enum class mirror_errc : std::uint8_t { ok, already_here, not_here, off_map, count_ };
inline constexpr std::string_view mirror_errc_names[] = {"ok", "already_here", "not_here", "off_map"};
static_assert(std::size(mirror_errc_names) == static_cast<std::size_t>(mirror_errc::count_),
              "mirror_errc: name every code");

/// Views are the grid's: a player sees every player and monster whose area is within the map's
/// eyesight of its own (Chebyshev distance in areas), which is symmetric between players.
/// Thread-safety: none; one I/O thread owns a line's mirror.
class view_mirror {
 public:
  explicit view_mirror(std::shared_ptr<const grid::map_data> map);

  /// Applies one event and tells `out` what each player must hear, in the order the frames go.
  /// A player's events:
  /// - entered: `out.appeared(viewer, p)` for each viewer, then `out.view(p, players)` (the
  ///   players it sees, itself left out: its 202 adds it) and `out.monster_view(p, monsters)` (every
  ///   monster it sees);
  /// - left: `out.vanished(viewer, p)` for each viewer;
  /// - moved to another area: `appeared` both ways for the views it enters, `vanished` both ways
  ///   for those it leaves (seed 002's order: its GameRole::ProcMoveMsg shows the new neighbours
  ///   before it hides the old ones), `out.monster_gone(p, m)` / `out.monster_at(p, m)` for the
  ///   monsters it stops / starts seeing, then `out.moved(viewer, p)` for everyone who sees it;
  ///   inside one area only `moved`.
  /// A monster's (or a module entity's) events (`e.monster`): `out.monster_at(viewer, m)` for each
  /// player who sees it where it stands now (with its look, after `changed` too),
  /// `out.monster_gone(viewer, m)` for each one who stopped seeing it. A player never `changed`.
  /// An event that does not fit the mirror (an id twice, an unknown id, a cell off the map) is an
  /// error naming the player or monster, and changes nothing.
  template <class Out>
  result<void, mirror_errc> apply(const line_event& e, Out&& out);

  /// The players `p` sees (itself excluded), or empty when it is not here.
  [[nodiscard]] std::vector<player_id> view_of(player_id p) const;
  /// The monsters `p` sees, or empty when it is not here.
  [[nodiscard]] std::vector<monster_id> monsters_seen_by(player_id p) const;
  /// Where a player stands, when it is here.
  [[nodiscard]] std::optional<grid::cell_point> where(player_id p) const { return players_.where(p); }
  /// Where a monster stands, when it is here.
  [[nodiscard]] std::optional<grid::cell_point> where_monster(monster_id m) const {
    return monsters_.where(m);
  }
  /// What clients see of a monster or entity (its last entered or changed look), when it is here.
  [[nodiscard]] std::optional<entity_look> look_of(monster_id m) const;
  /// The players who see a monster or entity, or empty when it is not here.
  [[nodiscard]] std::vector<player_id> viewers_of(monster_id m) const;
  /// Every player of the view.
  [[nodiscard]] std::vector<player_id> players() const;
  [[nodiscard]] std::size_t size() const noexcept { return players_.at.size(); }
  [[nodiscard]] std::size_t monster_count() const noexcept { return monsters_.at.size(); }
  [[nodiscard]] const grid::map_data& map() const noexcept { return *map_; }

 private:
  struct standing {
    grid::cell_point at;
    std::uint32_t area = 0;
    std::uint32_t slot = 0;  // index in its area's list
    entity_look look{};      // monsters and entities only
  };
  // The players (by player_id), or the monsters (by monster_id), by area.
  struct layer {
    std::vector<std::vector<std::uint64_t>> areas;  // ids standing on each area
    std::unordered_map<std::uint64_t, standing> at;
    void place(std::uint64_t id, standing& s, std::uint32_t area);
    void unplace(const standing& s);
    std::optional<grid::cell_point> where(std::uint64_t id) const;
  };
  struct rect {
    std::uint32_t x0, y0, x1, y1;  // areas, bounds included
    bool contains(std::uint32_t x, std::uint32_t y) const noexcept {
      return x >= x0 && x <= x1 && y >= y0 && y <= y1;
    }
  };
  rect view_rect(std::uint32_t area) const noexcept;
  static constexpr std::uint64_t nobody = ~std::uint64_t{0};  // for_each_in leaving nobody out
  template <class F>
  void for_each_in(const layer& l, const rect& r, std::uint64_t except, F&& fn) const;
  template <class F>
  void for_each_in_difference(const layer& l, const rect& r, const rect& minus, F&& fn) const;
  std::vector<std::uint64_t> seen_by(player_id p, const layer& l, std::uint64_t except) const;
  template <class Out>
  result<void, mirror_errc> apply_monster(const line_event& e, Out&& out);
  template <class Out>
  void move_player(standing& s, const line_event& e, Out& out);
  result<void, mirror_errc> refuse(mirror_errc code, const line_event& e, std::string_view why) const;

  std::shared_ptr<const grid::map_data> map_;
  layer players_, monsters_;
  std::vector<std::uint64_t> scratch_;  // the 202 (and then the monsters) of an entering player
};

template <class F>
void view_mirror::for_each_in(const layer& l, const rect& r, std::uint64_t except, F&& fn) const {
  for (std::uint32_t y = r.y0; y <= r.y1; ++y)
    for (std::uint32_t x = r.x0; x <= r.x1; ++x)
      for (std::uint64_t q : l.areas[y * map_->areas_x() + x])
        if (q != except) fn(q);
}

template <class F>
void view_mirror::for_each_in_difference(const layer& l, const rect& r, const rect& minus, F&& fn) const {
  for (std::uint32_t y = r.y0; y <= r.y1; ++y)
    for (std::uint32_t x = r.x0; x <= r.x1; ++x)
      if (!minus.contains(x, y))
        for (std::uint64_t q : l.areas[y * map_->areas_x() + x]) fn(q);
}

template <class Out>
result<void, mirror_errc> view_mirror::apply(const line_event& e, Out&& out) {
  using kind = line_event::kind;
  if (e.what != kind::left && !map_->contains(e.at))
    return refuse(mirror_errc::off_map, e, "a cell off the map");
  if (e.monster) return apply_monster(e, out);
  auto it = players_.at.find(e.player);
  switch (e.what) {
    case kind::entered: {
      if (it != players_.at.end()) return refuse(mirror_errc::already_here, e, "entered twice");
      const std::uint32_t area = map_->area_index(e.at);
      // Placed first: its viewers' 200 Tp 2 tell where it stands.
      standing& s = players_.at[e.player];
      s.at = e.at;
      players_.place(e.player, s, area);
      scratch_.clear();
      for_each_in(players_, view_rect(area), e.player, [&](player_id q) {
        out.appeared(q, e.player);
        scratch_.push_back(q);
      });
      out.view(e.player, std::span<const player_id>(scratch_));
      scratch_.clear();
      for_each_in(monsters_, view_rect(area), nobody, [&](monster_id m) { scratch_.push_back(m); });
      out.monster_view(e.player, std::span<const monster_id>(scratch_));
      return {};
    }
    case kind::left: {
      if (it == players_.at.end()) return refuse(mirror_errc::not_here, e, "left without being here");
      players_.unplace(it->second);
      for_each_in(players_, view_rect(it->second.area), e.player,
                  [&](player_id q) { out.vanished(q, e.player); });
      players_.at.erase(it);
      return {};
    }
    case kind::changed:
      return refuse(mirror_errc::not_here, e, "a player has no look to change");
    case kind::moved:
      if (it == players_.at.end()) return refuse(mirror_errc::not_here, e, "moved without being here");
      move_player(it->second, e, out);
      return {};
  }
  return refuse(mirror_errc::not_here, e, "an unknown event");
}

// A player's move: to another area, both ways of the views it leaves and enters, and the monsters
// it stops and starts seeing; then its move to everyone who sees it.
template <class Out>
void view_mirror::move_player(standing& s, const line_event& e, Out& out) {
  const std::uint32_t to = map_->area_index(e.at);
  s.at = e.at;
  if (to != s.area) {
    const rect before = view_rect(s.area), after = view_rect(to);
    players_.unplace(s);
    for_each_in_difference(players_, after, before, [&](player_id q) {  // seed 002's order: new first
      out.appeared(e.player, q);
      out.appeared(q, e.player);
    });
    for_each_in_difference(players_, before, after, [&](player_id q) {
      out.vanished(e.player, q);
      out.vanished(q, e.player);
    });
    for_each_in_difference(monsters_, before, after, [&](monster_id m) { out.monster_gone(e.player, m); });
    for_each_in_difference(monsters_, after, before, [&](monster_id m) { out.monster_at(e.player, m); });
    players_.place(e.player, s, to);
  }
  for_each_in(players_, view_rect(to), e.player, [&](player_id q) { out.moved(q, e.player); });
}

// A monster is seen by the players whose view holds its area: the same rectangle around its own.
template <class Out>
result<void, mirror_errc> view_mirror::apply_monster(const line_event& e, Out&& out) {
  using kind = line_event::kind;
  auto it = monsters_.at.find(e.player);
  switch (e.what) {
    case kind::entered: {
      if (it != monsters_.at.end()) return refuse(mirror_errc::already_here, e, "entered twice");
      const std::uint32_t area = map_->area_index(e.at);
      standing& s = monsters_.at[e.player];
      s.at = e.at;
      s.look = e.look;
      monsters_.place(e.player, s, area);
      for_each_in(players_, view_rect(area), nobody, [&](player_id q) { out.monster_at(q, e.player); });
      return {};
    }
    case kind::left: {
      if (it == monsters_.at.end()) return refuse(mirror_errc::not_here, e, "left without being here");
      monsters_.unplace(it->second);
      for_each_in(players_, view_rect(it->second.area), nobody,
                  [&](player_id q) { out.monster_gone(q, e.player); });
      monsters_.at.erase(it);
      return {};
    }
    case kind::changed:
      if (it == monsters_.at.end()) return refuse(mirror_errc::not_here, e, "changed without being here");
      if (!(it->second.at == e.at)) return refuse(mirror_errc::not_here, e, "changed on another cell");
      it->second.look = e.look;
      for_each_in(players_, view_rect(it->second.area), nobody,
                  [&](player_id q) { out.monster_at(q, e.player); });
      return {};
    case kind::moved: {
      if (it == monsters_.at.end()) return refuse(mirror_errc::not_here, e, "moved without being here");
      standing& s = it->second;
      const std::uint32_t to = map_->area_index(e.at);
      s.at = e.at;
      if (to != s.area) {
        const rect before = view_rect(s.area), after = view_rect(to);
        monsters_.unplace(s);
        for_each_in_difference(players_, before, after, [&](player_id q) { out.monster_gone(q, e.player); });
        monsters_.place(e.player, s, to);
      }
      for_each_in(players_, view_rect(to), nobody, [&](player_id q) { out.monster_at(q, e.player); });
      return {};
    }
  }
  return refuse(mirror_errc::not_here, e, "an unknown event");
}

}  // namespace scenert::net
