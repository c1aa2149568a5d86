#pragma once
// What the pool's manual-clock tests share: a probe service that records its ticks, and a pool on
// a manual clock that keeps its log lines.
#include <scenert/runtime/processor_pool.hpp>

#include <functional>
#include <string>
#include <vector>

namespace scenert::testing {

struct probe final : service {
  explicit probe(std::string name, std::function<void(const tick_context&)> fn = {})
      : service(std::move(name)), fn_(std::move(fn)) {}
  std::vector<tick_context> ticks;
  int inits = 0, actives = 0, inactives = 0;
  std::vector<std::string>* journal = nullptr;
  void on_init() override { ++inits; }
  void on_active() override { ++actives; }
  void on_inactive() override {
    ++inactives;
    if (journal) journal->push_back(name() + ":inactive");
  }
  void on_tick(const tick_context& c) override {
    ticks.push_back(c);
    if (journal) journal->push_back(name() + ":tick");
    if (fn_) fn_(c);
  }
  std::function<void(const tick_context&)> fn_;
};

struct manual_pool {
  manual_clock clk;
  std::vector<std::string> logs;
  processor_pool pool{make()};
  pool_options make() {
    pool_options o;
    o.manual = &clk;
    o.log = [this](log_level, std::string_view s) { logs.emplace_back(s); };
    return o;
  }
  bool logged(const std::string& part) const {
    for (auto& l : logs)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
};

inline std::int64_t ns_of(time_point t) { return t.time_since_epoch().count(); }

}  // namespace scenert::testing
