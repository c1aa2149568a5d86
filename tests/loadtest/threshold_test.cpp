#include <scenert/loadtest/threshold.hpp>

#include <gtest/gtest.h>

namespace scenert::loadtest {
namespace {

const std::vector<std::string> known{"tick_p99_ms", "line_full"};

TEST(Threshold, ParsesEveryOperator) {
  for (const char* op : {"<", "<=", ">", ">=", "=="}) {
    auto t = parse_threshold(std::string("tick_p99_ms") + op + "50", known);
    ASSERT_TRUE(t) << t.error().message;
    EXPECT_EQ(t->metric, "tick_p99_ms");
    EXPECT_EQ(t->op, op);
    EXPECT_DOUBLE_EQ(t->limit, 50);
  }
}

TEST(Threshold, RejectsBadSyntaxAndUnknownMetrics) {
  EXPECT_EQ(parse_threshold("tick_p99_ms=50", known).code(), threshold_errc::syntax);
  EXPECT_EQ(parse_threshold("tick_p99_ms<fast", known).code(), threshold_errc::syntax);
  EXPECT_EQ(parse_threshold("tick_p99_ms<", known).code(), threshold_errc::syntax);
  auto unknown = parse_threshold("tick_p42<1", known);
  EXPECT_EQ(unknown.code(), threshold_errc::unknown_metric);
  EXPECT_NE(unknown.error().message.find("known: tick_p99_ms, line_full"), std::string::npos);
}

TEST(Threshold, ReportsOnlyTheMissedOnes) {
  std::vector<threshold> ts{*parse_threshold("tick_p99_ms<50", known),
                            *parse_threshold("line_full<=0", known)};
  auto missed = missed_thresholds(ts, {{"tick_p99_ms", 73.5}, {"line_full", 0}});
  ASSERT_EQ(missed.size(), 1u);
  EXPECT_EQ(missed[0], "tick_p99_ms<50 missed: 73.5");
  EXPECT_TRUE(missed_thresholds(ts, {{"tick_p99_ms", 10}, {"line_full", 0}}).empty());
}

TEST(Threshold, EqualsHoldsOnlyForThatValue) {
  std::vector<threshold> ts{*parse_threshold("line_full==0", known)};
  EXPECT_TRUE(missed_thresholds(ts, {{"line_full", 0}}).empty());
  ASSERT_EQ(missed_thresholds(ts, {{"line_full", 2}}).size(), 1u);
  EXPECT_EQ(parse_threshold("line_full=0", known).code(), threshold_errc::syntax);
  EXPECT_EQ(parse_threshold("line_full===0", known).code(), threshold_errc::syntax);
}

}  // namespace
}  // namespace scenert::loadtest
