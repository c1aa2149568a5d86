// A line's game module on the scene: its entities on the grid (seen by clients as the monsters
// are), its frames, and the messages its clients send it.
#include <scenert/scene/scene.hpp>

#include <algorithm>

#include <fmt/format.h>

#include "brains.hpp"
#include "module_runner.hpp"

namespace scenert {

void scene::set_game_module(std::unique_ptr<game_module> module, std::uint32_t seed, player_store* store) {
  SCENERT_ASSERT(!initialized(), "set_game_module: the scene was activated already");
  SCENERT_ASSERT(module != nullptr, "set_game_module: no module");
  game_ = std::make_unique<detail::module_runner>(*this, std::move(module), seed, store);
}

game_module* scene::game() const noexcept { return game_ ? &game_->module() : nullptr; }

void scene::fail_module() {
  if (broken_) return;
  broken_ = true;
  if (host_) host_->scene_quarantined(line_);
}

// A client's message for the line's module: it answers, or the client hears why nobody does.
void scene::deliver(const roster_change& c) {
  if (game_) return game_->message(c.player, c.opcode, c.bytes);
  send_frame({module_frame::audience::player, c.player, c.opcode,
              fmt::format("{} runs no game module", name()),
              static_cast<std::uint8_t>(module_errc::no_module)});
}

void scene::send_frame(module_frame frame) {
  if (reports_) frames_.push_back(std::move(frame));  // nobody hears the line: nothing to send
}

std::vector<player_id> scene::player_list() const {
  std::vector<player_id> out;
  out.reserve(players_.size());
  for (const auto& [player, entity] : players_) out.push_back(player);
  return out;
}

std::optional<grid::entity_id> scene::place_entity(const entity_spec& spec) {
  if (!map_->contains(spec.at)) return std::nullopt;
  if (spec.brain) {
    (void)brains();
    auto at = free_cell_near(spec.at, true);
    return at ? place_monster(*at, spec.look) : std::nullopt;
  }
  if (map_->is_block(spec.at)) return std::nullopt;
  auto id = new_entity();
  if (!grid_->add(id, grid::entity_type::item, spec.at, grid::ignore_view{}))
    return free_ids_.push_back(id), std::nullopt;
  entities_.push_back(id);
  looks_[id] = spec.look;
  if (reports_) events_.push_back({line_event::kind::entered, id, spec.at, true, spec.look});
  return id;
}

// A removed entity's id is not given again until the line closes: a client never confuses two.
bool scene::remove_entity(grid::entity_id entity) {
  auto it = std::find(entities_.begin(), entities_.end(), entity);
  if (it == entities_.end()) return kill_monster(entity);
  entities_.erase(it);
  looks_.erase(entity);
  (void)grid_->remove(entity, grid::ignore_view{});
  if (reports_) events_.push_back({line_event::kind::left, entity, {}, true});
  return true;
}

bool scene::set_entity_look(grid::entity_id entity, entity_look look) {
  auto at = entity_at(entity);
  if (!at) return false;
  looks_[entity] = look;
  if (reports_) events_.push_back({line_event::kind::changed, entity, *at, true, look});
  return true;
}

bool scene::move_entity(grid::entity_id entity, grid::cell_point to) {
  if (std::find(entities_.begin(), entities_.end(), entity) == entities_.end()) return false;
  if (!map_->contains(to) || map_->is_block(to)) return false;
  if (!grid_->move(entity, to, grid::ignore_view{})) return false;
  if (reports_) events_.push_back({line_event::kind::moved, entity, to, true});
  return true;
}

std::optional<grid::cell_point> scene::entity_at(grid::entity_id entity) const {
  const bool living = std::find(entities_.begin(), entities_.end(), entity) != entities_.end() ||
                      std::find(monsters_.begin(), monsters_.end(), entity) != monsters_.end();
  if (!living) return std::nullopt;
  return grid_->position_of(entity);
}

std::optional<entity_look> scene::look_of(grid::entity_id entity) const {
  if (!entity_at(entity)) return std::nullopt;
  auto it = looks_.find(entity);
  return it == looks_.end() ? entity_look{} : it->second;
}

void scene::clear_entities() {
  entities_.clear();
  looks_.clear();
}

}  // namespace scenert
