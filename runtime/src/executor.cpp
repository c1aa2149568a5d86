#include "executor.hpp"
#include "thread_priority.hpp"
#include "tick_clock.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace scenert {

executor_kind default_executor() noexcept {
#if defined(SCENERT_DEFAULT_EXECUTOR_THREADS)
  return executor_kind::threads;
#else
  return executor_kind::tbb;
#endif
}

namespace detail {
namespace {

// The batches waiting for a worker, earliest first: a mutex, a condition variable and a heap.
// A worker waits for the earliest task's time by its own timer, so a batch handed over ahead of
// its time starts one wake-up after it, where a batch handed over at its time would start after
// the dispatcher's wake-up and then the worker's. An idle worker sleeps at once, where an idle
// oneTBB worker would spin and yield for a while after each batch (at one batch per millisecond
// that spinning costs more CPU than the ticks themselves).
class task_queue {
 public:
  explicit task_queue(int realtime_priority) : priority_(realtime_priority) {}
  void push(executor::task t, std::int64_t not_before_ns) {
    bool first;
    {
      std::lock_guard lock(mu_);
      heap_.push_back({not_before_ns, seq_++, std::move(t)});
      std::push_heap(heap_.begin(), heap_.end(), later);
      first = heap_.front().seq == seq_ - 1;
    }
    // A later task needs no word: whoever takes the one before it passes the word on.
    if (first) cv_.notify_one();
  }
  /// Runs tasks as worker `index` until close(); returns once the queue is drained.
  void serve(unsigned index) {
#if defined(__linux__)
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // wake at the task's time, not up to 50 us after
#endif
    realtime_scope realtime(priority_);  // start() checked that the system allows it
    for (executor::task t; take(t);) {
      t(index);
      t = {};
    }
  }
  void close() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
  }

 private:
  struct entry {
    std::int64_t not_before;
    std::uint64_t seq;
    executor::task fn;
  };
  static bool later(const entry& a, const entry& b) noexcept {
    return a.not_before != b.not_before ? a.not_before > b.not_before : a.seq > b.seq;
  }

  /// Waits for the earliest task's time and takes it; false once closed and drained.
  bool take(executor::task& out) {
    std::unique_lock lock(mu_);
    for (;;) {
      if (heap_.empty()) {
        if (done_) return false;
        cv_.wait(lock);
        continue;
      }
      std::int64_t due = heap_.front().not_before;
      if (due <= monotonic_ns()) break;
      cv_.wait_until(lock, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(due)));
    }
    std::pop_heap(heap_.begin(), heap_.end(), later);
    out = std::move(heap_.back().fn);
    heap_.pop_back();
    // Another task is due: a sleeping worker may be waiting for a later time, or for none.
    if (!heap_.empty() && heap_.front().not_before <= monotonic_ns()) cv_.notify_one();
    return true;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<entry> heap_;
  std::uint64_t seq_ = 0;
  bool done_ = false;
  int priority_;
};

// W long-running tasks in a task_arena of W slots, each serving the queue: the ticks run on
// oneTBB's threads, with one enqueue per worker for the pool's life instead of one per batch.
// oneTBB caps an arena at the machine's concurrency unless a global_control allows more. Every
// pool asks for the same generous limit, since TBB applies the smallest live value.
class tbb_executor final : public executor {
 public:
  tbb_executor(unsigned workers, int realtime_priority)
      : limit_(tbb::global_control::max_allowed_parallelism, max_workers + 1),
        arena_(static_cast<int>(workers), 0),
        workers_(workers),
        queue_(realtime_priority),
        running_(workers) {
    for (unsigned i = 0; i < workers; ++i) arena_.enqueue(server{this, i});
  }
  ~tbb_executor() override {
    queue_.close();
    // Every server task runs (a late one finds the queue closed and returns at once) before
    // the arena goes.
    for (unsigned n; (n = running_.load(std::memory_order_acquire)) != 0;) running_.wait(n);
    arena_.terminate();
  }

  void submit(task t, std::int64_t not_before_ns) override { queue_.push(std::move(t), not_before_ns); }
  [[nodiscard]] unsigned workers() const noexcept override { return workers_; }

 private:
  struct server {  // oneTBB calls a const functor
    tbb_executor* self;
    unsigned index;
    void operator()() const {
      self->queue_.serve(index);
      self->running_.fetch_sub(1, std::memory_order_release);
      self->running_.notify_all();
    }
  };

  tbb::global_control limit_;
  tbb::task_arena arena_;
  unsigned workers_;
  task_queue queue_;
  std::atomic<unsigned> running_;
};

class thread_executor final : public executor {
 public:
  thread_executor(unsigned workers, int realtime_priority) : queue_(realtime_priority) {
    threads_.reserve(workers);
    for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this, i] { queue_.serve(i); });
  }
  ~thread_executor() override {
    queue_.close();
    for (auto& t : threads_) t.join();
  }

  void submit(task t, std::int64_t not_before_ns) override { queue_.push(std::move(t), not_before_ns); }
  [[nodiscard]] unsigned workers() const noexcept override { return static_cast<unsigned>(threads_.size()); }

 private:
  task_queue queue_;
  std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<executor> make_tbb_executor(unsigned workers, int realtime_priority) {
  return std::make_unique<tbb_executor>(workers, realtime_priority);
}
std::unique_ptr<executor> make_thread_executor(unsigned workers, int realtime_priority) {
  return std::make_unique<thread_executor>(workers, realtime_priority);
}

}  // namespace detail
}  // namespace scenert
