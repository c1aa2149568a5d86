#include "executor.hpp"
#include "thread_priority.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

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

// The batches waiting for a worker: a mutex, a condition variable and a deque. An idle worker
// sleeps on the condition variable at once, where an idle oneTBB worker would spin and yield
// for a while after each batch (at one batch per millisecond that spinning costs more CPU
// than the ticks themselves).
class task_queue {
 public:
  explicit task_queue(int realtime_priority) : priority_(realtime_priority) {}
  void push(executor::task t) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(t));
    }
    cv_.notify_one();
  }
  /// Runs tasks as worker `index` until close(); returns once the queue is drained.
  void serve(unsigned index) {
    realtime_scope realtime(priority_);  // start() checked that the system allows it
    for (;;) {
      executor::task t;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return done_ || !queue_.empty(); });
        if (queue_.empty()) return;  // done_ and drained
        t = std::move(queue_.front());
        queue_.pop_front();
      }
      t(index);
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
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<executor::task> queue_;
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

  void submit(task t) override { queue_.push(std::move(t)); }
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

  void submit(task t) override { queue_.push(std::move(t)); }
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
