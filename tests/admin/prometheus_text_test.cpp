#include <scenert/admin/prometheus_text.hpp>

#include <gtest/gtest.h>

#include <fstream>

namespace scenert::admin {
namespace {

using namespace std::chrono_literals;

pool_metrics sample_pool() {
  pool_metrics m;
  m.workers = 2;
  m.services = 3;
  m.ticks = 1200;
  m.utilisation = 0.25;
  m.tick_duration.upper_bounds = {1us, 10us, 100us};
  m.tick_duration.counts = {700, 400, 90, 10};
  m.tick_duration.count = 1200;
  m.tick_duration.sum = 9ms;
  m.lateness = m.tick_duration;
  return m;
}

TEST(PrometheusText, WritesHelpAndTypeOncePerFamily) {
  prometheus_text out;
  out.gauge("scenert_scene_open_lines", "Open lines.", 2, {{"scene", "1001"}});
  out.gauge("scenert_scene_open_lines", "Open lines.", 5, {{"scene", "2001"}});
  EXPECT_EQ(out.text(),
            "# HELP scenert_scene_open_lines Open lines.\n"
            "# TYPE scenert_scene_open_lines gauge\n"
            "scenert_scene_open_lines{scene=\"1001\"} 2\n"
            "scenert_scene_open_lines{scene=\"2001\"} 5\n");
}

TEST(PrometheusText, HistogramBucketsAreCumulativeInSeconds) {
  prometheus_text out;
  out.histogram("scenert_tick_duration_seconds", "Tick time.", sample_pool().tick_duration);
  const std::string& t = out.text();
  EXPECT_NE(t.find("scenert_tick_duration_seconds_bucket{le=\"1e-06\"} 700\n"), std::string::npos) << t;
  EXPECT_NE(t.find("scenert_tick_duration_seconds_bucket{le=\"0.0001\"} 1190\n"), std::string::npos) << t;
  EXPECT_NE(t.find("scenert_tick_duration_seconds_bucket{le=\"+Inf\"} 1200\n"), std::string::npos) << t;
  EXPECT_NE(t.find("scenert_tick_duration_seconds_sum 0.009\n"), std::string::npos) << t;
  EXPECT_NE(t.find("scenert_tick_duration_seconds_count 1200\n"), std::string::npos) << t;
}

TEST(PrometheusText, EscapesLabelValues) {
  prometheus_text out;
  out.counter("scenert_x_total", "X.", 1, {{"scene", "a\"b\\c\nd"}});
  EXPECT_NE(out.text().find("scenert_x_total{scene=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos);
}

// Written for the promtool check registered beside this test in CMake.
TEST(PrometheusText, WritesSampleFile) {
  prometheus_text out;
  render_pool_metrics(out, sample_pool());
  out.counter("scenert_scene_line_full_total", "LineFull answers.", 3, {{"scene", "1001"}});
  std::ofstream("prometheus_sample.txt") << out.text();
  EXPECT_NE(out.text().find("# TYPE scenert_ticks_total counter"), std::string::npos);
}

}  // namespace
}  // namespace scenert::admin
