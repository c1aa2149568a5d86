#pragma once
/// scene_group: one pool service that ticks a group of small scenes (dungeons) in order (seed 004),
/// so 100,000 dungeon lines cost 5,000 pool services, not 100,000.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <scenert/runtime/clock.hpp>
#include <scenert/runtime/inbox.hpp>
#include <scenert/runtime/service.hpp>
#include <scenert/runtime/unique_function.hpp>
#include <scenert/scene/fwd.hpp>

namespace scenert {

/// Scenes of one capacity that fit a group: max(1, group_budget / capacity).
[[nodiscard]] constexpr std::uint32_t group_slots(std::uint32_t group_budget,
                                                  std::uint32_t capacity) noexcept {
  return capacity == 0 || group_budget / capacity == 0 ? 1 : group_budget / capacity;
}

/// How a group drives its members.
struct scene_group_options {
  double hz = 10;                    ///< the group's (and so its members') frame rate
  std::uint32_t slots = 20;          ///< members it holds at most (for the overrun budget)
  unsigned quarantine_after = 10;    ///< consecutive failures that quarantine a member
  std::size_t mailbox_batch = 1024;  ///< messages a member runs per tick at most
  std::chrono::nanoseconds
      member_budget{};          ///< a member tick longer than this is an overrun; 0: period / slots
  const clock* time = nullptr;  ///< null: the steady clock
};

/// Thread-safety: add_member, remove_member and the counters from any thread; the rest is driven
/// by the pool like any service.
class scene_group final : public service {
 public:
  scene_group(std::string name, scene_group_options options);
  ~scene_group() override;

  /// Queues a scene to join: it is activated (on_init the first time, then on_active) at the start
  /// of the group's next tick and ticks from then on, after the members already there.
  void add_member(std::shared_ptr<scene> member);
  /// Queues a scene to leave: at the group's next tick it is deactivated (on_inactive) and
  /// dropped, then `on_removed` runs (on the group's thread).
  void remove_member(std::shared_ptr<scene> member, unique_function<void()> on_removed = {});

  /// Members ticking now (joins and leaves count once the group applied them).
  [[nodiscard]] std::size_t member_count() const noexcept { return count_.load(std::memory_order_relaxed); }
  /// Member ticks that ran over the member budget, summed over members.
  [[nodiscard]] std::uint64_t member_overruns() const noexcept {
    return overruns_.load(std::memory_order_relaxed);
  }
  /// Member ticks that threw, summed over members.
  [[nodiscard]] std::uint64_t member_failures() const noexcept {
    return failures_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] const scene_group_options& options() const noexcept { return options_; }

 protected:
  void on_tick(const tick_context& ctx) override;
  /// Deactivates every member still in the group (a pool stopping), so each on_inactive runs once.
  void on_inactive() override;

 private:
  /// A join (no callback) or a leave, in the order the world asked for them.
  struct member_change {
    std::shared_ptr<scene> s;
    bool joins = true;
    unique_function<void()> on_removed;
  };
  struct member {
    std::shared_ptr<scene> s;
    std::uint64_t ticks = 0;
    std::uint64_t failures = 0;  // its service's count when last read: only a failed tick reads it again
  };

  void apply_changes();
  void apply(member_change& c);
  time_point now() const;

  scene_group_options options_;
  inbox<member_change> changes_{64};
  std::vector<member> members_;
  std::atomic<std::size_t> count_{0};
  std::atomic<std::uint64_t> overruns_{0};
  std::atomic<std::uint64_t> failures_{0};
};

}  // namespace scenert
