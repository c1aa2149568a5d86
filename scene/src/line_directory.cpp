#include <scenert/scene/line_directory.hpp>

#include <algorithm>
#include <bit>
#include <functional>
#include <queue>
#include <unordered_map>

#include <fmt/format.h>

namespace scenert {
namespace {

constexpr std::uint32_t no_pos = 0xFFFFFFFFu;

struct line_rec {
  std::uint32_t generation = 0;
  line_state state = line_state::free;
  party_id owner = 0;
  std::uint32_t bucket_pos = no_pos;  // position in buckets[players.size()] while open
  std::vector<player_id> players;
};

struct player_rec {
  location loc;
  std::uint32_t pos_line = 0;    // index in the source line's players
  std::uint32_t pos_target = 0;  // index in the target line's players (switching)
};

// The lines of one scene definition. Open shared lines sit in buckets by player count, with a
// bitmap of the non-empty buckets, so both policies pick a line in O(1) for any number of lines.
struct scene_lines {
  const scene_def* def = nullptr;
  std::vector<line_rec> lines;  // index = line id - 1; grows to the peak of live lines only
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> free_ids;
  std::vector<std::vector<std::uint32_t>> buckets;  // line indexes by player count
  std::vector<std::uint64_t> bits;                  // bit b set: buckets[b] is not empty
  line_counts counts;

  void bucket_insert(std::uint32_t index) {
    auto& rec = lines[index];
    auto b = static_cast<std::uint32_t>(rec.players.size());
    rec.bucket_pos = static_cast<std::uint32_t>(buckets[b].size());
    buckets[b].push_back(index);
    bits[b / 64] |= std::uint64_t{1} << (b % 64);
  }
  void bucket_erase(std::uint32_t index) {
    auto& rec = lines[index];
    auto b = static_cast<std::uint32_t>(rec.players.size());
    auto& bucket = buckets[b];
    std::uint32_t moved = bucket.back();
    bucket[rec.bucket_pos] = moved;
    lines[moved].bucket_pos = rec.bucket_pos;
    bucket.pop_back();
    rec.bucket_pos = no_pos;
    if (bucket.empty()) bits[b / 64] &= ~(std::uint64_t{1} << (b % 64));
  }
  // Lowest (or highest) non-empty bucket below `below`.
  std::optional<std::uint32_t> find_bucket(std::uint32_t below, bool highest) const {
    below = std::min<std::uint32_t>(below, static_cast<std::uint32_t>(buckets.size()));
    if (below == 0) return std::nullopt;
    std::uint32_t words = (below + 63) / 64;
    auto masked = [&](std::uint32_t w) {
      std::uint64_t v = bits[w];
      std::uint32_t last = below - w * 64;  // bits [0, last) of word w are in range
      if (last < 64) v &= (std::uint64_t{1} << last) - 1;
      return v;
    };
    if (highest) {
      for (std::uint32_t w = words; w-- > 0;)
        if (auto v = masked(w)) return w * 64 + 63 - static_cast<std::uint32_t>(std::countl_zero(v));
    } else {
      for (std::uint32_t w = 0; w < words; ++w)
        if (auto v = masked(w)) return w * 64 + static_cast<std::uint32_t>(std::countr_zero(v));
    }
    return std::nullopt;
  }
};

class local_line_directory final : public line_directory {
 public:
  explicit local_line_directory(const scene_table& table) {
    for (const auto& def : table.scenes) {
      if (def.kind == scene_kind::space) continue;  // phases live inside their town's lines
      auto& s = scenes_[def.id];
      s.def = &def;
      SCENERT_ASSERT(def.hard_capacity >= def.capacity,
                     "line_directory: hard_capacity below capacity (validate the table first)");
      std::uint32_t hard = def.hard_capacity;
      s.buckets.resize(hard + 1);
      s.bits.resize((hard + 1 + 63) / 64);
    }
  }

  std::optional<line_handle> open_line(scene_id scene, party_id owner) override {
    auto& s = get(scene);
    if (s.counts.live >= s.def->max_lines) return std::nullopt;
    std::uint32_t index;
    if (!s.free_ids.empty()) {
      index = s.free_ids.top();
      s.free_ids.pop();
    } else {
      index = static_cast<std::uint32_t>(s.lines.size());
      s.lines.emplace_back();
    }
    SCENERT_ASSERT(s.lines[index].state == line_state::free && s.lines[index].players.empty(),
                   "open_line: line not free");
    return open_free(s, index, s.lines[index].generation + 1, owner);
  }

  std::optional<line_handle> open_line_at(scene_id scene, std::uint32_t line, std::uint32_t generation,
                                          party_id owner) override {
    auto& s = get(scene);
    if (line == 0 || line > s.def->max_lines || s.counts.live >= s.def->max_lines) return std::nullopt;
    if (s.lines.size() < line) s.lines.resize(line);
    const auto& rec = s.lines[line - 1];
    if (rec.state != line_state::free || generation < rec.generation || generation == 0) return std::nullopt;
    return open_free(s, line - 1, generation, owner);
  }

  void quarantine_line(line_handle line) override {
    auto& s = get(line.scene);
    auto& rec = live_rec(s, line);
    if (rec.state != line_state::open) return;
    leave_open(s, line.line - 1);
    rec.state = line_state::quarantined;
  }

  void close_line(line_handle line) override {
    auto& s = get(line.scene);
    auto& rec = live_rec(s, line);
    SCENERT_ASSERT(rec.players.empty(), "close_line: the line still holds players");
    if (rec.state == line_state::open) leave_open(s, line.line - 1);
    rec.state = line_state::closing;
    ++rec.generation;  // every handle to this opening is stale from now on
  }

  void free_line(scene_id scene, std::uint32_t line) override {
    auto& s = get(scene);
    SCENERT_ASSERT(line >= 1 && line <= s.lines.size(), "free_line: no such line");
    auto& rec = s.lines[line - 1];
    SCENERT_ASSERT(rec.state == line_state::closing, "free_line: line is not closing");
    rec.state = line_state::free;
    s.free_ids.push(line - 1);
    --s.counts.live, ++s.counts.closed;
  }

  result<line_info, world_errc> check(line_handle line) const override {
    const auto* found = find(line.scene);
    if (!found)
      return fail(world_errc::unknown_scene,
                  fmt::format("scene {} is not defined (or is a space)", line.scene));
    const auto& s = *found;
    if (line.line == 0 || line.line > s.def->max_lines)
      return fail(world_errc::unknown_line, fmt::format("scene {} has no line {} (lines 1..{})", line.scene,
                                                        line.line, s.def->max_lines));
    if (line.line > s.lines.size() || s.lines[line.line - 1].generation == 0)
      return fail(world_errc::unknown_line,
                  fmt::format("line {} of scene {} was never opened", line.line, line.scene));
    const auto& rec = s.lines[line.line - 1];
    if (rec.generation != line.generation || rec.state == line_state::free ||
        rec.state == line_state::closing)
      return fail(world_errc::stale_line,
                  fmt::format("line {} of scene {} generation {} closed since (now generation {}, {})",
                              line.line, line.scene, line.generation, rec.generation, to_string(rec.state)));
    return line_info{line, rec.state, static_cast<std::uint32_t>(rec.players.size()), rec.owner};
  }

  std::optional<line_handle> pick(scene_id scene, std::uint32_t below) const override {
    const auto& s = get(scene);
    auto b = s.find_bucket(below, s.def->policy == allocation_policy::fill_first);
    if (!b) return std::nullopt;
    std::uint32_t index = s.buckets[*b].back();
    return line_handle{scene, index + 1, s.lines[index].generation};
  }

  line_counts counts(scene_id scene) const override {
    auto it = scenes_.find(scene);
    return it == scenes_.end() ? line_counts{} : it->second.counts;
  }

  void for_each_line(scene_id scene, const std::function<void(const line_info&)>& fn) const override {
    auto it = scenes_.find(scene);
    if (it == scenes_.end()) return;
    const auto& lines = it->second.lines;
    for (std::uint32_t i = 0; i < lines.size(); ++i)
      if (lines[i].state != line_state::free)
        fn(line_info{{scene, i + 1, lines[i].generation},
                     lines[i].state,
                     static_cast<std::uint32_t>(lines[i].players.size()),
                     lines[i].owner});
  }

  location locate(player_id player) const override {
    auto it = players_.find(player);
    return it == players_.end() ? location{} : it->second.loc;
  }

  void place(player_id player, line_handle line) override {
    auto it = new_player(player);
    it->second.loc = {location::state::in_line, line, {}};
    it->second.pos_line = attach(line, player);
  }

  void begin_switch(player_id player, line_handle target) override {
    auto& p = known(player);
    SCENERT_ASSERT(p.loc.where == location::state::in_line, "begin_switch: player not on a line");
    p.loc = location{location::state::switching, p.loc.line, target};  // out of any phase
    p.pos_target = attach(target, player);
  }

  void finish_switch(player_id player) override {
    auto& p = known(player);
    SCENERT_ASSERT(p.loc.where == location::state::switching, "finish_switch: player not switching");
    detach(p.loc.line, p.pos_line);
    p.loc = {location::state::in_line, p.loc.target, {}};
    p.pos_line = p.pos_target;
  }

  void cancel_switch(player_id player) override {
    auto& p = known(player);
    SCENERT_ASSERT(p.loc.where == location::state::switching, "cancel_switch: player not switching");
    detach(p.loc.target, p.pos_target);
    p.loc = {location::state::in_line, p.loc.line, {}};
  }

  void set_phase(player_id player, scene_id space, phase_id phase, bool pending) override {
    auto& p = known(player);
    SCENERT_ASSERT(p.loc.where == location::state::in_line, "set_phase: player not on a line");
    p.loc.space = space;
    p.loc.phase = phase;
    p.loc.phase_pending = pending;
  }

  void clear_phase(player_id player) override { set_phase(player, 0, 0, false); }

  void remove(player_id player) override {
    auto it = players_.find(player);
    SCENERT_ASSERT(it != players_.end() && it->second.loc.where == location::state::in_line,
                   "remove: player not on a line");
    detach(it->second.loc.line, it->second.pos_line);
    if (spare_.size() < max_spare)
      spare_.push_back(players_.extract(it));
    else
      players_.erase(it);
  }

  std::vector<player_id> players(line_handle line) const override {
    const auto& s = get(line.scene);
    if (line.line == 0 || line.line > s.lines.size()) return {};
    return s.lines[line.line - 1].players;
  }

  std::size_t player_count() const override { return players_.size(); }

 private:
  line_handle open_free(scene_lines& s, std::uint32_t index, std::uint32_t generation, party_id owner) {
    auto& rec = s.lines[index];
    rec.generation = generation;
    rec.state = line_state::open;
    rec.owner = owner;
    if (owner == 0) s.bucket_insert(index);
    ++s.counts.live, ++s.counts.open, ++s.counts.opened;
    if (owner != 0) ++s.counts.open_private, ++s.counts.opened_private;
    return line_handle{s.def->id, index + 1, rec.generation};
  }

  // An open line stops being open (quarantined or closing): out of the buckets and the counts.
  static void leave_open(scene_lines& s, std::uint32_t index) {
    auto& rec = s.lines[index];
    if (rec.owner == 0)
      s.bucket_erase(index);
    else
      --s.counts.open_private;
    --s.counts.open;
  }
  // Shared open lines are in the buckets, by player count.
  static bool bucketed(const line_rec& rec) { return rec.state == line_state::open && rec.owner == 0; }
  // Calls come in runs for one scene: the last answer is kept (the scenes never move).
  scene_lines* find(scene_id scene) const {
    if (last_ && last_->def->id == scene) return last_;
    auto it = scenes_.find(scene);
    if (it == scenes_.end()) return nullptr;
    return last_ = const_cast<scene_lines*>(&it->second);
  }
  scene_lines& get(scene_id scene) {
    auto* s = find(scene);
    SCENERT_ASSERT(s != nullptr, "line_directory: unknown scene");
    return *s;
  }
  const scene_lines& get(scene_id scene) const { return const_cast<local_line_directory*>(this)->get(scene); }
  line_rec& live_rec(scene_lines& s, line_handle line) {
    SCENERT_ASSERT(line.line >= 1 && line.line <= s.lines.size(), "line_directory: no such line");
    auto& rec = s.lines[line.line - 1];
    SCENERT_ASSERT(rec.generation == line.generation && rec.state != line_state::free,
                   "line_directory: stale line");
    return rec;
  }
  player_rec& known(player_id player) {
    auto it = players_.find(player);
    SCENERT_ASSERT(it != players_.end(), "line_directory: unknown player");
    return it->second;
  }
  // Players come and go by the million: their map nodes are recycled instead of freed.
  using player_map = std::unordered_map<player_id, player_rec>;
  static constexpr std::size_t max_spare = 4096;
  player_map::iterator new_player(player_id player) {
    if (spare_.empty()) {
      auto [it, fresh] = players_.try_emplace(player);
      SCENERT_ASSERT(fresh, "place: the player is placed already");
      return it;
    }
    auto node = std::move(spare_.back());
    spare_.pop_back();
    node.key() = player;
    node.mapped() = player_rec{};
    auto placed = players_.insert(std::move(node));
    SCENERT_ASSERT(placed.inserted, "place: the player is placed already");
    return placed.position;
  }
  // Appends a player to a line (moving the line to its next bucket); returns its position.
  std::uint32_t attach(line_handle line, player_id player) {
    auto& s = get(line.scene);
    auto& rec = live_rec(s, line);
    const bool open = bucketed(rec);
    if (open) s.bucket_erase(line.line - 1);
    rec.players.push_back(player);
    SCENERT_ASSERT(rec.players.size() < s.buckets.size(), "attach: line above its hard capacity");
    if (open) s.bucket_insert(line.line - 1);
    return static_cast<std::uint32_t>(rec.players.size() - 1);
  }
  void detach(line_handle line, std::uint32_t pos) {
    auto& s = get(line.scene);
    auto& rec = live_rec(s, line);
    const bool open = bucketed(rec);
    if (open) s.bucket_erase(line.line - 1);
    player_id moved = rec.players.back();
    rec.players[pos] = moved;
    rec.players.pop_back();
    if (pos < rec.players.size()) {
      auto& m = players_.at(moved).loc;
      auto& mp = players_.at(moved);
      (m.line == line ? mp.pos_line : mp.pos_target) = pos;
    }
    if (open) s.bucket_insert(line.line - 1);
  }

  std::unordered_map<scene_id, scene_lines> scenes_;
  mutable scene_lines* last_ = nullptr;
  player_map players_;
  std::vector<player_map::node_type> spare_;
};

}  // namespace

std::unique_ptr<line_directory> make_local_line_directory(const scene_table& table) {
  return std::make_unique<local_line_directory>(table);
}

const char* to_string(line_state state) noexcept {
  switch (state) {
    case line_state::free:
      return "free";
    case line_state::open:
      return "open";
    case line_state::quarantined:
      return "quarantined";
    case line_state::closing:
      return "closing";
  }
  return "?";
}

}  // namespace scenert
