// Micro benches of the runtime: mailbox post and drain, the timing wheel against a binary heap
// at 100k timers, and schedule + dispatch of a no-op tick.
#include <scenert/runtime/processor_pool.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <queue>
#include <vector>

#include "mailbox.hpp"
#include "pool_entry.hpp"

namespace {

using scenert::detail::cohort;
using scenert::detail::mailbox;
using scenert::detail::timing_wheel;

void BM_MailboxPost(benchmark::State& state) {
  mailbox box;
  std::size_t n = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(box.post([] {}));
    if (++n == 4096) {  // drain outside the timing so the queue stays small
      state.PauseTiming();
      mailbox::message m;
      while (box.pop(m)) m = nullptr;
      n = 0;
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MailboxPost);

// p50 of one post, from batches of 64 timed posts (one clock read per batch).
void BM_MailboxPostP50(benchmark::State& state) {
  mailbox box;
  std::vector<double> per_post;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 64; ++i) benchmark::DoNotOptimize(box.post([] {}));
    auto t1 = std::chrono::steady_clock::now();
    per_post.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / 64);
    state.PauseTiming();
    mailbox::message m;
    while (box.pop(m)) m = nullptr;
    state.ResumeTiming();
  }
  std::sort(per_post.begin(), per_post.end());
  state.counters["post_p50_ns"] = per_post[per_post.size() / 2];
  state.counters["post_p99_ns"] = per_post[per_post.size() * 99 / 100];
}
BENCHMARK(BM_MailboxPostP50);

void BM_MailboxPostAndDrain(benchmark::State& state) {
  mailbox box;
  int ran = 0;
  for (auto _ : state) {
    for (int i = 0; i < 64; ++i) (void)box.post([&ran] { ++ran; });
    mailbox::message m;
    while (box.pop(m)) {
      m();
      m = nullptr;
    }
  }
  benchmark::DoNotOptimize(ran);
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_MailboxPostAndDrain);

// Two producer threads post while the consumer thread drains.
void BM_MailboxContendedPost(benchmark::State& state) {
  static mailbox* box = nullptr;
  if (state.thread_index() == 0) box = new mailbox;
  for (auto _ : state) {
    if (state.thread_index() == 0) {
      mailbox::message m;
      for (int i = 0; i < 64 && box->pop(m); ++i) m = nullptr;
    } else {
      benchmark::DoNotOptimize(box->post([] {}));
    }
  }
  if (state.thread_index() == 0) {
    delete box;  // runs after every thread left the loop
  }
}
BENCHMARK(BM_MailboxContendedPost)->Threads(3)->UseRealTime();

constexpr std::int64_t period = 100'000'000;  // 10 Hz

// 100k timers spread over one 100 ms period: expire one slot, re-insert each one period later.
// The wheel's own cost: the due times travel with the items, whose cohorts are not read. (The
// pool puts a cohort of services of one grid behind each item; this is the cost per item.)
void BM_WheelExpireReinsert(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  std::vector<cohort> cohorts(n);
  timing_wheel wheel(0);
  for (std::size_t i = 0; i < n; ++i)
    wheel.insert(1'000'000 + static_cast<std::int64_t>(i) * period / static_cast<std::int64_t>(n),
                 &cohorts[i]);
  std::int64_t moved = 0;
  std::vector<timing_wheel::item> due;  // as the dispatcher hands them out and back
  due.reserve(n);
  for (auto _ : state) {
    wheel.take_due(wheel.cursor_ns(), [&](const timing_wheel::item& it) { due.push_back(it); });
    wheel.step();
    for (auto& it : due) wheel.insert(it.due + period, it.c);
    moved += static_cast<std::int64_t>(due.size());
    due.clear();
  }
  state.SetItemsProcessed(moved);
}
BENCHMARK(BM_WheelExpireReinsert)->Arg(100'000);

// The same work on a binary heap, for the ratio.
void BM_HeapExpireReinsert(benchmark::State& state) {
  auto n = static_cast<std::int64_t>(state.range(0));
  using item = std::pair<std::int64_t, std::int64_t>;
  std::priority_queue<item, std::vector<item>, std::greater<>> heap;
  for (std::int64_t i = 0; i < n; ++i) heap.emplace(1'000'000 + i * period / n, i);
  std::int64_t now = 1'000'000, moved = 0;
  for (auto _ : state) {
    while (heap.top().first <= now) {
      auto [due, id] = heap.top();
      heap.pop();
      heap.emplace(due + period, id);
      ++moved;
    }
    now += 1'000'000;
  }
  state.SetItemsProcessed(moved);
}
BENCHMARK(BM_HeapExpireReinsert)->Arg(100'000);

class noop final : public scenert::service {
 public:
  noop() : service("noop") {}
  void on_tick(const scenert::tick_context&) override {}
};

// Schedule and dispatch of no-op ticks through the whole pool path (manual clock: inline, so
// this is the pool's own cost per tick without thread hand-over).
void BM_ScheduleDispatchNoopTick(benchmark::State& state) {
  scenert::manual_clock clk;
  scenert::pool_options o;
  o.manual = &clk;
  scenert::processor_pool pool(o);
  auto n = static_cast<std::size_t>(state.range(0));
  std::vector<std::shared_ptr<noop>> all;
  for (std::size_t i = 0; i < n; ++i) {
    all.push_back(std::make_shared<noop>());
    (void)pool.add(all.back(), 1000);
  }
  pool.advance(std::chrono::milliseconds(1));
  for (auto _ : state) pool.advance(std::chrono::milliseconds(1));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_ScheduleDispatchNoopTick)->Arg(1)->Arg(1000);

}  // namespace

BENCHMARK_MAIN();
