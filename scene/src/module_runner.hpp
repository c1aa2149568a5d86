#pragma once
// module_runner: a line's game module and the module_context it sees. It keeps the module's timers
// and its random source, runs every hook under a guard (a throw fails the line, nothing else) and
// turns the context's calls into the scene's entity calls and module frames.

#include <scenert/scene/game_module.hpp>
#include <scenert/scene/scene.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace scenert::detail {

// Thread-safety: none; the line's thread.
class module_runner final : public module_context {
 public:
  module_runner(scene& line, std::unique_ptr<game_module> module, std::uint32_t seed, player_store* store);
  ~module_runner() override;
  module_runner(const module_runner&) = delete;
  module_runner& operator=(const module_runner&) = delete;

  [[nodiscard]] game_module& module() noexcept { return *module_; }

  // The scene's lifecycle, forwarded to the module (each under the guard).
  void init();
  void activate();
  void deactivate();
  void start_tick();                   // at the start of the scene's tick: arms timers made between ticks
  void tick(const tick_context& ctx);  // after the AI: due timers, then on_tick
  void entered(player_id p);
  void leaving(player_id p);
  void message(player_id p, module_opcode opcode, std::string_view bytes);
  // The store answered a grant made by the opening `generation` (the line's thread, from its mailbox).
  void granted(std::uint32_t generation, grant_receipt receipt);

  // module_context
  line_handle line() const noexcept override { return scene_.line(); }
  const scene_def& def() const noexcept override { return scene_.def(); }
  time_point now() const noexcept override { return scene_.now(); }
  std::vector<player_id> players() const override { return scene_.player_list(); }
  std::optional<grid::cell_point> where(player_id player) const override;
  std::mt19937_64& random() noexcept override { return random_; }
  void send(player_id player, module_opcode opcode, std::string_view bytes) override;
  void send_to_viewers(monster_id entity, module_opcode opcode, std::string_view bytes) override;
  void send_to_line(module_opcode opcode, std::string_view bytes) override;
  timer_id after(nanoseconds delay, std::function<void(module_context&)> fn) override;
  timer_id every(nanoseconds period, std::function<void(module_context&)> fn) override;
  bool cancel(timer_id timer) override;
  std::optional<monster_id> spawn(const entity_spec& spec) override;
  bool remove(monster_id entity) override;
  bool set_look(monster_id entity, entity_look look) override;
  bool move(monster_id entity, grid::cell_point to) override;
  std::optional<entity_look> look(monster_id entity) const override;
  std::optional<grid::cell_point> where_entity(monster_id entity) const override;
  std::optional<monster_view> brain(monster_id entity) const override;
  const std::shared_ptr<const nav::nav_map>& nav() const noexcept override { return scene_.nav_map(); }
  result<std::string, store_errc> grant(player_id player, item_id item, std::int64_t count,
                                        std::string id) override;

 private:
  struct timer {
    timer_id id = 0;
    std::optional<time_point> due;  // none: armed outside a tick, due `wait` after the next one began
    nanoseconds wait{};
    nanoseconds period{};  // 0: once
    std::function<void(module_context&)> fn;
  };
  timer_id add_timer(nanoseconds wait, nanoseconds period, std::function<void(module_context&)> fn);
  void run_due_timers(time_point now);
  template <class F>
  void guarded(F&& hook);
  std::string fresh_grant_id();

  // The way back from the store's thread to this line: its mailbox while the runner lives. The
  // store's thread posts under the mutex; the runner's end clears `to` under it (the line object may
  // be dropped while a grant is still being written).
  struct way_back {
    std::mutex m;
    module_runner* to = nullptr;
    void post(std::uint32_t generation, grant_receipt receipt);
  };

  scene& scene_;
  std::unique_ptr<game_module> module_;
  std::uint32_t seed_;
  std::mt19937_64 random_;
  std::vector<timer> timers_;
  timer_id next_timer_ = 1;
  bool ticking_ = false;  // inside the scene's tick: now() is this tick's start
  player_store* store_ = nullptr;
  std::shared_ptr<way_back> back_;
  std::string clicks_;      // the module's click actions as click_actions_opcode's bytes; empty: none
  std::string opening_id_;  // random, made by the opening's first grant: its grants' ids start with it
  std::uint64_t grants_ = 0;
};

}  // namespace scenert::detail
