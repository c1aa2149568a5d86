// How much a dungeon instance costs: N lines of the crypt, each with a party of two, fought to the
// chest on the manual clock on this thread (no pool, no network): the CPU per instance-tick of the
// line with its module, as one JSON object.
//   dungeon_bench_instances [INSTANCES] [SECONDS]      (defaults 1000 and 60 simulated seconds)
#include <dungeon/crypt_boss.hpp>

#include <scenert/config/table_loader.hpp>
#include <scenert/scene/scene.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

using namespace std::chrono_literals;

struct quiet_host final : scenert::scene_host {
  void scene_empty(scenert::line_handle) override {}
  void player_left(scenert::line_handle, scenert::player_id) override {}
  void scene_quarantined(scenert::line_handle) override {}
  bool wants_line_events() const override { return true; }  // the events and frames are made, as served
};

struct counting_store final : scenert::player_store {
  std::uint64_t writes = 0;
  void sign_in(scenert::player_id, std::string owner, scenert::holdings_done done) override {
    done({std::move(owner), {}, {}, {}});
  }
  void sign_out(scenert::player_id) override {}
  void write(scenert::grant g, scenert::grant_done done) override {
    ++writes;
    done({std::move(g), scenert::store_errc::ok, false, {}});
  }
  void read(std::string owner, scenert::holdings_done done) override { done({std::move(owner), {}, {}, {}}); }
};

struct instance {
  std::shared_ptr<scenert::scene> line;
  dungeon::crypt_boss* module = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int seconds = argc > 2 ? std::atoi(argv[2]) : 60;
  const auto table = scenert::load_table_file(DUNGEON_SOURCE_DIR "/table.json").table;
  const scenert::scene_def& def = *table->find_scene(2);
  const auto map = scenert::make_map_data(*table->find_map(def.map));
  quiet_host host;
  counting_store store;
  std::vector<instance> all(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    scenert::module_params params(def.module->params, def.module->pointer);
    auto m = std::make_unique<dungeon::crypt_boss>(dungeon::read_crypt_params(params));
    all[i].module = m.get();
    all[i].line = std::make_shared<scenert::scene>(def, map, &host);
    all[i].line->assign_line({def.id, static_cast<std::uint32_t>(i + 1), 1});
    all[i].line->set_game_module(std::move(m), 38, &store);
    all[i].line->activate();
    all[i].line->post_enter(2 * i + 1);
    all[i].line->post_enter(2 * i + 2);
  }
  scenert::time_point now{};
  const int ticks = seconds * 10;
  const auto started = std::chrono::steady_clock::now();
  for (int t = 0; t < ticks; ++t) {
    now += 100ms;
    for (int i = 0; i < count; ++i) {
      auto& in = all[i];
      if (t % 5 == 0 && in.module->boss())  // each member asks to attack every second (a cooldown's worth)
        for (scenert::player_id p : {2 * i + 1, 2 * i + 2}) {
          scenert::roster_change c{scenert::roster_change::kind::message, p, {}};
          c.opcode = dungeon::attack_opcode, c.bytes = dungeon::encode_target(*in.module->boss());
          in.line->post_roster(c);
        }
      if (t % 5 == 0 && in.module->chest() && in.module->stats().chests_opened == 0) {
        scenert::roster_change c{
            scenert::roster_change::kind::message, static_cast<scenert::player_id>(2 * i + 1), {}};
        c.opcode = dungeon::open_chest_opcode, c.bytes = dungeon::encode_target(*in.module->chest());
        in.line->post_roster(c);
      }
      (void)in.line->tick(scenert::tick_context{100ms, now, static_cast<std::uint64_t>(t)}, 3, 1024);
    }
  }
  const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::uint64_t kills = 0, chests = 0;
  for (auto& in : all) kills += in.module->stats().kills, chests += in.module->stats().chests_opened;
  std::printf(
      "{\"instances\": %d, \"simulated_s\": %d, \"instance_ticks\": %lld, \"wall_s\": %.3f, "
      "\"us_per_instance_tick\": %.2f, \"kills\": %llu, \"chests_opened\": %llu, \"grants\": %llu}\n",
      count, seconds, static_cast<long long>(count) * ticks, spent, spent * 1e6 / (double(count) * ticks),
      static_cast<unsigned long long>(kills), static_cast<unsigned long long>(chests),
      static_cast<unsigned long long>(store.writes));
  for (auto& in : all) in.line->deactivate();
  return kills == static_cast<std::uint64_t>(count) || seconds < 60 ? 0 : 3;
}
