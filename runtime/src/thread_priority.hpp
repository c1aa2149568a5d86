#pragma once
/// detail::realtime_scope: a pool thread on the SCHED_FIFO policy while it serves the pool, so that
/// its wake-up at a tick's due time preempts ordinary processes instead of queueing behind them.

#include <string>

namespace scenert::detail {

/// Puts the calling thread on SCHED_FIFO at `priority` for the scope's life and restores its
/// policy after (a oneTBB thread goes back to oneTBB's pool as it came). Priority 0 does nothing.
class realtime_scope {
 public:
  explicit realtime_scope(int priority) noexcept;
  ~realtime_scope();
  realtime_scope(const realtime_scope&) = delete;
  realtime_scope& operator=(const realtime_scope&) = delete;

  /// Empty when the policy was set (or not asked for); else why the system refused it.
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  int old_policy_ = 0;
  int old_priority_ = 0;
  bool changed_ = false;
  std::string error_;
};

}  // namespace scenert::detail
