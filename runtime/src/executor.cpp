#include "executor.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

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

// oneTBB calls a const functor; the task inside runs once.
struct runner {
  mutable executor::task t;
  void operator()() const {
    int idx = tbb::this_task_arena::current_thread_index();
    t(static_cast<unsigned>(idx < 0 ? 0 : idx));
  }
};

// oneTBB caps an arena at the machine's concurrency unless a global_control allows more. Every
// pool asks for the same generous limit, since TBB applies the smallest live value.
class tbb_executor final : public executor {
 public:
  explicit tbb_executor(unsigned workers)
      : limit_(tbb::global_control::max_allowed_parallelism, max_workers + 1),
        arena_(static_cast<int>(workers), 0),
        workers_(workers) {}
  ~tbb_executor() override { arena_.terminate(); }

  void submit(task t) override { arena_.enqueue(runner{std::move(t)}); }
  [[nodiscard]] unsigned workers() const noexcept override { return workers_; }

 private:
  tbb::global_control limit_;
  tbb::task_arena arena_;
  unsigned workers_;
};

class thread_executor final : public executor {
 public:
  explicit thread_executor(unsigned workers) {
    threads_.reserve(workers);
    for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this, i] { run(i); });
  }
  ~thread_executor() override {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void submit(task t) override {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(t));
    }
    cv_.notify_one();
  }
  [[nodiscard]] unsigned workers() const noexcept override { return static_cast<unsigned>(threads_.size()); }

 private:
  void run(unsigned index) {
    for (;;) {
      task t;
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

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<task> queue_;
  bool done_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<executor> make_tbb_executor(unsigned workers) {
  return std::make_unique<tbb_executor>(workers);
}
std::unique_ptr<executor> make_thread_executor(unsigned workers) {
  return std::make_unique<thread_executor>(workers);
}

}  // namespace detail
}  // namespace scenert
