#pragma once
/// game_module: the game logic a studio writes for a scene's lines (a boss fight, a trap, a chest),
/// named by the scene table and made by a module_registry. Every hook runs on the line's thread, in
/// the line's own order: its roster (players entering, leaving, moving, and their messages in the
/// order each client sent them), its monsters' AI, then the module's timers and on_tick. A hook that
/// throws quarantines its line (the world moves its players out and closes it); no other line notices.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/nav/nav_map.hpp>
#include <scenert/runtime/clock.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/runtime/service.hpp>
#include <scenert/scene/fwd.hpp>
#include <scenert/scene/grid/types.hpp>
#include <scenert/scene/line_event.hpp>
#include <scenert/scene/player_store.hpp>

namespace scenert {

struct monster_view;

/// A message id of a module: clients and modules use ids from here up, scenert's own stay below.
using module_opcode = std::uint32_t;
/// The first opcode that belongs to modules.
inline constexpr module_opcode first_module_opcode = 2000;

/// Why a client's message to a module was not taken (net's frame 1012 carries the name).
enum class module_errc : std::uint8_t {
  ok = 0,
  no_module,       ///< the player's line runs no module
  unknown_opcode,  ///< the module does not take this opcode
  malformed,       ///< the module could not read the bytes
  refused,         ///< the module read them and said no (out of range, on cooldown, ...)
  too_large,       ///< over the front's module_message_bytes (checked before the line hears it)
  not_in_scene,    ///< the player stands on no line (or left the one the message was meant for)
  rate_limited,    ///< over the front's module message rate
  count_
};
/// Every module_errc's name, by code.
inline constexpr const char* module_errc_names[] = {"ok",      "no_module", "unknown_opcode", "malformed",
                                                    "refused", "too_large", "not_in_scene",   "rate_limited"};
static_assert(std::size(module_errc_names) == static_cast<std::size_t>(module_errc::count_),
              "module_errc: name every code");

/// What on_message answers: taken (ok), or why not; the reason reaches the client in frame 1012.
using message_answer = result<void, module_errc>;

/// A timer of a module, to cancel it.
using timer_id = std::uint64_t;

/// What a click on an entity of a kind sends, as a module declares it (game_module::click_actions):
/// the module message `opcode` with the entity's id (its 8 bytes, little endian), when the entity is
/// within `range` cells of the player (0: any distance). Clients hear them as frame 1015.
struct click_action {
  std::uint32_t kind = 0;    ///< the entity's kind (entity_look::kind)
  module_opcode opcode = 0;  ///< from first_module_opcode up
  std::uint32_t range = 0;   ///< cells; 0: any distance
  friend bool operator==(const click_action&, const click_action&) = default;
};

/// An entity a module puts on its line: seen by clients through the mirror like the monsters.
struct entity_spec {
  grid::cell_point at{};  ///< where it stands (the nearest free cell when `brain` and it is taken)
  entity_look look{};     ///< its kind, state and health as clients see them
  bool brain = false;     ///< a monster of the scene's kind: the nav/ brain walks it (chase, leash)
};

/// What a module may do on its line. Every call from the line's thread only (a hook or a timer).
/// Thread-safety: none; the line's thread.
class module_context {
 public:
  virtual ~module_context() = default;

  // ---- the line -------------------------------------------------------------------------
  /// The line this module runs on (its generation changes each time the line opens).
  [[nodiscard]] virtual line_handle line() const noexcept = 0;
  /// The scene definition of the line, its `module` parameters included.
  [[nodiscard]] virtual const scene_def& def() const noexcept = 0;
  /// The start of the tick being run (the manual clock's time in tests).
  [[nodiscard]] virtual time_point now() const noexcept = 0;
  /// The players on the line, in no particular order.
  [[nodiscard]] virtual std::vector<player_id> players() const = 0;
  /// Where a player of the line stands.
  [[nodiscard]] virtual std::optional<grid::cell_point> where(player_id player) const = 0;
  /// The seeded random source of this opening of the line (seeded from the table's runtime.seed,
  /// the scene and the line number): the same table and the same inputs replay the same fight.
  [[nodiscard]] virtual std::mt19937_64& random() noexcept = 0;

  // ---- frames to clients (opcodes from 2000 up; bytes are the module's own format) -------
  /// To one player of the line.
  virtual void send(player_id player, module_opcode opcode, std::string_view bytes) = 0;
  /// To every player who sees the entity (its area within their eyesight).
  virtual void send_to_viewers(monster_id entity, module_opcode opcode, std::string_view bytes) = 0;
  /// To every player of the line.
  virtual void send_to_line(module_opcode opcode, std::string_view bytes) = 0;

  // ---- timers: run on the line's tick when due; all cancelled when the line closes --------
  /// Runs `fn` once, at the first tick at least `delay` from now.
  virtual timer_id after(nanoseconds delay, std::function<void(module_context&)> fn) = 0;
  /// Runs `fn` at the first tick each `period` (> 0) from now, until cancelled.
  virtual timer_id every(nanoseconds period, std::function<void(module_context&)> fn) = 0;
  /// Cancels a timer; false when it ran (once) or was cancelled already.
  virtual bool cancel(timer_id timer) = 0;

  // ---- entities ---------------------------------------------------------------------------
  /// Puts an entity on the line; none when its cell is off the map, blocked or (for a brain) full.
  virtual std::optional<monster_id> spawn(const entity_spec& spec) = 0;
  /// Takes an entity off the line (a brain's monster dies); false when it is not there.
  virtual bool remove(monster_id entity) = 0;
  /// Changes what clients see of an entity; false when it is not there.
  virtual bool set_look(monster_id entity, entity_look look) = 0;
  /// Moves an entity without a brain to a cell; false when it is not there or the cell is not free.
  virtual bool move(monster_id entity, grid::cell_point to) = 0;
  /// An entity's look, when it is there.
  [[nodiscard]] virtual std::optional<entity_look> look(monster_id entity) const = 0;
  /// Where an entity stands, when it is there.
  [[nodiscard]] virtual std::optional<grid::cell_point> where_entity(monster_id entity) const = 0;
  /// The brain of an entity spawned with one (state, target, search), or of a table monster.
  [[nodiscard]] virtual std::optional<monster_view> brain(monster_id entity) const = 0;

  // ---- nav/ -------------------------------------------------------------------------------
  /// The map's passability, shared by every line of the map: a module runs nav/'s searches on it
  /// (nav::search_context, nav::path_queue, steering) for what the brains do not cover.
  [[nodiscard]] virtual const std::shared_ptr<const nav::nav_map>& nav() const noexcept = 0;

  // ---- the player store: loot kept safe ---------------------------------------------------
  /// Gives a player `count` (> 0) of `item` through the player store. The grant is written (durably)
  /// before its player hears of it: scenert sends it frame 1013 once the store has committed it, and
  /// on_granted runs on this line when the store answered. `id` names the grant across the whole
  /// store (the same id is applied once, ever: e.g. "chest-<instance>-<player>"); empty: a fresh id
  /// for this line opening. The id, or at once no_store (the world has none) or bad_grant.
  virtual result<std::string, store_errc> grant(player_id player, item_id item, std::int64_t count,
                                                std::string id = {}) = 0;
};

/// A studio's game logic for a scene's lines. One object per line object: made when the world
/// creates the line object, reused each time that line opens again (on_active starts it afresh).
/// Every hook runs on the line's thread.
class game_module {
 public:
  virtual ~game_module() = default;
  /// Once per line object, on its first opening, before on_active (line thread).
  virtual void on_init(module_context&) {}
  /// What a click on an entity of a kind sends on this module's lines (a play page, a bot). Asked once
  /// per line object, right after on_init (line thread); each player who enters one of its lines is
  /// told them (frame 1015, after the line's view). Default: none, and nothing is sent.
  [[nodiscard]] virtual std::vector<click_action> click_actions() const { return {}; }
  /// Each time the line opens, after the scene placed its monsters and chest (line thread).
  virtual void on_active(module_context&) {}
  /// Each time the line closes, before its entities and timers are cleared (line thread).
  virtual void on_inactive(module_context&) {}
  /// Each tick, after the AI and the due timers (line thread).
  virtual void on_tick(module_context&, const tick_context&) {}
  /// A player arrived on the line and stands on its grid (line thread).
  virtual void on_player_enter(module_context&, player_id) {}
  /// A player is leaving the line; it still stands on its grid (line thread).
  virtual void on_player_leave(module_context&, player_id) {}
  /// A client's message (opcode from 2000 up, bytes as sent), in the order that client sent them
  /// (line thread). Anything but ok is sent back to that client as frame 1012 with its reason.
  virtual message_answer on_message(module_context&, player_id, module_opcode opcode, std::string_view) {
    return fail(module_errc::unknown_opcode, "opcode " + std::to_string(opcode) + " is not this module's");
  }
  /// The store answered a grant this line opening made (line thread): written (its player was sent
  /// 1013 just before), a repeat of an id applied before (nothing sent), or failed (nothing sent).
  /// Not called when the line closed meanwhile: the grant is in the store all the same.
  virtual void on_granted(module_context&, const grant_receipt&) {}
};

}  // namespace scenert
