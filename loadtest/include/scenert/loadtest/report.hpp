#pragma once
/// The results of `scenert loadtest`: a summary table for people, a JSON report for tools, and
/// the measured values that `--threshold` criteria are checked against.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <scenert/config/scene_table.hpp>

#include <scenert/loadtest/plan.hpp>

namespace scenert::loadtest {

/// Per scene definition, over the whole run.
struct scene_report {
  scene_id id = 0;
  std::string name;
  scene_kind kind = scene_kind::field;
  std::uint32_t max_open_lines = 0;
  std::uint32_t max_players_on_line = 0;
  instance_mode instances = instance_mode::shared;
  std::uint64_t line_full = 0;         ///< line_full answers
  std::uint64_t line_full_at_max = 0;  ///< of those, answered because max_lines were open
  std::uint64_t lines_opened = 0, lines_closed = 0;
  std::uint64_t instances_opened = 0;    ///< private instances opened (lines_opened counts them too)
  std::uint64_t party_runs = 0;          ///< dungeon runs the plan sent into private instances
  std::uint32_t max_phases_on_line = 0;  ///< towns: most phases with players on one line at once
};

/// Milliseconds at three percentiles.
struct ms_stats {
  double p50 = 0, p99 = 0, max = 0;
};

/// Everything a run measured.
struct loadtest_report {
  std::uint32_t players = 0;
  double seconds = 0;
  std::uint64_t seed = 0;
  double rate = 0;
  unsigned workers = 0;
  std::uint64_t plan_digest = 0;
  std::array<std::uint64_t, step_kind_count> requests{};  ///< issued, per step kind
  std::uint64_t skipped = 0;                              ///< planned steps the world cannot take yet
  double wall_seconds = 0;                                ///< time the requests took to issue
  std::uint64_t answers_ok = 0;
  std::vector<std::pair<std::string, std::uint64_t>> errors;  ///< answers per error code
  std::vector<std::string> error_examples;                    ///< one message per error code
  std::uint64_t enters_ok = 0, leaves_ok = 0, online_at_end = 0;
  std::uint64_t line_full = 0, lines_opened = 0, lines_closed = 0;
  ms_stats tick, lateness, issue_lag;
  std::vector<scene_report> scenes;
  std::uint64_t checks = 0, violation_count = 0;
  std::vector<std::string> violations;
  std::vector<std::string> missed_thresholds;

  /// Requests issued, every kind.
  [[nodiscard]] std::uint64_t requests_total() const noexcept;
  /// Requests issued per second of the run.
  [[nodiscard]] double requests_per_second() const noexcept;
};

/// The metric names `--threshold` accepts.
[[nodiscard]] const std::vector<std::string>& threshold_metrics();
/// The measured value of every threshold metric.
[[nodiscard]] std::map<std::string, double> measured_values(const loadtest_report& r);

/// The table printed at the end of a run (stdout).
[[nodiscard]] std::string summary_text(const loadtest_report& r);
/// The JSON report (`--report FILE`).
[[nodiscard]] std::string report_json(const loadtest_report& r);

}  // namespace scenert::loadtest
