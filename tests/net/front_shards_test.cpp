// The front over several I/O threads: each owns the connections it was handed in turn and mirrors
// every line, so players on different threads see each other exactly as on one.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <variant>
#include <vector>

#include "front_fixture.hpp"

namespace scenert::net {
namespace {

using namespace std::chrono_literals;
using namespace test;

constexpr std::size_t threads = 3;

// One town line for all of them.
void roomy_town(scene_table& t) {
  for (auto& d : t.scenes)
    if (d.id == town_id) d.capacity = d.hard_capacity = 10;
}

struct landed {
  std::unique_ptr<client> c;
  std::int32_t pid = 0;
};

// `count` guests on the town's entry, one after the other: each has seen all those before it.
std::vector<landed> land_all(server& s, std::size_t count) {
  std::vector<landed> all;
  for (std::size_t i = 0; i < count; ++i) {
    landed l{s.connect(), 0};
    players_in_view view;
    l.pid = land(*l.c, &view);
    EXPECT_EQ(others(view, l.pid).size(), i) << "guest " << i << " sees everyone who landed before it";
    for (auto& before : all)
      wait_for<broadcast>(*before.c,
                          [&](const broadcast& b) { return is(b, l.pid, broadcast_type::appeared); });
    all.push_back(std::move(l));
  }
  return all;
}

TEST(FrontShards, PlayersOnDifferentThreadsSeeEachOtherMoveChatAndLeave) {
  server s(front_options{.io_threads = threads}, roomy_town);
  auto all = land_all(s, threads + 1);  // every thread holds one, the first two

  // A move with the client's own floats reaches every viewer as it was sent, whichever thread holds it.
  const position to{18.25F, 1, 18.75F, 90, 0};
  ASSERT_TRUE(all[1].c->send(move_to{to}));
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i == 1) continue;
    auto moved = wait_for<broadcast>(
        *all[i].c, [&](const broadcast& b) { return is(b, all[1].pid, broadcast_type::moved); });
    EXPECT_EQ(moved.p, to) << "viewer " << i;
    EXPECT_EQ(moved.name, "guest-" + std::to_string(all[1].pid));
  }

  // World chat reaches every thread's clients.
  ASSERT_TRUE(all[2].c->send(talk{"across threads"}));
  for (auto& l : all) {
    auto chat = wait_for<broadcast>(
        *l.c, [&](const broadcast& b) { return is(b, all[2].pid, broadcast_type::chat); });
    EXPECT_EQ(chat.content, "across threads");
  }

  // Connections per line add up over the threads (published every quarter second).
  const auto deadline = std::chrono::steady_clock::now() + patience;
  std::uint32_t on_town = 0;
  while (on_town != all.size() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
    on_town = 0;
    for (const auto& l : s.door->connections_by_line())
      if (l.line.scene == town_id) on_town += l.connections;
  }
  EXPECT_EQ(on_town, all.size());

  // A logoff on one thread is a 201 on all the others.
  all[0].c->close();
  for (std::size_t i = 1; i < all.size(); ++i)
    wait_for<left_view>(*all[i].c, [&](const left_view& l) { return l.pid == all[0].pid; });
}

TEST(FrontShards, StoppingSaysGoodbyeOnEveryThread) {
  server s(front_options{.io_threads = threads}, roomy_town);
  auto all = land_all(s, threads);
  s.door->stop();
  for (auto& l : all) EXPECT_EQ(wait_for<goodbye>(*l.c).reason, "shutting_down: the server stops");
  EXPECT_EQ(closed(s, close_reason::shutting_down), threads);
}

}  // namespace
}  // namespace scenert::net
