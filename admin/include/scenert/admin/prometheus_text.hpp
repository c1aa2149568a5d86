#pragma once
/// Renders measurements in the Prometheus text exposition format (version 0.0.4).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <scenert/runtime/metrics.hpp>

namespace scenert::admin {

/// One label: name="value".
using label = std::pair<std::string_view, std::string>;

/// Appends metric families to a text buffer. Each family's HELP and TYPE lines are written once,
/// the first time a sample of it is added; samples of one family must be added together.
class prometheus_text {
 public:
  void gauge(std::string_view name, std::string_view help, double value,
             const std::vector<label>& labels = {});
  void counter(std::string_view name, std::string_view help, double value,
               const std::vector<label>& labels = {});
  /// A histogram in seconds from a nanosecond snapshot: cumulative _bucket lines, _sum, _count.
  void histogram(std::string_view name, std::string_view help, const histogram_snapshot& h,
                 const std::vector<label>& labels = {});

  [[nodiscard]] const std::string& text() const noexcept { return out_; }

 private:
  void family(std::string_view name, std::string_view help, std::string_view type);
  void sample(std::string_view name, const std::vector<label>& labels, double value,
              const label* extra = nullptr);

  std::string out_;
  std::string last_family_;
};

/// The pool's families: scenert_pool_*, scenert_ticks_total, tick duration and lateness histograms.
void render_pool_metrics(prometheus_text& out, const pool_metrics& m);

}  // namespace scenert::admin
