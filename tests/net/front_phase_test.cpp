// Phases over the wire: a player who enters a phase of its town line leaves the town's view (201 both
// ways) and gets the phase's own (its 202); moves inside the phase reach only the phase; leaving
// the phase brings the town's view back.
#include <gtest/gtest.h>

#include <variant>

#include "front_fixture.hpp"

namespace scenert::net {
namespace {

using namespace test;

TEST(FrontPhase, APhasedPlayerSeesThePhaseAndTheTownStopsSeeingIt) {
  server s;
  auto a = s.connect();
  const auto pa = land(*a);
  auto b = s.connect();
  const auto pb = land(*b);
  wait_for<broadcast>(*a, [&](const broadcast& m) { return is(m, pb, broadcast_type::appeared); });

  // Both lose each other; a gets the answer, and the phase's view (nobody else in it), in either order.
  ASSERT_TRUE(a->send(request{1, request_kind::enter_phase, space_id, 0, 0, 0}));
  bool answered = false, lost_b = false, viewed = false;
  while (!answered || !lost_b || !viewed) {
    auto m = a->receive(patience);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    if (auto* x = std::get_if<answer>(&m.value())) {
      ASSERT_EQ(x->code, "ok") << x->message;
      EXPECT_NE(x->phase, 0U);
      answered = true;
    }
    if (auto* l = std::get_if<left_view>(&m.value())) lost_b |= l->pid == pb;
    if (auto* v = std::get_if<players_in_view>(&m.value())) {
      EXPECT_TRUE(others(*v, pa).empty());
      viewed = true;
    }
  }
  wait_for<left_view>(*b, [&](const left_view& l) { return l.pid == pa; });

  // A move inside the phase is seen by nobody in the town: b's next news of a is its return.
  ASSERT_TRUE(a->send(move_to{{18.5F, 0, 18.5F, 0, 0}}));
  ASSERT_TRUE(a->send(request{2, request_kind::leave_phase, 0, 0, 0, 0}));
  for (;;) {
    auto m = b->receive(patience);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    if (auto* x = std::get_if<broadcast>(&m.value()); x && x->pid == pa) {
      EXPECT_EQ(x->type, broadcast_type::appeared);  // not a move from inside the phase
      break;
    }
  }
  // Back on the town a sees b again in its fresh 202 (the answer may come before or after it).
  const auto back = others(wait_for<players_in_view>(*a), pa);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].pid, pb);
}

}  // namespace
}  // namespace scenert::net
