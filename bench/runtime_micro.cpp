// Micro benches of the runtime: inbox post and drain, the latency of one post beside a locked
// vector, the timing wheel against a binary heap at 100k timers, and schedule + dispatch of a no-op
// tick.
#include <scenert/runtime/inbox.hpp>
#include <scenert/runtime/processor_pool.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "pool_entry.hpp"

namespace {

using scenert::inbox;
using scenert::detail::cohort;
using scenert::detail::timing_wheel;
using message = scenert::service::message;

// What the network front hands the world: small, trivially movable events.
struct net_event {
  std::uint64_t player = 0;
  std::uint32_t kind = 0;
  float x = 0, z = 0;
  std::uint32_t seq = 0;
};

// The naive baseline: a vector under a mutex, swapped out by the consumer.
class locked_queue {
 public:
  locked_queue(std::size_t, std::size_t) {}
  locked_queue& on_lane(std::size_t) { return *this; }
  bool post(const net_event& e) {
    std::lock_guard lock(mutex_);
    queued_.push_back(e);
    return true;
  }
  template <class F>
  std::size_t drain(F&& fn) {
    {
      std::lock_guard lock(mutex_);
      taken_.swap(queued_);
    }
    for (auto& e : taken_) fn(e);
    const std::size_t n = taken_.size();
    taken_.clear();
    return n;
  }

 private:
  std::mutex mutex_;
  std::vector<net_event> queued_, taken_;
};

void BM_InboxPost(benchmark::State& state) {
  inbox<message> box(4096);
  std::size_t n = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(box.post([] {}));
    if (++n == 4096) {  // drain outside the timing so the ring never spills
      state.PauseTiming();
      box.drain([](message&) {});
      n = 0;
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InboxPost);

void BM_InboxPostAndDrain(benchmark::State& state) {
  inbox<message> box(64);
  int ran = 0;
  for (auto _ : state) {
    for (int i = 0; i < 64; ++i) (void)box.post([&ran] { ++ran; });
    box.drain([](message& m) { m(); });
  }
  benchmark::DoNotOptimize(ran);
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_InboxPostAndDrain);

// The latency of one post with range(0) producers posting while one consumer drains: each post is
// timed alone, and the cost of reading the clock (its median, measured here) is taken off. The
// producers post as fast as they can: range(1) is the ring's size, 4096 spills between two ticks
// (the overflow path), 65536 does not (the lock-free path). range(2) 1: each producer posts on a
// lane of its own (as the network front's I/O threads do), 0: all share lane 0. range(3) 0: the
// producers flood; n: each posts a burst of n events per 1 ms tick, as an I/O thread does.
template <class Queue>
void BM_PostLatency(benchmark::State& state) {
  const auto producers = static_cast<unsigned>(state.range(0));
  const auto ring = static_cast<std::size_t>(state.range(1));
  const bool own_lanes = state.range(2) != 0;
  const auto burst = static_cast<unsigned>(state.range(3));
  constexpr unsigned per_producer = 50'000;
  using clk = std::chrono::steady_clock;
  std::vector<double> clock_cost(10'000);
  for (auto& c : clock_cost) {
    const auto t0 = clk::now();
    const auto t1 = clk::now();
    c = std::chrono::duration<double, std::nano>(t1 - t0).count();
  }
  std::nth_element(clock_cost.begin(), clock_cost.begin() + clock_cost.size() / 2, clock_cost.end());
  const double overhead = clock_cost[clock_cost.size() / 2];

  std::vector<double> all;
  for (auto _ : state) {
    Queue q(ring, own_lanes ? producers : 1);
    std::atomic<unsigned> done{0};
    std::vector<std::vector<double>> lat(producers, std::vector<double>(per_producer));
    std::vector<std::thread> threads;
    for (unsigned p = 0; p < producers; ++p)
      threads.emplace_back([&, p] {
        auto&& lane = q.on_lane(own_lanes ? p : 0);
        const auto start = clk::now();
        for (unsigned i = 0; i < per_producer; ++i) {
          if (burst != 0 && i % burst == 0)
            std::this_thread::sleep_until(start + std::chrono::milliseconds(i / burst));
          const auto t0 = clk::now();
          benchmark::DoNotOptimize(lane.post(net_event{p, 1, 0, 0, i}));
          const auto t1 = clk::now();
          lat[p][i] = std::chrono::duration<double, std::nano>(t1 - t0).count() - overhead;
        }
        done.fetch_add(1);
      });
    // The consumer works as a service does: it drains a batch per tick (here every 1 ms).
    std::uint64_t drained = 0;
    while (done.load() < producers || drained < std::uint64_t{producers} * per_producer) {
      drained += q.drain([](net_event& e) { benchmark::DoNotOptimize(e); });
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (auto& t : threads) t.join();
    for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  }
  std::sort(all.begin(), all.end());
  state.counters["post_p50_ns"] = all[all.size() / 2];
  state.counters["post_p99_ns"] = all[all.size() * 99 / 100];
  state.counters["clock_ns"] = overhead;
  state.SetItemsProcessed(static_cast<std::int64_t>(all.size()));
}
BENCHMARK_TEMPLATE(BM_PostLatency, inbox<net_event>)
    ->ArgsProduct({{1, 4}, {4096, 65536}, {0}, {0}})
    ->Args({4, 16384, 1, 0})
    ->ArgsProduct({{4}, {4096}, {0, 1}, {1000}})
    ->Iterations(5)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_PostLatency, locked_queue)
    ->ArgsProduct({{1, 4}, {0}, {0}, {0, 1000}})
    ->Iterations(5)
    ->UseRealTime();

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
