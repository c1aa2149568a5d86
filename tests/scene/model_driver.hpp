#pragma once
// Shared by the randomized model tests: one thread's simulated players against a real world.

#include <barrier>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::test {

/// The first violations a model test found, from any thread.
class violation_list {
 public:
  void add(std::string v) {
    std::lock_guard g(m_);
    if (list_.size() < 20) list_.push_back(std::move(v));
  }
  [[nodiscard]] std::vector<std::string> list() const {
    std::lock_guard g(m_);
    return list_;
  }

 private:
  mutable std::mutex m_;
  std::vector<std::string> list_;
};

/// A steady-clock pool of two workers that logs nothing.
inline std::unique_ptr<processor_pool> quiet_pool() {
  pool_options po;
  po.workers = 2;
  po.log = [](log_level, std::string_view) {};
  return std::make_unique<processor_pool>(std::move(po));
}

/// What a model test tells the driver of one thread.
struct model_thread {
  int thread = 0;      ///< 0 runs the checkpoints
  player_id base = 1;  ///< players are base .. base + players - 1
  int players = 0;
  int requests = 0;
  int checkpoint_every = 0;  ///< requests between checkpoints, all threads quiet
  std::function<world_request(std::mt19937_64&, player_id)> next;  ///< the player's next request
  std::function<void(player_id, const world_request&, const world_result&)> apply;  ///< its answer
  std::function<void()> checkpoint;
};

/// Thread `t`'s share of a model run: players from 1 + t * 1000, its request and checkpoint counts.
inline model_thread thread_share(int t, int players, int requests, int checkpoint_every) {
  model_thread mt;
  mt.thread = t;
  mt.base = 1 + static_cast<player_id>(t) * 1000;
  mt.players = players;
  mt.requests = requests;
  mt.checkpoint_every = checkpoint_every;
  return mt;
}

/// Runs `check` on the world's line directory, on the world's thread, and waits for it.
template <class Check>
void check_directory(world& w, Check&& check) {
  std::promise<void> done;
  auto f = done.get_future();
  w.query([&](const line_directory& dir) {
    check(dir);
    done.set_value();
  });
  f.wait();
}

/// Sends `requests` random requests, one in flight per player, answers applied on this thread.
inline void drive_players(world& w, const model_thread& t, std::barrier<>& sync) {
  std::mt19937_64 rng(1000 + static_cast<unsigned>(t.thread));
  std::mutex m;
  std::vector<std::tuple<player_id, world_request, world_result>> answers;
  std::vector<bool> busy(static_cast<std::size_t>(t.players), false);
  int sent = 0, in_flight = 0;
  auto absorb = [&] {
    std::vector<std::tuple<player_id, world_request, world_result>> got;
    {
      std::lock_guard g(m);
      got.swap(answers);
    }
    for (auto& [p, req, r] : got) {
      t.apply(p, req, r);
      busy[p - t.base] = false;
      --in_flight;
    }
  };
  auto quiet = [&] {
    while (in_flight > 0) absorb(), std::this_thread::yield();
  };
  while (sent < t.requests) {
    absorb();
    const auto idx = static_cast<std::size_t>(rng() % static_cast<unsigned>(t.players));
    if (busy[idx]) {
      std::this_thread::yield();
      continue;
    }
    const player_id p = t.base + idx;
    const world_request req = t.next(rng, p);
    busy[idx] = true;
    ++in_flight, ++sent;
    w.submit(req, [&m, &answers, p, req](world_result r) {
      std::lock_guard g(m);
      answers.emplace_back(p, req, std::move(r));
    });
    if (sent % t.checkpoint_every == 0) {
      quiet();
      sync.arrive_and_wait();  // everyone quiet
      if (t.thread == 0) t.checkpoint();
      sync.arrive_and_wait();
    }
  }
  quiet();
}

}  // namespace scenert::test
