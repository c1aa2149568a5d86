#include "line_standing.hpp"

#include <algorithm>

namespace scenert::cluster {

void line_standing::apply(std::span<const line_event> events) {
  for (const auto& e : events) {
    const std::uint32_t player = e.monster ? 0 : 1;
    if (e.what == line_event::kind::left) {
      if (by_entity_.erase(key_of(e)) != 0) players_ -= player;
      continue;
    }
    const bool fresh =
        by_entity_
            .insert_or_assign(key_of(e), line_event{line_event::kind::entered, e.player, e.at, e.monster})
            .second;
    if (fresh) players_ += player;
  }
}

std::vector<line_event> line_standing::entered() const {
  std::vector<line_event> all;
  all.reserve(by_entity_.size());
  for (const auto& [key, e] : by_entity_) all.push_back(e);
  return all;
}

std::vector<line_event> line_standing::left() const {
  std::vector<line_event> all = entered();
  for (auto& e : all) e.what = line_event::kind::left;
  return all;
}

std::vector<line_event> line_standing::replace(std::span<const line_event> now) {
  std::unordered_map<std::uint64_t, line_event> next;
  for (const auto& e : now)
    next.emplace(key_of(e), line_event{line_event::kind::entered, e.player, e.at, e.monster});
  std::vector<line_event> diff;
  for (const auto& [key, e] : by_entity_)
    if (!next.contains(key)) diff.push_back({line_event::kind::left, e.player, e.at, e.monster});
  for (const auto& [key, e] : next) {
    auto was = by_entity_.find(key);
    if (was == by_entity_.end())
      diff.push_back(e);
    else if (was->second.at != e.at)
      diff.push_back({line_event::kind::moved, e.player, e.at, e.monster});
  }
  by_entity_ = std::move(next);
  players_ = static_cast<std::uint32_t>(
      std::count_if(by_entity_.begin(), by_entity_.end(), [](const auto& s) { return !s.second.monster; }));
  return diff;
}

}  // namespace scenert::cluster
