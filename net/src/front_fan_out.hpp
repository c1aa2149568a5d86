#pragma once
// fan_out: the lines' events on one shard. Each drain of the lines' batches goes through the shard's
// mirrors to the viewers (at most one write per connection per drain); a player's moves before its
// last one in a drain are not sent.

#include "front_values.hpp"
#include "session.hpp"

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include <scenert/net/view_mirror.hpp>

namespace scenert::net {

class front_shard;

// One drain's batches and which of their player moves a later move of the same player supersedes.
// Thread-safety: none; its shard's I/O thread.
struct drained_batches {
  std::vector<line_batch> batches;
  std::vector<bool> superseded;  // superseded[i]: the drain's i-th player move is followed by a later one
  /// Fills `superseded` from `batches`.
  void mark_superseded_moves();

 private:
  std::vector<std::pair<player_id, std::uint32_t>> move_order_;  // (mover, event index)
};

// Thread-safety: its shard's I/O thread.
class fan_out {
 public:
  explicit fan_out(front_shard& shard) : shard_(shard) {}

  /// Applies the lines' batches that arrived and fans their events out, then flushes.
  void drain_lines();
  /// The view of a player already standing somewhere: its 202, itself included, and 200 Tp 2 for
  /// itself (`players`), then the monsters it sees.
  void send_view(session& s, bool players = true);
  /// A client whose answer was lost hears the scene it stands in, as the lines' events say (1006).
  void correct_place(session& s);

  drained_batches drained;

 private:
  void apply(const line_batch& b, std::size_t& move_index);
  void followed(const line_batch& b, const line_event& e, const view_key& key);
  void own_move(player_id p, const view_key& key, grid::cell_point at, const scene_def& def);
  void forget_view(const view_mirror& mirror, player_id p);
  void send_module_frame(const view_mirror& mirror, const view_key& key, const module_frame& f);
  void entering(player_id p, const view_key& key);
  void stands_again(const line_batch& b);
  void back_to_where_it_stood(player_id p);

  front_shard& shard_;
};

}  // namespace scenert::net
