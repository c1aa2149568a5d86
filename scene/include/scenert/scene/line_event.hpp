#pragma once
/// What a line's tick did to its players and entities, reported in one batch per tick: the network
/// front keeps a mirror of the line's areas from these and fans them out to the viewers (seed 000's
/// gateway). A game module's frames to its clients travel beside them (module_frame).

#include <cstdint>
#include <string>

#include <scenert/scene/fwd.hpp>
#include <scenert/scene/grid/types.hpp>

namespace scenert {

/// What clients see of an entity besides where it stands: its kind (0: the scene's own monsters),
/// a state id and its health, all the module's to mean what it likes.
struct entity_look {
  std::uint16_t kind = 0;   ///< what it is (a studio's numbering; 0: a monster of the table)
  std::uint16_t state = 0;  ///< what it is doing (a boss's phase, a chest opened...)
  std::int32_t health = 0;  ///< hit points left (0 for entities without any)
  friend constexpr bool operator==(entity_look, entity_look) = default;
};

struct line_event {
  /// `changed`: an entity's look changed where it stands (never a player's).
  enum class kind : std::uint8_t { entered, left, moved, changed };
  kind what = kind::entered;
  player_id player = 0;   ///< the player, or the entity's monster_id when `monster`
  grid::cell_point at{};  ///< entered, moved, changed: the cell it stands on now
  bool monster = false;   ///< an entity of the line (a monster, a module's entity), not a player
  entity_look look{};     ///< `monster`: entered, changed: how it looks now
};

/// One frame a game module sends to clients, from its line's tick: opaque bytes under an opcode
/// (from 2000 up), or a refusal of one client's message (net's frame 1012).
/// A module_frame's opcode for the line's own frame to a player entering it: its module's click
/// actions (net's frame 1015), `bytes` holding each as three little-endian u32 (kind, opcode, range).
/// A module's own opcodes start at 2000, so no module frame is mistaken for it.
inline constexpr std::uint32_t click_actions_opcode = 1015;

struct module_frame {
  enum class audience : std::uint8_t {
    player,   ///< `who` is a player
    viewers,  ///< `who` is an entity: every player who sees it
    line,     ///< every player of the line (or of the phase the batch names)
  };
  audience to = audience::player;
  std::uint64_t who = 0;     ///< player, or entity (monster_id)
  std::uint32_t opcode = 0;  ///< from 2000 up; for a refusal, the opcode refused
  std::string bytes;         ///< the payload; for a refusal, the reason
  std::uint8_t refusal = 0;  ///< 0: a module frame; else a module_errc (a refusal, to `who` only)
  /// A grant the player store committed, to the player `who` wherever it stands (net's frame 1013):
  /// `bytes` is the grant's id, `item` and `count` what it gave.
  bool granted = false;
  std::uint32_t item = 0;
  std::int64_t count = 0;
};

}  // namespace scenert
