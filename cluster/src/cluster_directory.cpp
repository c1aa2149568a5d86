#include <scenert/cluster/cluster_directory.hpp>

#include <fmt/format.h>

#include <map>
#include <utility>

namespace scenert::cluster {

namespace {

class cluster_directory final : public line_directory {
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
    auto held = store_.open(scene, def->max_lines, self_);
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
    held_[{scene, line->line}] = std::move(held).value();
    return line;
  }
  std::optional<line_handle> open_line_at(scene_id scene, std::uint32_t line, std::uint32_t generation,
                                          party_id owner) override {
    return local_->open_line_at(scene, line, generation, owner);
  }
  void quarantine_line(line_handle line) override { local_->quarantine_line(line); }
  void close_line(line_handle line) override { local_->close_line(line); }
  // The id is free here: the store may hand it out again, to any node.
  void free_line(scene_id scene, std::uint32_t line) override {
    local_->free_line(scene, line);
    auto it = held_.find({scene, line});
    if (it == held_.end()) return;
    if (auto closed = store_.close(it->second); !closed) warn(closed.error().message);
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
  void place(player_id player, line_handle line) override { local_->place(player, line); }
  void begin_switch(player_id player, line_handle target) override { local_->begin_switch(player, target); }
  void finish_switch(player_id player) override { local_->finish_switch(player); }
  void cancel_switch(player_id player) override { local_->cancel_switch(player); }
  void set_phase(player_id player, scene_id space, phase_id phase, bool pending) override {
    local_->set_phase(player, space, phase, pending);
  }
  void clear_phase(player_id player) override { local_->clear_phase(player); }
  void remove(player_id player) override { local_->remove(player); }
  std::vector<player_id> players(line_handle line) const override { return local_->players(line); }
  std::size_t player_count() const override { return local_->player_count(); }

 private:
  void warn(std::string_view what) const {
    if (opt_.warn) opt_.warn(what);
  }

  const scene_table& table_;
  std::unique_ptr<line_directory> local_;
  line_store store_;
  node_record self_;
  cluster_directory_options opt_;
  std::map<std::pair<scene_id, std::uint32_t>, held_line> held_;       // this node's lines in the store
  std::map<scene_id, std::chrono::steady_clock::time_point> resting_;  // scenes not asked until then
};

}  // namespace

std::unique_ptr<line_directory> make_cluster_directory(const scene_table& table, line_store store,
                                                       node_record self, cluster_directory_options options) {
  return std::make_unique<cluster_directory>(table, std::move(store), std::move(self), std::move(options));
}

}  // namespace scenert::cluster
