#include <scenert/bots/plan.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace scenert::bots {
namespace {

bots_plan_options options(std::uint64_t seed) {
  bots_plan_options o;
  o.clients = 60;
  o.seconds = 20;
  o.seed = seed;
  o.session_seconds = 8;
  return o;
}

TEST(BotsPlan, TheSameSeedGivesTheSamePlanAndAnotherSeedAnother) {
  const auto a = make_bots_plan(options(7)), b = make_bots_plan(options(7)), c = make_bots_plan(options(8));
  EXPECT_EQ(a.digest, b.digest);
  EXPECT_NE(a.digest, c.digest);
  ASSERT_EQ(a.bots.size(), b.bots.size());
  for (std::size_t i = 0; i < a.bots.size(); ++i) {
    EXPECT_EQ(a.bots[i].arrive, b.bots[i].arrive);
    EXPECT_EQ(a.bots[i].leave, b.bots[i].leave);
    EXPECT_EQ(a.bots[i].seed, b.bots[i].seed);
    ASSERT_EQ(a.bots[i].steps.size(), b.bots[i].steps.size());
    for (std::size_t s = 0; s < a.bots[i].steps.size(); ++s) {
      EXPECT_EQ(a.bots[i].steps[s].at, b.bots[i].steps[s].at);
      EXPECT_EQ(a.bots[i].steps[s].what, b.bots[i].steps[s].what);
      EXPECT_EQ(a.bots[i].steps[s].pick, b.bots[i].steps[s].pick);
    }
  }
}

TEST(BotsPlan, BotsArriveAtTheRateAndActOnlyWhileOnline) {
  auto o = options(3);
  o.rate = 10;
  const auto plan = make_bots_plan(o);
  EXPECT_EQ(plan.length, std::chrono::seconds(20));
  for (std::uint32_t i = 0; i < plan.bots.size(); ++i) {
    const auto& b = plan.bots[i];
    EXPECT_EQ(b.arrive, std::chrono::milliseconds(100) * i);
    EXPECT_GE(b.leave, b.arrive);
    EXPECT_LE(b.leave, plan.length);
    EXPECT_TRUE(std::is_sorted(b.steps.begin(), b.steps.end(),
                               [](const bot_step& x, const bot_step& y) { return x.at < y.at; }));
    for (const auto& s : b.steps) {
      EXPECT_GE(s.at, b.arrive);
      EXPECT_LT(s.at, b.leave);
    }
  }
}

TEST(BotsPlan, ByDefaultEveryBotArrivesInTheFirstQuarterAndStaysToTheEnd) {
  auto o = options(5);
  o.session_seconds = 0;
  const auto plan = make_bots_plan(o);
  for (const auto& b : plan.bots) {
    EXPECT_LT(b.arrive, std::chrono::seconds(5));
    EXPECT_EQ(b.leave, plan.length);
  }
}

TEST(BotsPlan, PartyMembersFollowTheirLeadersDungeonRunsWithTheSameParty) {
  auto o = options(11);
  o.session_seconds = 0;
  o.act_every = 1;
  o.mix = {0, 0, 1, 0, 0, 0, 0, 0};  // dungeon runs only
  const auto plan = make_bots_plan(o);
  std::size_t runs = 0;
  for (std::uint32_t i = 0; i < plan.bots.size(); ++i) {
    const auto& b = plan.bots[i];
    EXPECT_EQ(b.leader, i - i % o.party_size);
    for (const auto& s : b.steps) {
      if (s.what != bot_action::enter_dungeon) continue;
      ASSERT_NE(s.party, 0u);
      EXPECT_EQ(s.party >> 24, b.leader + 1u) << "bot " << i;
      if (b.leader != i) {  // a member: its leader planned the same run a little earlier
        const auto& mine = plan.bots[b.leader].steps;
        EXPECT_TRUE(std::any_of(mine.begin(), mine.end(), [&](const bot_step& l) {
          return l.party == s.party && l.at < s.at && l.pick == s.pick;
        }));
      } else {
        ++runs;
      }
    }
  }
  EXPECT_GT(runs, 0u);
}

TEST(BotsPlan, NoWorldRequestsWhenEveryWeightIsZero) {
  auto o = options(2);
  o.mix = {};
  o.chat_every = 0;
  for (const auto& b : make_bots_plan(o).bots) EXPECT_TRUE(b.steps.empty());
}

}  // namespace
}  // namespace scenert::bots
