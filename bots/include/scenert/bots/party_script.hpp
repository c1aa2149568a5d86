#pragma once
/// A game's party behaviour for `scenert bots --play NAME`: the studio that writes a dungeon's module
/// also writes how a party plays it (whom to attack, with which of its opcodes, when the fight is
/// over), and registers it by name with its server executable (scenert/apps/main.hpp). scenert's
/// bots then log in, enter the dungeon as a party, walk, keep their views of the entities, read the
/// loot (1013) and check it after logging in again, without knowing the game's opcodes.
///
/// Installed with scenert::apps (this header needs the standard library only). Every call below is
/// on the bots' own thread: a script needs no lock.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace scenert::bots {

/// An entity a bot sees (frames 1009/1010: a table's monster or a game module's entity).
struct seen_entity {
  std::uint32_t id = 0;
  float x = 0, z = 0;                 ///< world units, the centre of its cell
  std::uint32_t kind = 0, state = 0;  ///< the module's look
  std::int32_t health = 0;
};

/// One bot of a party, as its script sees and drives it.
class party_member {
 public:
  virtual ~party_member() = default;
  /// Its place in its party: 0 is the leader.
  [[nodiscard]] virtual std::uint32_t member() const = 0;
  /// Its player id (1001).
  [[nodiscard]] virtual std::int32_t player() const = 0;
  /// Where it stands, in world units.
  [[nodiscard]] virtual float x() const = 0;
  /// Where it stands, in world units.
  [[nodiscard]] virtual float z() const = 0;
  /// World units per cell of the map it stands on.
  [[nodiscard]] virtual float cell_size() const = 0;
  /// The entities in its view, by id, as last described.
  [[nodiscard]] virtual const std::map<std::uint32_t, seen_entity>& entities() const = 0;
  /// The bots' clock (steady).
  [[nodiscard]] virtual std::chrono::steady_clock::time_point now() const = 0;
  /// Sends a message to the game module of its line (an opcode from 2000 up, the game's own bytes).
  virtual void send(std::uint32_t opcode, std::string bytes) = 0;
  /// Walks toward a place, a step per move, until within `within` world units of it (around a blocked
  /// cell when a straight step is blocked; it may stay stuck behind a wall: the monsters come).
  virtual void walk_toward(float x, float z, float within) = 0;
  /// Stops walking.
  virtual void stand() = 0;
  /// The party saw `what` die (counted once per party and entity id).
  virtual void killed(std::uint32_t entity) = 0;
  /// The party saw a phase of its fight begin (a repeat of the last one is not counted again).
  virtual void phase(std::uint32_t phase) = 0;
  /// The party's chest was opened (counted once per party and entity id).
  virtual void chest_opened(std::uint32_t entity) = 0;
  /// This member's fight is over: once its grants (1013) have stopped coming (one heard and none for
  /// half a second; or none within 5 s), it logs in again and checks its account gained them (1014).
  virtual void done() = 0;
  /// The party failed: an error of the run, with this reason.
  virtual void fail(std::string reason) = 0;
};

/// How one member plays: one object per bot, made when it enters the dungeon.
class party_script {
 public:
  virtual ~party_script() = default;
  /// Every tick of the bots (10 ms) while the member is in the dungeon and not done.
  virtual void on_tick(party_member& m) = 0;
  /// A frame of the game module (2000 and up), its bytes as the module wrote them.
  virtual void on_frame(party_member& m, std::uint32_t opcode, std::string_view bytes) {
    (void)m, (void)opcode, (void)bytes;
  }
  /// A module message of this member was refused (1012).
  virtual void on_refused(party_member& m, std::uint32_t opcode, std::string_view code,
                          std::string_view reason) {
    (void)m, (void)opcode, (void)code, (void)reason;
  }
};

/// Makes the script of one member (`member`: its place in the party, 0 the leader).
using party_script_factory = std::function<std::unique_ptr<party_script>(std::uint32_t member)>;

/// The scripts a server executable knows, by name (`--play NAME`).
class party_scripts {
 public:
  /// Adds a script; false when the name is taken or empty.
  bool add(std::string name, party_script_factory make) {
    if (name.empty() || !make || scripts_.count(name) != 0) return false;
    scripts_.emplace(std::move(name), std::move(make));
    return true;
  }
  /// The factory of `name`, or null.
  [[nodiscard]] const party_script_factory* find(std::string_view name) const {
    auto it = scripts_.find(std::string(name));
    return it == scripts_.end() ? nullptr : &it->second;
  }
  /// Every name, sorted.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, make] : scripts_) out.push_back(name);
    return out;
  }

 private:
  std::map<std::string, party_script_factory> scripts_;
};

}  // namespace scenert::bots
