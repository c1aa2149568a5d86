// The crypt's party script: what a member of a party does in the fight, in the dungeon's own opcodes.
#include <dungeon/crypt_party.hpp>

#include <dungeon/wire.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <optional>
#include <utility>

namespace dungeon {

namespace {

using scenert::bots::party_member;
using clock = std::chrono::steady_clock;

// Reads the "for N ms more" of a cooldown refusal; none when the reason says something else.
std::optional<int> cooldown_left_ms(std::string_view reason) {
  const auto at = reason.find("for ");
  if (reason.find("cooldown") == std::string_view::npos || at == std::string_view::npos) return std::nullopt;
  int ms = 0;
  const auto* from = reason.data() + at + 4;
  if (std::from_chars(from, reason.data() + reason.size(), ms).ec != std::errc{}) return std::nullopt;
  return ms;
}

class crypt_member final : public scenert::bots::party_script {
 public:
  explicit crypt_member(std::uint32_t member) : leader_(member == 0) {}

  void on_tick(party_member& m) override {
    const auto now = m.now();
    if (chest_) return open_chest(m);
    const auto* boss = find(m, kind::boss);
    if (!boss) return m.stand();  // not in view yet: it walks to the nearest player
    m.phase(boss->state);         // its look's state is its phase (1 alone at first)
    // Within reach (attack_range: 2 cells, Chebyshev) it stays a cell off and strikes.
    const float cell = m.cell_size();
    m.walk_toward(boss->x, boss->z, 1.2f * cell);
    const bool in_reach = std::max(std::abs(boss->x - m.x()), std::abs(boss->z - m.z())) <= 2 * cell;
    if (in_reach && now >= next_attack_) {
      m.send(attack_opcode, encode_target(boss->id));
      before_last_ = std::exchange(last_attack_, now);
      next_attack_ = now + cooldown_;
    }
  }

  void on_frame(party_member& m, std::uint32_t opcode, std::string_view bytes) override {
    std::size_t at = 0;
    if (opcode == phase_opcode) {
      (void)take(bytes, at, 8);
      if (auto phase = take(bytes, at, 1)) m.phase(static_cast<std::uint32_t>(*phase));
    } else if (opcode == chest_opcode) {
      // The boss died: its chest stands where it fell.
      if (auto chest = take(bytes, at, 8)) {
        chest_ = static_cast<std::uint32_t>(*chest);
        m.killed(boss_id_);
      }
    } else if (opcode == opened_opcode) {
      (void)take(bytes, at, 8);
      if (auto chest = take(bytes, at, 8)) m.chest_opened(static_cast<std::uint32_t>(*chest));
      m.done();  // each member's loot comes as 1013 once the store wrote it
    }
  }

  void on_refused(party_member& m, std::uint32_t opcode, std::string_view code,
                  std::string_view reason) override {
    // Out of reach or on cooldown is the fight's way: wait and try again. Anything else is a fault.
    if (auto left = cooldown_left_ms(reason)) {
      // The attack before the refused one landed: the cooldown runs from it. Learnt, the member waits
      // it out from then on instead of asking again (the next refusal corrects a wrong guess).
      next_attack_ = m.now() + std::chrono::milliseconds(*left);
      cooldown_ = std::max<clock::duration>(next_attack_ - before_last_, std::chrono::milliseconds(100));
      return;
    }
    if (opcode == attack_opcode && (reason.find("cells away") != std::string_view::npos ||
                                    reason.find("no living enemy") != std::string_view::npos))
      return;
    m.fail("refused " + std::to_string(opcode) + ": " + std::string(code) + ": " + std::string(reason));
  }

 private:
  const scenert::bots::seen_entity* find(party_member& m, kind k) {
    for (const auto& [id, e] : m.entities())
      if (e.kind == static_cast<std::uint32_t>(k)) {
        if (k == kind::boss) boss_id_ = id;
        return &e;
      }
    return nullptr;
  }

  // The leader walks to the chest and opens it once; the others wait for 2103.
  void open_chest(party_member& m) {
    if (!leader_) return m.stand();
    if (const auto* chest = find(m, kind::chest)) m.walk_toward(chest->x, chest->z, m.cell_size());
    if (asked_) return;
    asked_ = true;
    m.send(open_chest_opcode, encode_target(*chest_));
  }

  bool leader_;
  std::uint32_t boss_id_ = 0;
  std::optional<std::uint32_t> chest_;
  bool asked_ = false;
  clock::time_point next_attack_{}, last_attack_{}, before_last_{};
  clock::duration cooldown_ = std::chrono::milliseconds(100);  // at first a guess; refusals teach it
};

}  // namespace

void register_parties(scenert::bots::party_scripts& scripts) {
  (void)scripts.add("crypt", [](std::uint32_t member) { return std::make_unique<crypt_member>(member); });
}

}  // namespace dungeon
