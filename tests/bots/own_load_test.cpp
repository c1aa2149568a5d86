#include <scenert/bots/own_load.hpp>

#include <scenert/bots/report.hpp>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace scenert::bots {
namespace {

using std::chrono::milliseconds;

// A run of 10 s whose bots used `cpu` seconds of one core, frames waiting `read` ms and loops late `loop` ms.
own_load load(double cpu, int read, int loop) {
  own_load o;
  o.cpu_seconds = cpu, o.wall_seconds = 10, o.cores = 1, o.busiest_thread_cpu_seconds = cpu / 2;
  for (int i = 0; i < 100; ++i) o.read_lag.record(milliseconds(read)), o.loop_lag.record(milliseconds(loop));
  return o;
}

latency_histogram moves(int ms) {
  latency_histogram h;
  for (int i = 0; i < 100; ++i) h.record(milliseconds(ms));
  return h;
}

TEST(BotsOwnLoad, NoWarningWhenTheCoreHadRoomAndTheLagIsSmall) {
  const auto o = load(5, 1, 1);
  EXPECT_NEAR(busy_share(o), 0.5, 1e-9);
  EXPECT_TRUE(own_load_warnings(o, moves(100)).empty());
}

TEST(BotsOwnLoad, WarnsWhenTheBotsCoreWasFull) {
  const auto w = own_load_warnings(load(9.5, 1, 1), moves(100));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("core was 95% busy"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("include the load generator's own lag"), std::string::npos) << w[0];
}

TEST(BotsOwnLoad, WarnsWhenOneWorkerThreadWasFullThoughTheCoresHadRoom) {
  auto o = load(9.5, 1, 1);
  o.cores = 2, o.busiest_thread_cpu_seconds = 9.2;
  const auto w = own_load_warnings(o, moves(100));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("worker thread wanted its core 92% of the run (ran 92%, waited 0% for it)"),
            std::string::npos)
      << w[0];
}

// Other processes on the bots' core: the thread ran little but waited for its core most of the run.
TEST(BotsOwnLoad, WarnsWhenAWorkerThreadWaitedForItsCoreBehindOtherWork) {
  auto o = load(2, 1, 1);
  o.busiest_thread_cpu_seconds = 1, o.busiest_thread_wait_seconds = 8.5;
  const auto w = own_load_warnings(o, moves(100));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("wanted its core 95% of the run (ran 10%, waited 85% for it)"), std::string::npos)
      << w[0];
}

TEST(BotsOwnLoad, WarnsWhenTheLagIsALargeShareOfTheLatency) {
  EXPECT_TRUE(own_load_warnings(load(1, 24, 1), moves(100)).empty());
  const auto w = own_load_warnings(load(1, 1, 30), moves(100));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("own lag p99 30.0 ms is 30% of the move-to-viewer p99 100.0 ms"), std::string::npos)
      << w[0];
}

TEST(BotsOwnLoad, MergeAddsTheLagsAndKeepsTheBusiestThread) {
  auto all = load(0, 1, 1);
  all.busiest_thread_cpu_seconds = 2, all.busiest_thread_wait_seconds = 0;
  auto other = load(0, 2, 2);
  other.busiest_thread_cpu_seconds = 1, other.busiest_thread_wait_seconds = 3;  // wanted its core longer
  all.merge(other);
  EXPECT_EQ(all.read_lag.total(), 200u);
  EXPECT_EQ(all.loop_lag.total(), 200u);
  EXPECT_DOUBLE_EQ(all.busiest_thread_cpu_seconds, 1);
  EXPECT_DOUBLE_EQ(all.busiest_thread_wait_seconds, 3);
}

TEST(BotsOwnLoad, TheReportCarriesTheLagsTheCpuAndTheWarning) {
  bots_report r;
  r.move_to_viewer = moves(100);
  r.own = load(9.5, 3, 2);
  const auto j = nlohmann::json::parse(bots_report_json(r));
  const auto& own = j.at("own_load");
  EXPECT_NEAR(own.at("read_lag").at("p50_ms").get<double>(), 3, 0.05);
  EXPECT_NEAR(own.at("loop_lag").at("p99_ms").get<double>(), 2, 0.05);
  EXPECT_NEAR(own.at("busy_share").get<double>(), 0.95, 1e-9);
  EXPECT_EQ(own.at("cores"), 1);
  ASSERT_EQ(own.at("warnings").size(), 1u);
  const auto text = bots_summary_text(r);
  EXPECT_NE(text.find("frame waiting to be read"), std::string::npos) << text;
  EXPECT_NE(text.find("worker loop late"), std::string::npos) << text;
  EXPECT_NE(text.find("warning:    the bots' 1 core was 95% busy"), std::string::npos) << text;
}

TEST(BotsOwnLoad, TheProcessAndThreadCpuAndCoresAreRead) {
  EXPECT_GE(allowed_cores(), 1u);
  EXPECT_GE(process_cpu_seconds(), thread_cpu_seconds());
  EXPECT_GE(thread_cpu_seconds(), 0);
  EXPECT_GE(thread_wait_seconds(), 0);
}

}  // namespace
}  // namespace scenert::bots
