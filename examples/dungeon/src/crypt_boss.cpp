// The dungeon module's hooks and its clients' messages: attacks and the chest, each checked here,
// on the line's thread, before anything changes.
#include <dungeon/crypt_boss.hpp>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <stdexcept>

#include "cells.hpp"

namespace dungeon {

using scenert::fail;
using scenert::module_errc;

namespace {

using detail::cells_apart;

// An instance's name in grant ids: drawn afresh each opening (line numbers recur, and the line's
// seeded source replays), so two instances never share a grant id.
std::string fresh_instance() {
  std::random_device entropy;
  const std::uint64_t bits = (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
  std::string out(16, '0');
  static constexpr char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < 16; ++i) out[i] = digits[(bits >> (4 * (15 - i))) & 0xf];
  return out;
}

}  // namespace

crypt_boss::crypt_boss(crypt_params params) : params_(std::move(params)) {}

std::vector<scenert::monster_id> crypt_boss::adds() const {
  std::vector<scenert::monster_id> out;
  for (const auto& a : adds_) out.push_back(a.id);
  return out;
}

void crypt_boss::on_active(scenert::module_context& c) {
  instance_ = fresh_instance();
  chest_.reset(), chest_opened_ = false, adds_.clear(), last_attack_.clear(), timers_.clear();
  path_.clear(), next_ = 0;
  phase_ = boss_phase::alone;
  const scenert::entity_look look{static_cast<std::uint16_t>(kind::boss),
                                  static_cast<std::uint16_t>(boss_phase::alone), params_.boss_health};
  boss_ = c.spawn({params_.boss_at, look, false});
  // A table error the factory cannot see (it does not know the map): the line fails, nothing else.
  if (!boss_)
    throw std::runtime_error("crypt_boss: boss_cell [" + std::to_string(params_.boss_at.x) + ", " +
                             std::to_string(params_.boss_at.y) + "] is off the map or blocked");
  stats_.phases.push_back(boss_phase::alone);
  arm_timers(c);
}

void crypt_boss::on_inactive(scenert::module_context&) {
  boss_.reset(), chest_.reset(), adds_.clear();  // scenert clears the entities and timers themselves
}

std::vector<scenert::click_action> crypt_boss::click_actions() const {
  const std::uint32_t reach = params_.attack_range;
  return {{static_cast<std::uint32_t>(kind::boss), attack_opcode, reach},
          {static_cast<std::uint32_t>(kind::add), attack_opcode, reach},
          {static_cast<std::uint32_t>(kind::chest), open_chest_opcode, reach}};
}

scenert::message_answer crypt_boss::on_message(scenert::module_context& c, scenert::player_id player,
                                               scenert::module_opcode opcode, std::string_view bytes) {
  if (opcode == attack_opcode) return attack(c, player, bytes);
  if (opcode == open_chest_opcode) return open_chest(c, player, bytes);
  return game_module::on_message(c, player, opcode, bytes);
}

scenert::message_answer crypt_boss::in_reach(scenert::module_context& c, scenert::player_id p,
                                             scenert::monster_id target) const {
  const auto mine = c.where(p);
  const auto theirs = c.where_entity(target);
  if (!mine || !theirs)
    return fail(module_errc::refused, "entity " + std::to_string(target) + " is not here");
  const auto apart = cells_apart(*mine, *theirs);
  if (apart > params_.attack_range)
    return fail(module_errc::refused, "entity " + std::to_string(target) + " is " + std::to_string(apart) +
                                          " cells away; reach is " + std::to_string(params_.attack_range));
  return {};
}

scenert::message_answer crypt_boss::attack(scenert::module_context& c, scenert::player_id p,
                                           std::string_view bytes) {
  const auto target = decode_target(bytes);
  if (!target)
    return fail(module_errc::malformed,
                "an attack is its target's 8-byte entity id, got " + std::to_string(bytes.size()) + " bytes");
  if (auto last = last_attack_.find(p); last != last_attack_.end()) {
    const auto ready = last->second + params_.attack_cooldown;
    if (c.now() < ready) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(ready - c.now()).count();
      return fail(module_errc::refused, "attack on cooldown for " + std::to_string(left) + " ms more");
    }
  }
  const bool enemy =
      (boss_ && *boss_ == *target) ||
      std::any_of(adds_.begin(), adds_.end(), [&](const add_state& a) { return a.id == *target; });
  if (!enemy) return fail(module_errc::refused, "entity " + std::to_string(*target) + " is no living enemy");
  if (auto reach = in_reach(c, p, *target); !reach) return reach;
  last_attack_[p] = c.now();
  std::uniform_int_distribution<std::int32_t> damage(params_.damage_min, params_.damage_max);
  hurt(c, p, *target, damage(c.random()));
  return {};
}

scenert::message_answer crypt_boss::open_chest(scenert::module_context& c, scenert::player_id p,
                                               std::string_view bytes) {
  const auto target = decode_target(bytes);
  if (!target)
    return fail(module_errc::malformed, "opening the chest names its 8-byte entity id, got " +
                                            std::to_string(bytes.size()) + " bytes");
  if (!chest_) return fail(module_errc::refused, "no chest yet: the boss lives");
  if (*chest_ != *target)
    return fail(module_errc::refused, "entity " + std::to_string(*target) + " is not the chest");
  if (chest_opened_) return fail(module_errc::refused, "the chest was opened already");
  if (auto reach = in_reach(c, p, *target); !reach) return reach;
  chest_opened_ = true;
  ++stats_.chests_opened;
  (void)c.set_look(
      *chest_, {static_cast<std::uint16_t>(kind::chest), static_cast<std::uint16_t>(chest_state::open), 0});
  std::string opened;
  put(opened, p, 8);
  put(opened, *chest_, 8);
  c.send_to_line(opened_opcode, opened);
  grant_loot(c);
  return {};
}

// Each party member (the players of the instance) gets loot_rolls rolls. Players are taken in id
// order so that the seeded source gives the same loot to the same players on a replay; a grant's
// id names the instance, the player and the roll, so no roll is ever applied twice.
void crypt_boss::grant_loot(scenert::module_context& c) {
  auto party = c.players();
  std::sort(party.begin(), party.end());
  for (const auto member : party) {
    for (std::uint32_t roll = 0; roll < params_.loot_rolls; ++roll) {
      const loot_entry& won = params_.loot.roll(c.random());
      std::string id = "crypt-" + instance_ + "-" + std::to_string(member) + "-" + std::to_string(roll);
      stats_.grant_ids.push_back(id);
      ++stats_.grants_asked;
      if (!c.grant(member, won.item, won.count, std::move(id))) ++stats_.grants_failed;
    }
  }
}

void crypt_boss::on_granted(scenert::module_context&, const scenert::grant_receipt& receipt) {
  if (receipt.code != scenert::store_errc::ok)
    ++stats_.grants_failed;
  else if (receipt.repeated)
    ++stats_.grants_repeated;
  else
    ++stats_.grants_written;
}

}  // namespace dungeon
