#include <scenert/admin/history_ring.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

namespace scenert::admin {

std::chrono::nanoseconds interval_p99(const histogram_snapshot& now, const histogram_snapshot& before) {
  const bool same_shape = before.counts.size() == now.counts.size();
  auto in_interval = [&](std::size_t i) {
    const std::uint64_t was = same_shape ? before.counts[i] : 0;
    return now.counts[i] >= was ? now.counts[i] - was : 0;
  };
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < now.counts.size(); ++i) total += in_interval(i);
  if (total == 0) return {};
  const std::uint64_t rank = (total * 99 + 99) / 100;  // the 99th percentile's rank, rounded up
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < now.counts.size(); ++i) {
    seen += in_interval(i);
    if (seen >= rank) return i < now.upper_bounds.size() ? now.upper_bounds[i] : now.max;
  }
  return now.max;
}

void history_ring::record(std::int64_t t_ms, std::uint64_t players, std::uint64_t connections,
                          std::uint64_t requests, const pool_metrics& pool, const front_headroom& room) {
  std::lock_guard lock(m_);
  if (last_) {
    using ms = std::chrono::duration<double, std::milli>;
    const double seconds = static_cast<double>(std::max<std::int64_t>(1, t_ms - last_->t_ms)) / 1000.0;
    history_sample s;
    s.t_ms = t_ms;
    s.players = players;
    s.connections = connections;
    s.requests_per_s = static_cast<double>(requests - std::min(requests, last_->requests)) / seconds;
    s.tick_p99_ms = ms(interval_p99(pool.tick_duration, last_->ticks)).count();
    s.lateness_p99_ms = ms(interval_p99(pool.lateness, last_->lateness)).count();
    s.io_busy = room.io_busy, s.write_queue_kib = room.write_queue_kib;
    s.admitting = room.admitting, s.over = room.over, s.io_lag_ms = room.io_lag_ms;
    s.busy_refused_per_s =
        static_cast<double>(room.busy_refused - std::min(room.busy_refused, last_->busy_refused)) / seconds;
    samples_.push_back(s);
    if (samples_.size() > capacity_) samples_.pop_front();
  }
  last_ = previous{t_ms, requests, room.busy_refused, pool.tick_duration, pool.lateness};
}

std::string history_ring::json() const {
  auto list = nlohmann::json::array();
  std::lock_guard lock(m_);
  for (const auto& s : samples_)
    list.push_back({{"t_ms", s.t_ms},
                    {"players", s.players},
                    {"connections", s.connections},
                    {"requests_per_s", s.requests_per_s},
                    {"tick_p99_ms", s.tick_p99_ms},
                    {"lateness_p99_ms", s.lateness_p99_ms},
                    {"io_busy", s.io_busy},
                    {"io_lag_ms", s.io_lag_ms},
                    {"write_queue_kib", s.write_queue_kib},
                    {"admitting", s.admitting},
                    {"over", s.over},
                    {"busy_refused_per_s", s.busy_refused_per_s}});
  return nlohmann::json{{"interval_ms", 1000}, {"capacity", capacity_}, {"samples", std::move(list)}}.dump();
}

std::size_t history_ring::size() const {
  std::lock_guard lock(m_);
  return samples_.size();
}

}  // namespace scenert::admin
