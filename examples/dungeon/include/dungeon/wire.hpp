#pragma once
/// The dungeon's messages between its clients and its module, under opcodes from 2000 up. scenert
/// carries the bytes without reading them; this is the studio's own format: fixed-size fields,
/// little-endian. A client sends 2001 and 2002; the module sends 2100..2104.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <scenert/scene/game_module.hpp>

namespace dungeon {

/// Client → server: attack an entity (u64 entity).
inline constexpr scenert::module_opcode attack_opcode = 2001;
/// Client → server: open the chest (u64 entity).
inline constexpr scenert::module_opcode open_chest_opcode = 2002;
/// Server → line: the boss entered a phase (u64 boss, u8 phase).
inline constexpr scenert::module_opcode phase_opcode = 2100;
/// Server → viewers of the target: a hit landed (u64 player, u64 target, i32 damage, i32 health left).
inline constexpr scenert::module_opcode hit_opcode = 2101;
/// Server → line: the boss died and its chest stands (u64 chest).
inline constexpr scenert::module_opcode chest_opcode = 2102;
/// Server → line: a player opened the chest (u64 player, u64 chest); each member's loot follows as
/// scenert's Granted frames (1013), once the player store wrote it.
inline constexpr scenert::module_opcode opened_opcode = 2103;
/// Server → viewers of the boss: the boss struck a player (u64 boss, u64 player, i32 damage).
inline constexpr scenert::module_opcode strike_opcode = 2104;

/// What clients see of the dungeon's entities (entity_look::kind and ::state).
enum class kind : std::uint16_t { boss = 1, add = 2, chest = 3 };
/// The boss's phases (its entity_look::state): 1 alone, 2 with adds (from 70%), 3 enraged (from 30%).
enum class boss_phase : std::uint16_t { alone = 1, adds = 2, enraged = 3 };
/// The chest's states.
enum class chest_state : std::uint16_t { closed = 0, open = 1 };

/// Appends a little-endian unsigned integer of `bytes` bytes.
void put(std::string& out, std::uint64_t value, std::size_t bytes);
/// Reads a little-endian unsigned integer of `bytes` bytes at `at`, moving `at` past it; none when the
/// bytes run out.
[[nodiscard]] std::optional<std::uint64_t> take(std::string_view in, std::size_t& at, std::size_t bytes);

/// The payload of 2001 and 2002: the entity aimed at.
[[nodiscard]] std::string encode_target(scenert::monster_id entity);
/// Reads a 2001 or 2002 payload; none unless it is exactly 8 bytes.
[[nodiscard]] std::optional<scenert::monster_id> decode_target(std::string_view bytes);

/// A hit, as 2101 carries it.
struct hit {
  scenert::player_id player = 0;  ///< who struck
  scenert::monster_id target = 0;
  std::int32_t damage = 0;
  std::int32_t health = 0;  ///< left after the hit
  friend bool operator==(const hit&, const hit&) = default;
};
/// 2101's payload.
[[nodiscard]] std::string encode(const hit& h);
/// Reads a 2101 payload; none unless it is exactly 24 bytes.
[[nodiscard]] std::optional<hit> decode_hit(std::string_view bytes);

}  // namespace dungeon
