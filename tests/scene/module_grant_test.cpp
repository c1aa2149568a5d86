// A game module's grants on the manual clock: the client's frame (a granted module_frame) leaves
// only after the store answered, through the line's mailbox, on the line's next tick.
#include <scenert/scene/game_module.hpp>
#include <scenert/scene/player_store.hpp>
#include <scenert/scene/scene.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <mutex>

#include "fixture.hpp"

namespace scenert {
namespace {

using namespace std::chrono_literals;

// A store that answers only when the test says: the test's thread stands for the store's.
struct held_store final : player_store {
  std::mutex m;
  std::deque<std::pair<grant, grant_done>> pending;
  void sign_in(player_id, std::string owner, holdings_done done) override {
    done({std::move(owner), {}, {}, {}});
  }
  void sign_out(player_id) override {}
  void write(grant g, grant_done done) override {
    std::lock_guard lock(m);
    pending.emplace_back(std::move(g), std::move(done));
  }
  void read(std::string owner, holdings_done done) override { done({std::move(owner), {}, {}, {}}); }
  // Answers the oldest write: committed (or a repeat, or a failure).
  grant answer(store_errc code = store_errc::ok, bool repeated = false) {
    std::unique_lock lock(m);
    auto [g, done] = std::move(pending.front());
    pending.pop_front();
    lock.unlock();
    done(grant_receipt{g, code, repeated, code == store_errc::ok ? "" : "the disk said no"});
    return g;
  }
};

struct frames_host final : scene_host {
  std::vector<module_frame> frames;
  void scene_empty(line_handle) override {}
  void player_left(line_handle, player_id) override {}
  void scene_quarantined(line_handle) override {}
  bool wants_line_events() const override { return true; }
  void module_frames(line_handle, std::span<const module_frame> f) override {
    frames.insert(frames.end(), f.begin(), f.end());
  }
  std::vector<module_frame> grants() const {
    std::vector<module_frame> out;
    std::copy_if(frames.begin(), frames.end(), std::back_inserter(out),
                 [](const module_frame& f) { return f.granted; });
    return out;
  }
};

// Grants 3 of item 40 (or what the message asks) to whoever sends 2001; remembers the store's answers.
struct looting final : game_module {
  std::vector<std::string> ids;
  std::vector<grant_receipt> answers;
  std::vector<std::string> refused;
  message_answer on_message(module_context& c, player_id p, module_opcode, std::string_view bytes) override {
    auto id = c.grant(p, 40, bytes == "none" ? 0 : 3, bytes == "chest" ? "chest-1" : "");
    if (!id) {
      refused.push_back(id.error().message);
      return fail(module_errc::refused, id.error().message);
    }
    ids.push_back(*id);
    return {};
  }
  void on_granted(module_context&, const grant_receipt& r) override { answers.push_back(r); }
};

struct ModuleGrant : ::testing::Test {
  scene_table table = test::small_table();
  std::shared_ptr<const grid::map_data> map = make_map_data(table.maps[0]);
  frames_host host;
  held_store store;
  looting* module = nullptr;
  std::shared_ptr<scene> line;
  time_point now{};
  std::uint64_t ticks = 0;

  void SetUp() override {
    line = std::make_shared<scene>(*table.find_scene(test::guild_id), map, &host);
    line->assign_line({test::guild_id, 1, 1});
    auto m = std::make_unique<looting>();
    module = m.get();
    line->set_game_module(std::move(m), 7, &store);
    line->activate();
    line->post_enter(5);
    tick();
  }
  void tick() {
    now += 100ms;
    (void)line->tick(tick_context{100ms, now, ticks++}, 3, 1024);
  }
  void send(std::string bytes) {
    roster_change c{roster_change::kind::message, 5, {}};
    c.opcode = 2001;
    c.bytes = std::move(bytes);
    line->post_roster(c);
  }
};

TEST_F(ModuleGrant, TheClientHearsOfAGrantOnlyAfterTheStoreConfirmedIt) {
  send("");
  tick();
  ASSERT_EQ(module->ids.size(), 1u);
  ASSERT_EQ(store.pending.size(), 1u) << "the grant went to the store at once";
  EXPECT_EQ(store.pending.front().first.id, module->ids[0]);
  for (int i = 0; i < 5; ++i) tick();  // the store is slow: the line goes on, nothing is sent
  EXPECT_TRUE(host.grants().empty());
  EXPECT_TRUE(module->answers.empty());

  store.answer();                      // committed: the answer waits in the line's mailbox
  EXPECT_TRUE(host.grants().empty());  // not before the line's next tick
  tick();
  auto sent = host.grants();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].who, 5u);
  EXPECT_EQ(sent[0].bytes, module->ids[0]);
  EXPECT_EQ(sent[0].item, 40u);
  EXPECT_EQ(sent[0].count, 3);
  ASSERT_EQ(module->answers.size(), 1u);
  EXPECT_EQ(module->answers[0].code, store_errc::ok);
}

TEST_F(ModuleGrant, ARepeatOrAFailureIsNotSentButTheModuleHearsIt) {
  send("chest");
  send("");
  tick();
  ASSERT_EQ(module->ids.size(), 2u);
  EXPECT_EQ(module->ids[0], "chest-1") << "the module's own id";
  EXPECT_NE(module->ids[1], "chest-1");
  (void)store.answer(store_errc::ok, true);
  (void)store.answer(store_errc::io);
  tick();
  EXPECT_TRUE(host.grants().empty());
  ASSERT_EQ(module->answers.size(), 2u);
  EXPECT_TRUE(module->answers[0].repeated);
  EXPECT_EQ(module->answers[1].code, store_errc::io);
}

TEST_F(ModuleGrant, ABadGrantIsRefusedAtOnceAndNeverReachesTheStore) {
  send("none");
  tick();
  EXPECT_TRUE(store.pending.empty());
  ASSERT_EQ(module->refused.size(), 1u);
  EXPECT_NE(module->refused[0].find("must be above 0"), std::string::npos) << module->refused[0];
}

TEST_F(ModuleGrant, FreshIdsDifferBetweenGrantsAndOpenings) {
  send("");
  send("");
  tick();
  line->deactivate();
  line->assign_line({test::guild_id, 1, 2});
  line->activate();
  line->post_enter(5);
  tick();
  send("");
  tick();
  ASSERT_EQ(module->ids.size(), 3u);
  EXPECT_NE(module->ids[0], module->ids[1]);
  EXPECT_NE(module->ids[0].substr(0, 32), module->ids[2].substr(0, 32)) << "another opening, another prefix";
  // The first opening's answers reach a closed line's mailbox (refused, the grants are in the store
  // all the same) or the next opening (sent, the module of the new opening not told).
  for (int i = 0; i < 3; ++i) (void)store.answer();
  tick();
  EXPECT_EQ(module->answers.size(), 1u) << "only the current opening's grant reaches on_granted";
}

TEST_F(ModuleGrant, AnAnswerAfterTheLineObjectIsGoneIsDropped) {
  send("");
  tick();
  line->deactivate();
  line.reset();
  (void)store.answer();  // no line to post to: nothing happens
  SUCCEED();
}

TEST(ModuleGrantWithoutStore, AGrantIsRefusedAsNoStore) {
  auto table = test::small_table();
  auto map = make_map_data(table.maps[0]);
  frames_host host;
  auto line = std::make_shared<scene>(*table.find_scene(test::guild_id), map, &host);
  line->assign_line({test::guild_id, 1, 1});
  auto m = std::make_unique<looting>();
  auto* module = m.get();
  line->set_game_module(std::move(m), 7);
  line->activate();
  line->post_enter(5);
  roster_change c{roster_change::kind::message, 5, {}};
  c.opcode = 2001;
  line->post_roster(c);
  time_point now{};
  (void)line->tick(tick_context{100ms, now + 100ms, 0}, 3, 1024);
  ASSERT_EQ(module->refused.size(), 1u);
  EXPECT_NE(module->refused[0].find("no player store"), std::string::npos) << module->refused[0];
}

}  // namespace
}  // namespace scenert
