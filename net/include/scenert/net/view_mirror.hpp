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

/// Views are the grid's: a player sees every player whose area is within the map's eyesight of its
/// own (Chebyshev distance in areas), which is symmetric.
/// Thread-safety: none; one I/O thread owns a line's mirror.
class view_mirror {
 public:
  explicit view_mirror(std::shared_ptr<const grid::map_data> map);

  /// Applies one event and tells `out` what each player must hear, in the order the frames go:
  /// - entered: `out.appeared(viewer, p)` for each viewer, then `out.view(p, players)` (its 202);
  /// - left: `out.vanished(viewer, p)` for each viewer;
  /// - moved to another area: `vanished` both ways for the views it leaves, `appeared` both ways
  ///   for those it enters, then `out.moved(viewer, p)` for everyone who sees it; inside one area
  ///   only `moved`.
  /// An event that does not fit the mirror (a player twice, an unknown player, a cell off the map)
  /// is an error naming the player, and changes nothing.
  template <class Out>
  result<void, mirror_errc> apply(const line_event& e, Out&& out);

  /// The players `p` sees (itself excluded), or empty when it is not here.
  [[nodiscard]] std::vector<player_id> view_of(player_id p) const;
  /// Where a player stands, when it is here.
  [[nodiscard]] std::optional<grid::cell_point> where(player_id p) const;
  [[nodiscard]] std::size_t size() const noexcept { return players_.size(); }
  [[nodiscard]] const grid::map_data& map() const noexcept { return *map_; }

 private:
  struct standing {
    grid::cell_point at;
    std::uint32_t area = 0;
    std::uint32_t slot = 0;  // index in its area's players
  };
  struct rect {
    std::uint32_t x0, y0, x1, y1;  // areas, bounds included
    bool contains(std::uint32_t x, std::uint32_t y) const noexcept {
      return x >= x0 && x <= x1 && y >= y0 && y <= y1;
    }
  };
  rect view_rect(std::uint32_t area) const noexcept;
  template <class F>
  void for_each_in(const rect& r, player_id except, F&& fn) const;
  template <class F>
  void for_each_in_difference(const rect& r, const rect& minus, F&& fn) const;
  void place(player_id p, standing& s, std::uint32_t area);
  void unplace(const standing& s);
  result<void, mirror_errc> refuse(mirror_errc code, player_id p, std::string_view why) const;

  std::shared_ptr<const grid::map_data> map_;
  std::vector<std::vector<player_id>> areas_;  // players standing on each area
  std::unordered_map<player_id, standing> players_;
  std::vector<player_id> scratch_;  // the 202 of an entering player
};

template <class F>
void view_mirror::for_each_in(const rect& r, player_id except, F&& fn) const {
  for (std::uint32_t y = r.y0; y <= r.y1; ++y)
    for (std::uint32_t x = r.x0; x <= r.x1; ++x)
      for (player_id q : areas_[y * map_->areas_x() + x])
        if (q != except) fn(q);
}

template <class F>
void view_mirror::for_each_in_difference(const rect& r, const rect& minus, F&& fn) const {
  for (std::uint32_t y = r.y0; y <= r.y1; ++y)
    for (std::uint32_t x = r.x0; x <= r.x1; ++x)
      if (!minus.contains(x, y))
        for (player_id q : areas_[y * map_->areas_x() + x]) fn(q);
}

template <class Out>
result<void, mirror_errc> view_mirror::apply(const line_event& e, Out&& out) {
  using kind = line_event::kind;
  auto it = players_.find(e.player);
  if (e.what != kind::left && !map_->contains(e.at))
    return refuse(mirror_errc::off_map, e.player, "a cell off the map");
  switch (e.what) {
    case kind::entered: {
      if (it != players_.end()) return refuse(mirror_errc::already_here, e.player, "entered twice");
      const std::uint32_t area = map_->area_index(e.at);
      // Placed first: its viewers' 200 Tp 2 tell where it stands.
      standing& s = players_[e.player];
      s.at = e.at;
      place(e.player, s, area);
      scratch_.clear();
      for_each_in(view_rect(area), e.player, [&](player_id q) {
        out.appeared(q, e.player);
        scratch_.push_back(q);
      });
      out.view(e.player, std::span<const player_id>(scratch_));
      return {};
    }
    case kind::left: {
      if (it == players_.end()) return refuse(mirror_errc::not_here, e.player, "left without being here");
      unplace(it->second);
      for_each_in(view_rect(it->second.area), e.player, [&](player_id q) { out.vanished(q, e.player); });
      players_.erase(it);
      return {};
    }
    case kind::moved: {
      if (it == players_.end()) return refuse(mirror_errc::not_here, e.player, "moved without being here");
      standing& s = it->second;
      const std::uint32_t to = map_->area_index(e.at);
      s.at = e.at;
      if (to != s.area) {
        const rect before = view_rect(s.area), after = view_rect(to);
        unplace(s);
        for_each_in_difference(before, after, [&](player_id q) {
          out.vanished(q, e.player);
          out.vanished(e.player, q);
        });
        for_each_in_difference(after, before, [&](player_id q) {
          out.appeared(q, e.player);
          out.appeared(e.player, q);
        });
        place(e.player, s, to);
      }
      for_each_in(view_rect(to), e.player, [&](player_id q) { out.moved(q, e.player); });
      return {};
    }
  }
  return refuse(mirror_errc::not_here, e.player, "an unknown event");
}

}  // namespace scenert::net
