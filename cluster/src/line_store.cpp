#include <scenert/cluster/line_store.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "records.hpp"

namespace scenert::cluster {

namespace {

constexpr int cas_tries = 8;  // lost races on one key before a call gives up (each is a fresh read)

std::string key_of(scene_id scene, std::uint32_t line) { return fmt::format("line.{}.{}", scene, line); }

cluster_result<held_line> read(const kv_bucket& lines, const std::string& key) {
  auto got = lines.get(key);
  if (!got) return got.error();
  auto rec = detail::decode_line(key, got->value);
  if (!rec) return rec.error();
  return held_line{std::move(rec).value(), got->revision};
}

std::string where(const line_record& r) {
  return fmt::format("line {} of scene {} generation {}", r.line, r.scene, r.generation);
}

}  // namespace

cluster_result<held_line> line_store::open(const scene_def& scene, const node_record& node) {
  // The ids read as served before are passed over without a round trip; when that finds none free,
  // every id is read once more (some may have closed since), so `full` means full.
  auto& known = served_[scene.id];
  for (bool again = !known.empty();; again = false) {
    for (std::uint32_t id = 1; id <= scene.max_lines; ++id) {
      if (known.contains(id)) continue;
      auto opened = open_id(scene, id, node);
      if (!opened) return opened.error();
      if (*opened) {
        known.insert(id);
        return std::move(**opened);
      }
      known.insert(id);  // served by someone
    }
    if (!again) break;
    known.clear();
  }
  return fail(cluster_errc::full,
              fmt::format("cluster: scene {}: all {} lines are served (max_lines, cluster-wide)", scene.id,
                          scene.max_lines));
}

cluster_result<std::optional<held_line>> line_store::open_id(const scene_def& scene, std::uint32_t id,
                                                             const node_record& node) {
  const std::string key = key_of(scene.id, id);
  for (int i = 0; i < cas_tries; ++i) {
    auto old = read(lines_, key);
    if (!old && old.code() != cluster_errc::not_found) return old.error();
    if (old && old->record.state == line_state_in_cluster::open) return std::optional<held_line>{};  // served
    line_record r{scene.id,       id, old ? old->record.generation + 1 : 1, node.name, node.epoch,
                  scene.capacity, 0,  line_state_in_cluster::open};
    auto rev =
        old ? lines_.update(key, detail::encode(r), old->revision) : lines_.create(key, detail::encode(r));
    if (rev) return std::optional<held_line>{held_line{std::move(r), *rev}};
    if (rev.code() != cluster_errc::conflict) return rev.error();
  }
  return fail(cluster_errc::conflict,
              fmt::format("cluster: scene {} line {}: lost {} races in a row", scene.id, id, cas_tries));
}

cluster_result<void> line_store::write(held_line& line, line_record next, const char* what) {
  auto rev = lines_.update(key_of(next.scene, next.line), detail::encode(next), line.revision);
  if (rev) {
    line = {std::move(next), *rev};
    return {};
  }
  if (rev.code() != cluster_errc::conflict) return rev.error();
  return fail(cluster_errc::fenced, fmt::format("cluster: node '{}' cannot {} {}: it is no longer the node's",
                                                line.record.node, what, where(line.record)));
}

cluster_result<void> line_store::set_players(held_line& line, std::uint32_t players) {
  line_record next = line.record;
  next.players = players;
  return write(line, std::move(next), "count the players of");
}

cluster_result<void> line_store::close(held_line& line) {
  line_record next = line.record;
  next.players = 0;
  next.state = line_state_in_cluster::closed;
  served_[line.record.scene].erase(line.record.line);  // free for this store's next open, either way
  return write(line, std::move(next), "close");
}

cluster_result<std::vector<line_record>> line_store::tombstone(const std::string& node, std::uint64_t epoch) {
  auto keys = lines_.keys();
  if (!keys) return keys.error();
  std::vector<line_record> taken;
  for (const auto& key : *keys) {
    if (!key.starts_with("line.")) continue;
    for (int i = 0;; ++i) {
      if (i == cas_tries)
        return fail(cluster_errc::conflict,
                    fmt::format("cluster: key '{}': lost {} races in a row", key, cas_tries));
      auto held = read(lines_, key);
      if (!held && held.code() == cluster_errc::not_found) break;
      if (!held) return held.error();
      const line_record& r = held->record;
      if (r.state != line_state_in_cluster::open || r.node != node || r.epoch > epoch) break;
      line_record next = r;
      next.state = line_state_in_cluster::tombstoned;
      auto rev = lines_.update(key, detail::encode(next), held->revision);
      if (rev) {
        served_[r.scene].erase(r.line);
        taken.push_back(r);
        break;
      }
      if (rev.code() != cluster_errc::conflict) return rev.error();  // the dead node wrote: read again
    }
  }
  std::sort(taken.begin(), taken.end(), [](const auto& a, const auto& b) {
    return std::pair(a.scene, a.line) < std::pair(b.scene, b.line);
  });
  return taken;
}

cluster_result<std::vector<held_line>> line_store::lines(scene_id scene) const {
  auto keys = lines_.keys();
  if (!keys) return keys.error();
  const std::string prefix = fmt::format("line.{}.", scene);
  std::vector<held_line> out;
  for (const auto& key : *keys) {
    if (!key.starts_with(prefix)) continue;
    auto held = read(lines_, key);
    if (!held && held.code() == cluster_errc::not_found) continue;
    if (!held) return held.error();
    out.push_back(std::move(held).value());
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.record.line < b.record.line; });
  return out;
}

}  // namespace scenert::cluster
