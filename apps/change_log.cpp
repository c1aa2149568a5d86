#include "change_log.hpp"

#include <spdlog/spdlog.h>

namespace scenert::apps {

void change_log::update_scene(const scene_snapshot& sc) {
  std::set<line_key> open, quarantined;
  for (const auto& l : sc.lines) {
    if (l.state == line_state::open) open.emplace(l.line, l.generation);
    if (l.state == line_state::quarantined) quarantined.emplace(l.line, l.generation);
  }
  auto& before = open_[sc.def->id];
  std::vector<line_key> opened, closed;
  for (const auto& k : open)
    if (!before.count(k)) opened.push_back(k);
  for (const auto& k : before)
    if (!open.count(k)) closed.push_back(k);
  report(sc, opened, closed);
  auto& seen = quarantined_[sc.def->id];
  for (const auto& k : quarantined)
    if (seen.insert(k).second)
      spdlog::warn("scene {} ({}) line {}: quarantined (its ticks kept failing); players moved out",
                   sc.def->id, sc.def->name, std::get<0>(k));
  before = std::move(open);
}

void change_log::report(const scene_snapshot& sc, const std::vector<line_key>& opened,
                        const std::vector<line_key>& closed) {
  if (opened.size() + closed.size() > detail_limit) {
    spdlog::info("scene {} ({}): {} lines opened, {} closed; {} open, {} players", sc.def->id, sc.def->name,
                 opened.size(), closed.size(), sc.open_lines, sc.players);
    return;
  }
  for (const auto& [line, gen] : opened)
    spdlog::info("scene {} ({}) line {} opened (generation {}); {} open", sc.def->id, sc.def->name, line, gen,
                 sc.open_lines);
  for (const auto& [line, gen] : closed)
    spdlog::info("scene {} ({}) line {} closed (generation {}); {} open", sc.def->id, sc.def->name, line, gen,
                 sc.open_lines);
}

}  // namespace scenert::apps
