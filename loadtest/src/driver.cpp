#include <scenert/loadtest/driver.hpp>

#include <algorithm>

namespace scenert::loadtest {

std::optional<world_request> to_request(const plan_step& s) {
  switch (s.what) {
    case step_kind::enter:
      return world_request::enter(s.player, s.scene);
    case step_kind::move:
      return world_request::move(s.player, grid::cell_point{s.x, s.y});
    case step_kind::transfer:
      return world_request::transfer(s.player, s.scene);
    case step_kind::join_team:
      return world_request::join_team(s.player, s.mate);
    case step_kind::leave:
      return world_request::leave(s.player);
    case step_kind::enter_phase:
      return world_request::enter_phase(s.player, s.scene);
    case step_kind::leave_phase:
      return world_request::leave_phase(s.player);
    case step_kind::enter_instance:
      return world_request::enter_instance(s.player, s.scene, s.party);
    case step_kind::count_:
      break;
  }
  return std::nullopt;
}

load_driver::load_driver(world& w, const load_plan& plan) : world_(w), plan_(plan) {
  tally_.online.assign(plan.players, 0);
  lag_.reserve(plan.steps.size());
}

load_driver::~load_driver() { stop(); }

void load_driver::start() {
  thread_ = std::thread([this] { issue_all(); });
}

void load_driver::stop() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

bool load_driver::wait_answers(std::chrono::milliseconds timeout) const {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (answered() < issued()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

void load_driver::issue_all() {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  for (const auto& step : plan_.steps) {
    if (stop_.load(std::memory_order_relaxed)) break;
    const auto due = start + step.at;
    auto now = clock::now();
    // Sleeping for less than a fraction of a millisecond costs more than it keeps on time.
    if (due - now > std::chrono::microseconds(300)) {
      std::this_thread::sleep_until(due);
      now = clock::now();
    }
    lag_.push_back(std::max(std::chrono::nanoseconds(0), std::chrono::nanoseconds(now - due)));
    issue(step);
  }
  std::sort(lag_.begin(), lag_.end());
  done_.store(true, std::memory_order_release);
}

void load_driver::issue(const plan_step& step) {
  auto request = to_request(step);
  if (!request) {
    ++skipped_;
    return;
  }
  ++by_kind_[static_cast<std::size_t>(step.what)];
  issued_.fetch_add(1, std::memory_order_relaxed);
  world_.submit(*request, [this, &step](world_result r) { on_answer(step, r); });
}

// On the world's thread.
void load_driver::on_answer(const plan_step& step, const world_result& r) {
  auto& online = tally_.online[step.player - 1];
  if (r) {
    ++tally_.ok[static_cast<std::size_t>(step.what)];
    const bool places = step.what == step_kind::enter || step.what == step_kind::join_team ||
                        step.what == step_kind::enter_instance;
    if (places && !online) {
      online = 1;
      ++tally_.enters_ok;
    } else if (step.what == step_kind::leave) {
      online = 0;
      ++tally_.leaves_ok;
    }
  } else {
    const auto code = static_cast<std::size_t>(r.code());
    if (tally_.errors[code]++ == 0) tally_.first_error[code] = r.error().message;
  }
  answered_.fetch_add(1, std::memory_order_release);
}

}  // namespace scenert::loadtest
