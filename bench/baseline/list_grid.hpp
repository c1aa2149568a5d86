#pragma once
// Baseline: seed 002's tutorial grid AOI, for comparison only. A std::list of players per grid;
// GetSrdPlayers gathers the surrounding grids into a fresh list; a move gathers the old neighbours,
// re-files the player, gathers the new ones and compares the two lists with std::find, on every
// position message (as the seed's ProcMoveMsg does). Generalised from 3x3 to any radius.

#include <algorithm>
#include <cstdint>
#include <list>
#include <vector>

namespace scenert::bench::baseline {

class list_grid {
 public:
  struct player {
    std::uint32_t id;
    int x;
    int y;
  };

  list_grid(int width, int height, int x_count, int y_count, int radius_x, int radius_y)
      : x_end_(width), y_end_(height), x_count_(x_count), y_count_(y_count), rx_(radius_x), ry_(radius_y) {
    x_width_ = (x_end_ - x_begin_) / x_count_;
    y_width_ = (y_end_ - y_begin_) / y_count_;
    grids_.resize(static_cast<std::size_t>(x_count_) * y_count_);
  }

  player* make(std::uint32_t id, int x, int y) {
    players_.push_back(new player{id, x, y});
    return players_.back();
  }
  ~list_grid() {
    for (player* p : players_) delete p;
  }
  list_grid(const list_grid&) = delete;
  list_grid& operator=(const list_grid&) = delete;

  int grid_id(const player* p) const {
    return (p->x - x_begin_) / x_width_ + (p->y - y_begin_) / y_width_ * x_count_;
  }
  void add_player(player* p) { grids_[grid_id(p)].push_back(p); }
  void del_player(player* p) { grids_[grid_id(p)].remove(p); }

  std::list<player*> get_srd_players(const player* p) const {
    std::list<player*> ret;
    const int id = grid_id(p);
    const int xi = id % x_count_;
    const int yi = id / x_count_;
    for (int dy = -ry_; dy <= ry_; ++dy) {
      for (int dx = -rx_; dx <= rx_; ++dx) {
        if (xi + dx < 0 || xi + dx >= x_count_ || yi + dy < 0 || yi + dy >= y_count_) continue;
        const std::list<player*>& cur = grids_[id + dx + dy * x_count_];
        ret.insert(ret.begin(), cur.begin(), cur.end());
      }
    }
    return ret;
  }

  /// Adds a player and reports everyone it sees (itself excluded).
  template <class V>
  void add(std::uint32_t id, int x, int y, V& v) {
    player* p = make(id, x, y);
    if (by_id_.size() <= id) by_id_.resize(id + 1);
    by_id_[id] = p;
    add_player(p);
    for (player* other : get_srd_players(p))
      if (other != p) v.enter(other->id);
  }

  /// The seed's ProcMoveMsg: s1, re-file, s2, then the two find loops.
  template <class V>
  bool move(std::uint32_t id, int x, int y, V& v) {
    player* p = by_id_[id];
    const int before = grid_id(p);
    auto s1 = get_srd_players(p);
    del_player(p);
    p->x = x;
    p->y = y;
    add_player(p);
    auto s2 = get_srd_players(p);
    for (player* single : s2)
      if (s1.end() == std::find(s1.begin(), s1.end(), single)) v.enter(single->id);
    for (player* single : s1)
      if (s2.end() == std::find(s2.begin(), s2.end(), single)) v.leave(single->id);
    return before != grid_id(p);
  }

  /// Estimated heap bytes: a list node (two links and the pointer, plus malloc's header) per player,
  /// the player, the grid heads, the id table.
  std::size_t bytes() const {
    return players_.size() * (32 + 16) + grids_.size() * sizeof(std::list<player*>) +
           by_id_.capacity() * sizeof(player*) + players_.capacity() * sizeof(player*);
  }

 private:
  int x_begin_ = 0, x_end_, y_begin_ = 0, y_end_;
  int x_count_, y_count_, rx_, ry_;
  int x_width_ = 1, y_width_ = 1;
  std::vector<std::list<player*>> grids_;
  std::vector<player*> players_;
  std::vector<player*> by_id_;
};

}  // namespace scenert::bench::baseline
