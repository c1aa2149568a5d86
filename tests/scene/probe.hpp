#pragma once
// A scene module that records its hooks, can cost manual-clock time and can throw.

#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <scenert/runtime/clock.hpp>
#include <scenert/scene/scene.hpp>

namespace scenert::test {

struct probe_log {
  std::mutex m;
  std::vector<std::string> lines;
  void add(std::string s) {
    std::lock_guard g(m);
    lines.push_back(std::move(s));
  }
};

struct probe_module final : scene_module {
  probe_log* log = nullptr;
  manual_clock* clk = nullptr;
  nanoseconds cost{};
  bool throws = false;
  std::vector<nanoseconds> intervals;

  void on_init(scene& s) override { note(s, "init"); }
  void on_active(scene& s) override { note(s, "active"); }
  void on_inactive(scene& s) override { note(s, "inactive"); }
  void on_tick(scene& s, const tick_context& ctx) override {
    intervals.push_back(ctx.interval);
    note(s, "tick");
    if (clk) clk->advance(cost);
    if (throws) throw std::runtime_error("probe: tick failed");
  }
  void on_player_enter(scene& s, player_id p) override { note(s, fmt::format("enter {}", p)); }
  void on_player_leave(scene& s, player_id p) override { note(s, fmt::format("leave {}", p)); }
  void note(scene& s, const std::string& what) {
    if (log) log->add(fmt::format("{}:{}", s.line().line, what));
  }
};

}  // namespace scenert::test
