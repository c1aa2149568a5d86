// `scenert bots --play`: the registry of party scripts, the report's text and JSON, and a run whose
// server is not there (every party fails, each with its reason).
#include <scenert/bots/party_play.hpp>

#include <gtest/gtest.h>

#include <utility>  // before Asio: Boost 1.74's asio/awaitable.hpp needs it under g++ 12

#include <boost/asio.hpp>
#include <nlohmann/json.hpp>

namespace scenert::bots {
namespace {

class idle_script final : public party_script {
 public:
  void on_tick(party_member& m) override { m.stand(); }
};

party_script_factory idle() {
  return [](std::uint32_t) { return std::make_unique<idle_script>(); };
}

TEST(PartyScripts, AddsByNameOnceAndFindsThem) {
  party_scripts s;
  EXPECT_TRUE(s.add("crypt", idle()));
  EXPECT_TRUE(s.add("arena", idle()));
  EXPECT_FALSE(s.add("crypt", idle())) << "a name is taken once";
  EXPECT_FALSE(s.add("", idle()));
  EXPECT_FALSE(s.add("empty", party_script_factory{}));
  EXPECT_NE(s.find("crypt"), nullptr);
  EXPECT_EQ(s.find("raid"), nullptr);
  EXPECT_EQ(s.names(), (std::vector<std::string>{"arena", "crypt"}));
}

party_play_report sample() {
  party_play_report r;
  r.target = "127.0.0.1:7000", r.script = "crypt", r.scene = 2, r.parties = 3, r.party_size = 3, r.seed = 9;
  r.parties_through = 2, r.parties_failed = 1, r.kills = 2, r.chests_opened = 2;
  r.phase_orders = {{"1,2,3", 2}, {"1,2", 1}};
  r.phases_in_order = 3;
  r.grants = 12, r.items_granted = 204, r.items_found = 203, r.items_missing = 1;
  r.refused = {{"refused", 5}};
  r.fight.record(std::chrono::seconds(4));
  r.errors = 1, r.error_examples = {"party 2: member 1 was granted {40: 1} but its account gained {}"};
  return r;
}

TEST(PartyPlayReport, JsonCarriesEveryCount) {
  const auto j = nlohmann::json::parse(party_play_json(sample()));
  EXPECT_EQ(j["parties_through"], 2);
  EXPECT_EQ(j["parties_failed"], 1);
  EXPECT_EQ(j["kills"], 2);
  EXPECT_EQ(j["chests_opened"], 2);
  EXPECT_EQ(j["phase_orders"]["1,2,3"], 2);
  EXPECT_EQ(j["phases_in_order"], 3);
  EXPECT_EQ(j["grants"], 12);
  EXPECT_EQ(j["items_granted"], 204);
  EXPECT_EQ(j["items_found"], 203);
  EXPECT_EQ(j["items_missing"], 1);
  EXPECT_EQ(j["refused"]["refused"], 5);
  EXPECT_NEAR(j["fight_max_s"].get<double>(), 4.0, 0.1);
  EXPECT_EQ(j["error_examples"].size(), 1u);
}

TEST(PartyPlayReport, TextSaysWhatThePartiesDid) {
  const auto text = party_play_text(sample());
  for (const char* line : {"parties through    2 (failed 1)", "kills              2", "chests opened      2",
                           "phases in order    3 parties", "phases 1,2,3        2 parties",
                           "items granted      204 (in 12 grants)", "found after login  203 (missing 1)",
                           "refused 5", "member 1 was granted {40: 1}"})
    EXPECT_NE(text.find(line), std::string::npos) << line << " not in\n" << text;
}

// A port nobody listens on: a port the system gave a socket that is closed again.
std::uint16_t closed_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

// Two members hear the same phases at their own pace: the party's order is the boss's (a member
// behind the other repeats nothing); a member that hears an earlier phase after a later one shows it.
TEST(PartyPhases, MembersAtTheirOwnPaceShowTheBosssOrderAndAStepBackShows) {
  party_phases party;
  std::uint32_t a = 0, b = 0;
  for (const std::uint32_t p : {1, 2, 3}) party.heard(a, p);
  for (const std::uint32_t p : {1, 2, 3}) party.heard(b, p);  // b was behind a
  EXPECT_EQ(party.order, (std::vector<std::uint32_t>{1, 2, 3}));
  party.heard(b, 2);  // the boss went back to 2
  EXPECT_EQ(party.order, (std::vector<std::uint32_t>{1, 2, 3, 2}));
  party_phases skipped;
  std::uint32_t c = 0;
  for (const std::uint32_t p : {1, 3, 2}) skipped.heard(c, p);
  EXPECT_EQ(skipped.order, (std::vector<std::uint32_t>{1, 3, 2}));
}

TEST(PartyPlay, EveryPartyFailsWithItsReasonWhenTheServerIsNotThere) {
  const auto make = idle();
  party_play_options o;
  o.target = {"127.0.0.1", closed_port()};
  o.script_name = "idle", o.script = &make, o.scene = 2, o.parties = 2, o.party_size = 2;
  o.deadline = std::chrono::seconds(10);
  o.progress = false;
  const auto r = run_party_play(o);
  EXPECT_EQ(r.parties_failed, 2u);
  EXPECT_EQ(r.parties_through, 0u);
  EXPECT_EQ(r.errors, 4u) << "each member says why";
  ASSERT_FALSE(r.error_examples.empty());
  EXPECT_NE(r.error_examples[0].find("party 0: member 0: connect:"), std::string::npos)
      << r.error_examples[0];
  EXPECT_LT(r.wall_seconds, 5) << "a refused connect ends the run, not the deadline";
  EXPECT_EQ(r.phase_orders.at("none"), 2u);
}

}  // namespace
}  // namespace scenert::bots
