#pragma once
/// crypt_boss: the reference dungeon's game module. A boss with phases by health (adds summoned at
/// `adds_at`, enraged at `enrage_at` of its health), walking to the nearest player along nav/'s
/// searched paths while its adds steer; attacks that clients request (2001) and the module checks
/// (range, cooldown, target alive); at the boss's death a chest that opens once per instance (2002)
/// and gives each party member loot rolled from a weighted table, through the player store.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/nav/search.hpp>
#include <scenert/nav/steering.hpp>
#include <scenert/scene/game_module.hpp>
#include <scenert/scene/module_registry.hpp>

#include <dungeon/loot_table.hpp>
#include <dungeon/wire.hpp>

namespace dungeon {

/// The module's parameters, as the scene table's `module` object gives them.
struct crypt_params {
  scenert::grid::cell_point boss_at{24, 8};  ///< `boss_cell`: [x, y] where the boss stands at first
  std::int32_t boss_health = 3000;           ///< `boss_health`
  double adds_at = 0.7;                      ///< `adds_at`: the share of health where adds come
  double enrage_at = 0.3;                    ///< `enrage_at`: the share of health where it enrages
  std::uint32_t adds = 3;                    ///< `adds`: how many come
  std::int32_t add_health = 200;             ///< `add_health`
  std::uint32_t attack_range = 2;            ///< `attack_range`: cells (Chebyshev) a player reaches
  std::int32_t damage_min = 80;              ///< `damage_min`: a player's hit, at least
  std::int32_t damage_max = 120;             ///< `damage_max`: a player's hit, at most
  scenert::nanoseconds attack_cooldown = std::chrono::milliseconds(1000);  ///< `attack_cooldown_ms`
  scenert::nanoseconds boss_step = std::chrono::milliseconds(500);         ///< `boss_step_ms`; halved enraged
  scenert::nanoseconds add_step = std::chrono::milliseconds(400);          ///< `add_step_ms`
  scenert::nanoseconds strike_every = std::chrono::milliseconds(2000);     ///< `strike_ms`; halved enraged
  std::int32_t strike_damage = 50;  ///< `strike_damage`: what the boss's strike says it dealt
  std::uint32_t loot_rolls = 2;     ///< `loot_rolls`: rolls of the table per party member
  loot_table loot;                  ///< `loot`: [{"item", "count", "weight"}, ...]
};

/// Reads and checks the parameters; each problem is noted in `p` with its JSON pointer.
[[nodiscard]] crypt_params read_crypt_params(scenert::module_params& p);

/// Registers "crypt_boss" in a studio's registry.
void register_modules(scenert::module_registry& registry);

/// What happened in the line's fights, for tests and logs. Line thread only.
struct crypt_stats {
  std::vector<boss_phase> phases;      ///< every phase entered, in order (alone first)
  std::uint64_t kills = 0;             ///< bosses killed
  std::uint64_t adds_killed = 0;       ///< adds killed
  std::uint64_t chests_opened = 0;     ///< chests opened
  std::uint64_t searches = 0;          ///< the boss's path searches
  std::uint64_t add_steps = 0;         ///< steps the adds' steering took
  std::uint64_t strikes = 0;           ///< the boss's strikes
  std::uint64_t grants_asked = 0;      ///< grants handed to the player store
  std::uint64_t grants_written = 0;    ///< written now
  std::uint64_t grants_repeated = 0;   ///< their id was written before
  std::uint64_t grants_failed = 0;     ///< refused at once or failed in the store
  std::vector<std::string> grant_ids;  ///< every grant id asked for, in order
};

/// The module. One object per line object; every hook on the line's thread.
class crypt_boss final : public scenert::game_module {
 public:
  explicit crypt_boss(crypt_params params);

  /// A click on the boss or an add attacks it (2001), on the chest opens it (2002): each within
  /// attack_range, as the module checks it. Told to each player who enters an instance (frame 1015).
  [[nodiscard]] std::vector<scenert::click_action> click_actions() const override;
  void on_active(scenert::module_context& c) override;
  void on_inactive(scenert::module_context& c) override;
  scenert::message_answer on_message(scenert::module_context& c, scenert::player_id player,
                                     scenert::module_opcode opcode, std::string_view bytes) override;
  void on_granted(scenert::module_context& c, const scenert::grant_receipt& receipt) override;

  /// The current opening's boss, while it lives.
  [[nodiscard]] std::optional<scenert::monster_id> boss() const noexcept { return boss_; }
  /// The current opening's adds, living.
  [[nodiscard]] std::vector<scenert::monster_id> adds() const;
  /// The chest, once the boss died.
  [[nodiscard]] std::optional<scenert::monster_id> chest() const noexcept { return chest_; }
  /// The boss's phase (alone before the line opens).
  [[nodiscard]] boss_phase phase() const noexcept { return phase_; }
  /// This opening's name in grant ids (fresh each opening).
  [[nodiscard]] const std::string& instance() const noexcept { return instance_; }
  /// What happened since the object was made.
  [[nodiscard]] const crypt_stats& stats() const noexcept { return stats_; }

 private:
  struct add_state {
    scenert::monster_id id = 0;
    scenert::nav::mob_steer steer;
  };

  // Messages (crypt_boss.cpp).
  scenert::message_answer attack(scenert::module_context& c, scenert::player_id p, std::string_view bytes);
  scenert::message_answer open_chest(scenert::module_context& c, scenert::player_id p,
                                     std::string_view bytes);
  scenert::message_answer in_reach(scenert::module_context& c, scenert::player_id p,
                                   scenert::monster_id target) const;
  void grant_loot(scenert::module_context& c);
  // The fight (crypt_fight.cpp).
  void arm_timers(scenert::module_context& c);
  void hurt(scenert::module_context& c, scenert::player_id p, scenert::monster_id target,
            std::int32_t damage);
  void advance_phase(scenert::module_context& c, std::int32_t health);
  void enter_phase(scenert::module_context& c, boss_phase next);
  void summon_adds(scenert::module_context& c);
  void boss_died(scenert::module_context& c);
  void walk_boss(scenert::module_context& c);
  void steer_adds(scenert::module_context& c);
  void strike(scenert::module_context& c);
  [[nodiscard]] std::optional<scenert::grid::cell_point> nearest_player(scenert::module_context& c,
                                                                        scenert::grid::cell_point from) const;

  crypt_params params_;
  crypt_stats stats_;
  std::string instance_;
  std::optional<scenert::monster_id> boss_;
  std::optional<scenert::monster_id> chest_;
  bool chest_opened_ = false;
  boss_phase phase_ = boss_phase::alone;
  std::vector<add_state> adds_;
  std::map<scenert::player_id, scenert::time_point> last_attack_;
  std::vector<scenert::timer_id> timers_;
  scenert::nav::search_context search_;
  std::vector<scenert::nav::cell> path_;  // the boss's path: path_[next_] is its next step
  std::size_t next_ = 0;
};

}  // namespace dungeon
