#pragma once
/// The constant-rate driver of `scenert loadtest`: issues the plan's requests at their due times
/// from one thread, never waiting for answers, so a slow world cannot lower the offered load.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <scenert/scene/world.hpp>

#include <scenert/loadtest/plan.hpp>

namespace scenert::loadtest {

/// The answers of a run, kept on the world's thread (replies and queries run there).
/// Thread-safety: written by replies on the world's thread; read there (in a query) or after
/// load_driver::wait_answers() returned true.
struct answer_tally {
  std::vector<std::uint8_t> online;  ///< by player index (id - 1): placed by an answered request
  std::array<std::uint64_t, step_kind_count> ok{};
  std::array<std::uint64_t, world_errc_count> errors{};   ///< by world_errc
  std::array<std::string, world_errc_count> first_error;  ///< one message per code, for the report
  std::uint64_t enters_ok = 0;  ///< players placed from nowhere (enter, or join_team from nowhere)
  std::uint64_t leaves_ok = 0;
};

/// The world request a plan step becomes; nullopt for a step the world cannot take.
[[nodiscard]] std::optional<world_request> to_request(const plan_step& step);

/// Issues a plan against a world. Thread-safety: every member from the thread that made it.
class load_driver {
 public:
  /// `w` and `plan` must outlive the driver; so must every answer (shut the world down first).
  load_driver(world& w, const load_plan& plan);
  ~load_driver();
  load_driver(const load_driver&) = delete;
  load_driver& operator=(const load_driver&) = delete;

  /// Starts issuing; step times count from now.
  void start();
  /// Stops issuing (the steps not issued yet are dropped) and joins the issuing thread.
  void stop();
  /// True once every step was issued (or stop() was called).
  [[nodiscard]] bool done() const noexcept { return done_.load(std::memory_order_acquire); }
  /// Waits until every issued request was answered; false on timeout.
  [[nodiscard]] bool wait_answers(std::chrono::milliseconds timeout) const;

  [[nodiscard]] std::uint64_t issued() const noexcept { return issued_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t answered() const noexcept { return answered_.load(std::memory_order_acquire); }
  /// Requests issued per step kind (after stop() or done()).
  [[nodiscard]] const std::array<std::uint64_t, step_kind_count>& issued_by_kind() const noexcept {
    return by_kind_;
  }
  /// Steps the world cannot take, skipped.
  [[nodiscard]] std::uint64_t skipped() const noexcept { return skipped_; }
  /// How late each request was issued against its schedule, sorted (after stop() or done()).
  [[nodiscard]] const std::vector<std::chrono::nanoseconds>& issue_lag() const noexcept { return lag_; }
  /// The answers (see answer_tally's thread-safety).
  [[nodiscard]] answer_tally& tally() noexcept { return tally_; }

 private:
  void issue_all();
  void issue(const plan_step& step);
  void on_answer(const plan_step& step, const world_result& r);

  world& world_;
  const load_plan& plan_;
  answer_tally tally_;
  std::array<std::uint64_t, step_kind_count> by_kind_{};
  std::uint64_t skipped_ = 0;
  std::vector<std::chrono::nanoseconds> lag_;
  std::atomic<std::uint64_t> issued_{0}, answered_{0};
  std::atomic<bool> stop_{false}, done_{false};
  std::thread thread_;
};

}  // namespace scenert::loadtest
