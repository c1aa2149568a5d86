#pragma once
// What `scenert run` logs as its world changes: lines opened, closed and quarantined.

#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <scenert/scene/world.hpp>

namespace scenert::apps {

/// Logs what changed between two world snapshots: lines opened, closed and quarantined.
/// Thread-safety: none; one thread looks.
class change_log {
 public:
  /// Logs what changed since the last snapshot it saw.
  void update(const world_snapshot& s) {
    for (const auto& sc : s.scenes) update_scene(sc);
  }

 private:
  using line_key = std::tuple<std::uint32_t, std::uint32_t>;  // line id, generation
  // Beyond this many changes of one scene between two looks, one summary line says it.
  static constexpr std::size_t detail_limit = 8;

  void update_scene(const scene_snapshot& sc);
  static void report(const scene_snapshot& sc, const std::vector<line_key>& opened,
                     const std::vector<line_key>& closed);

  std::map<scene_id, std::set<line_key>> open_, quarantined_;
};

}  // namespace scenert::apps
