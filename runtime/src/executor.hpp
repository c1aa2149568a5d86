#pragma once
/// detail::executor: the threads that run batches of ticks. Two backends behind one interface:
/// a oneTBB task_arena (the default) and a plain std::thread pool (for ThreadSanitizer builds).

#include <cstdint>
#include <memory>

#include <scenert/runtime/processor_pool.hpp>
#include <scenert/runtime/unique_function.hpp>

namespace scenert::detail {

/// Thread-safety: submit() from any thread; the task receives the index (0..workers-1) of the
/// worker running it, unique among the tasks running at that instant.
class executor {
 public:
  using task = unique_function<void(unsigned worker)>;
  virtual ~executor() = default;
  /// Runs `t` on some worker once CLOCK_MONOTONIC reaches `not_before_ns` (at once if it has),
  /// tasks in order of that time, then of submission. Never runs it inline.
  virtual void submit(task t, std::int64_t not_before_ns = 0) = 0;
  [[nodiscard]] virtual unsigned workers() const noexcept = 0;
};

/// The largest worker count a pool accepts.
inline constexpr unsigned max_workers = 256;

/// `realtime_priority`: as pool_options, for the worker threads while they serve the executor.
std::unique_ptr<executor> make_tbb_executor(unsigned workers, int realtime_priority);
std::unique_ptr<executor> make_thread_executor(unsigned workers, int realtime_priority);

}  // namespace scenert::detail
