#include <scenert/cluster/cluster_directory.hpp>

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace scenert::cluster {

namespace {

// A line this node holds in the store.
struct held_entry {
  explicit held_entry(held_line l) : generation(l.record.generation), line(std::move(l)) {}
  const std::uint32_t generation;         // the line's: read by the world's thread without the lock
  held_line line;                         // the store's record and revision: under the lock
  std::atomic<std::uint32_t> players{0};  // counted by the world's thread, read by sync()
  bool fenced = false;                    // under the lock: the line is not this node's any more
};

std::uint64_t key_of(scene_id scene, std::uint32_t line) { return (std::uint64_t{scene} << 32) | line; }

class cluster_directory final : public line_directory, public player_count_sync {
 public:
  cluster_directory(const scene_table& table, line_store store, node_record self, cluster_directory_options o)
      : table_(table),
        local_(make_local_line_directory(table)),
        store_(std::move(store)),
        self_(std::move(self)),
        opt_(std::move(o)) {}

  std::optional<line_handle> open_line(scene_id scene, party_id owner) override {
    const auto now = std::chrono::steady_clock::now();
    if (auto it = resting_.find(scene); it != resting_.end() && now < it->second) return std::nullopt;
    const scene_def* def = table_.find_scene(scene);
    if (def == nullptr) return std::nullopt;
    if (!linked()) {
      resting_[scene] = now + opt_.backoff;
      warn(fmt::format("cluster: scene {}: no line opens while the link to the server is down", scene));
      return std::nullopt;
    }
    std::lock_guard lock(mutex_);  // the store is one thread's at a time, and sync() uses it too
    auto held = store_.open(*def, self_);
    if (!held) {
      resting_[scene] = now + opt_.backoff;
      if (held.code() != cluster_errc::full) warn(held.error().message);
      return std::nullopt;
    }
    auto line = local_->open_line_at(scene, held->record.line, held->record.generation, owner);
    if (!line) {  // free in the cluster, not here (still closing): give it back
      warn(fmt::format("cluster: scene {} line {} is free in the store but not on this node", scene,
                       held->record.line));
      (void)store_.close(*held);
      resting_[scene] = now + opt_.backoff;
      return std::nullopt;
    }
    const auto key = key_of(scene, line->line);
    held_.erase(key);
    held_.try_emplace(key, std::move(held).value());
    return line;
  }
  std::optional<line_handle> open_line_at(scene_id scene, std::uint32_t line, std::uint32_t generation,
                                          party_id owner) override {
    return local_->open_line_at(scene, line, generation, owner);
  }
  void quarantine_line(line_handle line) override { local_->quarantine_line(line); }
  void close_line(line_handle line) override { local_->close_line(line); }
  // The id is free here: the store may hand it out again, to any node. A close the store did not
  // take (the link down) waits for sync(): meanwhile the id stays this node's, unused.
  void free_line(scene_id scene, std::uint32_t line) override {
    local_->free_line(scene, line);
    std::lock_guard lock(mutex_);
    auto it = held_.find(key_of(scene, line));
    if (it == held_.end()) return;
    close_or_keep(std::move(it->second.line), it->second.fenced);
    held_.erase(it);
  }
  result<line_info, world_errc> check(line_handle line) const override { return local_->check(line); }
  std::optional<line_handle> pick(scene_id scene, std::uint32_t below) const override {
    return local_->pick(scene, below);
  }
  line_counts counts(scene_id scene) const override { return local_->counts(scene); }
  void for_each_line(scene_id scene, const std::function<void(const line_info&)>& fn) const override {
    local_->for_each_line(scene, fn);
  }
  location locate(player_id player) const override { return local_->locate(player); }
  void place(player_id player, line_handle line) override {
    local_->place(player, line);
    count(line, 1);
  }
  void begin_switch(player_id player, line_handle target) override {
    local_->begin_switch(player, target);
    count(target, 1);
  }
  void finish_switch(player_id player) override {
    const line_handle from = local_->locate(player).line;
    local_->finish_switch(player);
    count(from, -1);
  }
  void cancel_switch(player_id player) override {
    const line_handle target = local_->locate(player).target;
    local_->cancel_switch(player);
    count(target, -1);
  }
  void set_phase(player_id player, scene_id space, phase_id phase, bool pending) override {
    local_->set_phase(player, space, phase, pending);
  }
  void clear_phase(player_id player) override { local_->clear_phase(player); }
  void remove(player_id player) override {
    const line_handle at = local_->locate(player).line;
    local_->remove(player);
    count(at, -1);
  }
  std::vector<player_id> players(line_handle line) const override { return local_->players(line); }
  std::size_t player_count() const override { return local_->player_count(); }

  std::size_t sync() override {
    if (!linked()) return 0;
    {
      std::lock_guard lock(mutex_);
      for (auto& line : std::exchange(closing_, {})) close_or_keep(std::move(line), false);
    }
    std::size_t written = 0;
    for (const std::uint64_t key : changed()) {
      std::lock_guard lock(mutex_);  // per line: the world's thread waits one write at most
      auto it = held_.find(key);
      if (it == held_.end() || it->second.fenced) continue;  // freed meanwhile
      held_entry& e = it->second;
      const std::uint32_t players = e.players.load(std::memory_order_relaxed);
      if (players == e.line.record.players) continue;
      auto set = store_.set_players(e.line, players);
      if (set) {
        ++written;
        continue;
      }
      warn(set.error().message);
      if (set.code() != cluster_errc::fenced) break;  // the store is away: the next pass tries again
      e.fenced = true;
    }
    return written;
  }

 private:
  void warn(std::string_view what) const {
    if (opt_.warn) opt_.warn(what);
  }
  bool linked() const { return !opt_.linked || opt_.linked(); }
  // Writes a freed line closed, or keeps it for sync() when the store cannot take it now (mutex_
  // held). A fenced line is someone else's: nothing to write.
  void close_or_keep(held_line line, bool fenced) {
    if (fenced) return;
    if (!linked()) return closing_.push_back(std::move(line));
    auto closed = store_.close(line);
    if (closed) return;
    warn(closed.error().message);
    if (closed.code() != cluster_errc::fenced) closing_.push_back(std::move(line));
  }
  // Only the world's thread changes held_'s shape (under the lock) and the counts, so it reads both
  // without the lock: a player's move costs a hash lookup and a relaxed store, never I/O.
  void count(line_handle line, int delta) {
    auto it = held_.find(key_of(line.scene, line.line));
    if (it == held_.end() || it->second.generation != line.generation) return;
    auto& n = it->second.players;
    n.store(n.load(std::memory_order_relaxed) + static_cast<std::uint32_t>(delta), std::memory_order_relaxed);
  }
  // The held lines whose count differs from the one last written.
  std::vector<std::uint64_t> changed() const {
    std::lock_guard lock(mutex_);
    std::vector<std::uint64_t> keys;
    for (const auto& [key, e] : held_)
      if (!e.fenced && e.players.load(std::memory_order_relaxed) != e.line.record.players)
        keys.push_back(key);
    return keys;
  }

  const scene_table& table_;
  std::unique_ptr<line_directory> local_;
  line_store store_;
  node_record self_;
  cluster_directory_options opt_;
  mutable std::mutex mutex_;  // the store and the held lines' records, shared with sync()'s thread
  std::unordered_map<std::uint64_t, held_entry> held_;  // this node's lines in the store
  std::vector<held_line> closing_;  // freed here, not yet written closed (the store was away)
  std::map<scene_id, std::chrono::steady_clock::time_point> resting_;  // scenes not asked until then
};

}  // namespace

std::unique_ptr<line_directory> make_cluster_directory(const scene_table& table, line_store store,
                                                       node_record self, cluster_directory_options options) {
  return std::make_unique<cluster_directory>(table, std::move(store), std::move(self), std::move(options));
}

synced_cluster_directory make_synced_cluster_directory(const scene_table& table, line_store store,
                                                       node_record self, cluster_directory_options options) {
  auto both =
      std::make_shared<cluster_directory>(table, std::move(store), std::move(self), std::move(options));
  return {both, both};
}

}  // namespace scenert::cluster
