#pragma once
/// Load-test pass/fail criteria such as `tick_p99_ms<50`, given on the command line.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/runtime/result.hpp>

namespace scenert::loadtest {

enum class threshold_errc { ok = 0, syntax, unknown_metric };

/// `metric OP number` with OP one of < <= > >= == (counts: `errors==0`).
struct threshold {
  std::string metric;
  std::string op;
  double limit = 0;
  std::string text;  ///< as written, for messages
};

/// Parses one criterion; `known` lists the metric names a run reports.
[[nodiscard]] result<threshold, threshold_errc> parse_threshold(std::string_view text,
                                                                const std::vector<std::string>& known);

/// The criteria that do not hold, as messages ("tick_p99_ms<50 missed: 73.2").
[[nodiscard]] std::vector<std::string> missed_thresholds(const std::vector<threshold>& thresholds,
                                                         const std::map<std::string, double>& measured);

}  // namespace scenert::loadtest
