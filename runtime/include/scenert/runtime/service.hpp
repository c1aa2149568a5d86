#pragma once
/// service: the unit of work the processor pool ticks — a mailbox and a tick (actor style).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <scenert/runtime/clock.hpp>
#include <scenert/runtime/unique_function.hpp>

namespace scenert {

namespace detail {
struct service_state;
struct pool_entry;
struct pool_access;
}  // namespace detail

/// What a tick is told.
struct tick_context {
  nanoseconds interval{};   ///< since this service's previous tick began (the nominal period on the first)
  time_point now{};         ///< when this tick began
  std::uint64_t index = 0;  ///< ticks run since the service was last activated, this one excluded
};

/// How one guarded tick ended (see service::tick).
enum class tick_outcome : std::uint8_t { ok, failed, quarantined };

/// A service: hooks for its lifecycle and its tick, and a mailbox that other threads post to.
///
/// Lifecycle: on_init once per object (the first activation), then any number of
/// on_active ... ticks ... on_inactive rounds. A pooled object is re-activated, never re-initialised.
/// Who drives it: the processor pool for top-level services; a parent service (a scene group, a
/// town with its phases) for children, through the same public driving calls.
///
/// Thread-safety: post(), mailbox_depth(), the counters and name() from any thread; the driving
/// calls (activate, tick, deactivate) from one thread at a time — never two ticks at once.
class service {
 public:
  using message = unique_function<void()>;

  explicit service(std::string name);
  virtual ~service();
  service(const service&) = delete;
  service& operator=(const service&) = delete;

  [[nodiscard]] const std::string& name() const noexcept;

  /// Queues `m` to run on this service's thread at the start of its next tick. Lock-free.
  /// Returns false — the message is dropped and counted, never lost silently — once the
  /// mailbox is closed by deactivate() (until the next activate()).
  [[nodiscard]] bool post(message m);

  // ---- driving: the pool, or a parent ticking its children -------------------------------
  /// Runs on_init if it has not run yet (a pooled child created ahead of use); later calls do nothing.
  void init();
  /// Runs on_init on the first call, then opens the mailbox and runs on_active.
  void activate();
  /// Runs up to `mailbox_batch` queued messages, then on_tick. An exception from either is
  /// caught: `failure` (if given) receives its text, the failure is counted, and after
  /// `quarantine_after` consecutive failures (0 = never) the service is quarantined: on_quarantine
  /// runs once and every later tick() returns tick_outcome::quarantined without running anything.
  tick_outcome tick(const tick_context& ctx, unsigned quarantine_after, std::size_t mailbox_batch,
                    std::string* failure = nullptr) noexcept {
    // Inline for the common tick (no mail, no failure streak), which a pool runs a million times
    // a second: one virtual call. The rest is out of line.
    if (mail_.load(std::memory_order_relaxed) || quarantined_.load(std::memory_order_relaxed) ||
        consecutive_failures_ != 0)
      return tick_slow(ctx, quarantine_after, mailbox_batch, failure);
    try {
      on_tick(ctx);
    } catch (...) {
      return tick_threw(quarantine_after, failure);
    }
    return tick_outcome::ok;
  }
  /// Closes the mailbox, runs every message still queued (none is lost), then on_inactive.
  /// Exceptions from those are caught and reported through `failure` like tick()'s.
  void deactivate(std::string* failure = nullptr) noexcept;

  // ---- state and counters --------------------------------------------------------------
  [[nodiscard]] bool initialized() const noexcept { return initialized_; }
  [[nodiscard]] bool active() const noexcept { return active_.load(std::memory_order_acquire); }
  [[nodiscard]] bool quarantined() const noexcept { return quarantined_.load(std::memory_order_acquire); }
  [[nodiscard]] std::size_t mailbox_depth() const noexcept;
  [[nodiscard]] std::uint64_t dropped_messages() const noexcept;
  [[nodiscard]] std::uint64_t failures() const noexcept;
  /// Consecutive failed ticks so far (reset by a good tick and by activate()); driving thread only.
  [[nodiscard]] unsigned consecutive_failures() const noexcept { return consecutive_failures_; }

 protected:
  /// Once per object, before the first on_active: allocate, load static data, no dynamic content.
  virtual void on_init() {}
  /// Each activation: create the dynamic content (monsters, chests).
  virtual void on_active() {}
  /// Each deactivation: clear all dynamic content, so a reused object is as good as new.
  virtual void on_inactive() {}
  /// One frame.
  virtual void on_tick(const tick_context& ctx) = 0;
  /// Once, when consecutive failures reach the limit (e.g. a scene moves its players out).
  virtual void on_quarantine() {}

 private:
  friend class processor_pool;
  friend struct detail::pool_access;

  tick_outcome tick_slow(const tick_context& ctx, unsigned quarantine_after, std::size_t mailbox_batch,
                         std::string* failure) noexcept;
  tick_outcome tick_threw(unsigned quarantine_after, std::string* failure) noexcept;  // in a catch
  tick_outcome fail_tick(unsigned quarantine_after) noexcept;

  // Only what every tick reads lives here (24 bytes with the vtable pointer), so that a derived
  // service's first fields share its first cache line: a pool ticking many services touches one
  // line per service where it can. The rest (mailbox, name, counters, pool links) is out of line.
  std::unique_ptr<detail::service_state> state_;
  unsigned consecutive_failures_ = 0;
  std::atomic<bool> quarantined_{false};
  std::atomic<bool> active_{false};
  bool initialized_ = false;
  std::atomic<bool> mail_{false};  // set by post() after queueing: a quiet tick reads no mailbox
};

}  // namespace scenert
