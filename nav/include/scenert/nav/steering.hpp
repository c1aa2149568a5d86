#pragma once
/// Steering for ordinary mobs, one cell per step: seek with wall sliding, a cap on mobs per cell,
/// a leash home. Cheap enough for every mob every think; bosses search instead (search.hpp), and
/// packs chasing one target share a flow field (flow_field.hpp).

#include <cstdint>
#include <optional>

#include <scenert/nav/nav_map.hpp>
#include <scenert/nav/types.hpp>

namespace scenert::nav {

/// How many mobs stand on a cell, as the caller counts them. Non-owning, no allocation; an empty
/// counter counts 0 everywhere.
class cell_counter {
 public:
  /// Counts 0 everywhere.
  cell_counter() = default;
  /// Wraps a callable `std::uint32_t(cell)`; keeps a pointer to it.
  template <class F>
  explicit cell_counter(const F& count)
      : ctx_(&count),
        fn_([](const void* c, cell at) -> std::uint32_t { return (*static_cast<const F*>(c))(at); }) {}
  /// Mobs on the cell.
  [[nodiscard]] std::uint32_t count(cell at) const { return fn_ == nullptr ? 0 : fn_(ctx_, at); }

 private:
  const void* ctx_ = nullptr;
  std::uint32_t (*fn_)(const void*, cell) = nullptr;
};

/// A mob's steering memory.
struct mob_steer {
  cell position;           ///< where it stands
  cell home;               ///< where it spawned and returns to
  bool returning = false;  ///< leashed: walking home, its target forgotten until it arrives
};

/// The rules every mob of a kind steers by.
struct steer_rules {
  double leash = 20;           ///< octile distance from home past which the mob turns back
  std::uint32_t cell_cap = 1;  ///< mobs allowed on one cell (the mover's own cell excluded)
};

/// What one steering step did.
enum class steer_result : std::uint8_t {
  moved,    ///< stepped one cell toward its target (or home)
  stayed,   ///< no allowed step: blocked, corner, or the cells were full; or nothing to seek
  arrived,  ///< already on its target (or home: then `returning` is cleared)
  leashed,  ///< went past its leash this step: now returning, target forgotten (it also moved if it could)
};

/// Name of a steer result.
const char* to_string(steer_result result) noexcept;

/// One step of a mob toward `target` (ignored while returning): the direct step, else the two
/// directions beside it, the one ending nearer first. Never into a blocked or full cell, never
/// across a corner. Updates `mob.position`; the caller moves the mob in its own counts.
steer_result steer(const nav_map& map, mob_steer& mob, std::optional<cell> target, const steer_rules& rules,
                   const cell_counter& counts = {}, const cell_filter& filter = {});

}  // namespace scenert::nav
