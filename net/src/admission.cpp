// The admission gate: a measure over its line for close_after closes it, every measure well under its
// line (reopen_share) for reopen_after opens it again. The two thresholds and the two durations keep
// it from flapping at the line.
#include <scenert/net/admission.hpp>

#include <fmt/format.h>

namespace scenert::net {

std::string admission_problem(const admission_options& o) {
  if (o.max_tick_lateness.count() <= 0)
    return fmt::format("max_tick_lateness {} ms: must be above 0", o.max_tick_lateness.count());
  if (!(o.max_io_busy > 0 && o.max_io_busy <= 1))
    return fmt::format("max_io_busy {}: must be in (0, 1]", o.max_io_busy);
  if (o.max_io_lag.count() <= 0)
    return fmt::format("max_io_lag {} ms: must be above 0", o.max_io_lag.count());
  if (o.max_write_queue_bytes == 0) return "max_write_queue_bytes 0: must be above 0";
  if (!(o.reopen_share > 0 && o.reopen_share < 1))
    return fmt::format("reopen_share {}: must be in (0, 1)", o.reopen_share);
  if (o.close_after.count() < 0 || o.reopen_after.count() < 0)
    return "close_after and reopen_after: must not be negative";
  if (o.retry_after.count() <= 0 || o.retry_after > std::chrono::hours(1))
    return fmt::format("retry_after {} ms: must be in [1, 3600000]", o.retry_after.count());
  return {};
}

headroom_measure admission_gate::first_over(const headroom& h, double share) const {
  auto over = [share](std::chrono::microseconds v, std::chrono::milliseconds line) {
    return static_cast<double>(v.count()) > share * static_cast<double>(line.count()) * 1000.0;
  };
  if (over(h.tick_lateness, opt_.max_tick_lateness)) return headroom_measure::tick_lateness;
  if (h.io_busy > share * opt_.max_io_busy) return headroom_measure::io_busy;
  if (over(h.io_lag, opt_.max_io_lag)) return headroom_measure::io_lag;
  if (static_cast<double>(h.write_queue_bytes) > share * static_cast<double>(opt_.max_write_queue_bytes))
    return headroom_measure::write_queue;
  return headroom_measure::none;
}

bool admission_gate::update(const headroom& h, time_point now) {
  over_ = first_over(h, 1.0);
  if (open_) {
    calm_running_ = false;
    if (over_ == headroom_measure::none) {
      over_running_ = false;
    } else {
      if (!over_running_) over_since_ = now, over_running_ = true;
      if (now - over_since_ >= opt_.close_after) {
        open_ = false;
        over_running_ = false;
        ++closings_;
      }
    }
    return admitting();
  }
  if (first_over(h, opt_.reopen_share) != headroom_measure::none) {
    calm_running_ = false;
    return admitting();
  }
  if (!calm_running_) calm_since_ = now, calm_running_ = true;
  if (now - calm_since_ >= opt_.reopen_after) {
    open_ = true;
    calm_running_ = false;
  }
  return admitting();
}

}  // namespace scenert::net
