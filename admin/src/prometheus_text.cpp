#include <scenert/admin/prometheus_text.hpp>

#include <cmath>

#include <fmt/format.h>

namespace scenert::admin {
namespace {

// Label values escape backslash, double quote and newline; HELP text backslash and newline.
std::string escape(std::string_view s, bool quotes) {
  std::string r;
  r.reserve(s.size());
  for (char c : s) {
    if (c == '\\')
      r += "\\\\";
    else if (c == '\n')
      r += "\\n";
    else if (c == '"' && quotes)
      r += "\\\"";
    else
      r += c;
  }
  return r;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

double seconds(std::chrono::nanoseconds ns) { return static_cast<double>(ns.count()) / 1e9; }

}  // namespace

void prometheus_text::family(std::string_view name, std::string_view help, std::string_view type) {
  if (last_family_ == name) return;
  last_family_ = name;
  fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, escape(help, false), name,
                 type);
}

void prometheus_text::sample(std::string_view name, const std::vector<label>& labels, double value,
                             const label* extra) {
  out_ += name;
  if (!labels.empty() || extra) {
    out_ += '{';
    bool first = true;
    auto put = [&](const label& l) {
      fmt::format_to(std::back_inserter(out_), "{}{}=\"{}\"", first ? "" : ",", l.first,
                     escape(l.second, true));
      first = false;
    };
    for (const auto& l : labels) put(l);
    if (extra) put(*extra);
    out_ += '}';
  }
  fmt::format_to(std::back_inserter(out_), " {}\n", number(value));
}

void prometheus_text::gauge(std::string_view name, std::string_view help, double value,
                            const std::vector<label>& labels) {
  family(name, help, "gauge");
  sample(name, labels, value);
}

void prometheus_text::counter(std::string_view name, std::string_view help, double value,
                              const std::vector<label>& labels) {
  family(name, help, "counter");
  sample(name, labels, value);
}

void prometheus_text::histogram(std::string_view name, std::string_view help, const histogram_snapshot& h,
                                const std::vector<label>& labels) {
  family(name, help, "histogram");
  const std::string bucket = fmt::format("{}_bucket", name);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < h.upper_bounds.size() && i < h.counts.size(); ++i) {
    cumulative += h.counts[i];
    const label le{"le", number(seconds(h.upper_bounds[i]))};
    sample(bucket, labels, static_cast<double>(cumulative), &le);
  }
  const label inf{"le", "+Inf"};
  sample(bucket, labels, static_cast<double>(h.count), &inf);
  sample(fmt::format("{}_sum", name), labels, seconds(h.sum));
  sample(fmt::format("{}_count", name), labels, static_cast<double>(h.count));
}

void render_pool_metrics(prometheus_text& out, const pool_metrics& m) {
  out.gauge("scenert_pool_workers", "Worker threads of the processor pool.", m.workers);
  out.gauge("scenert_pool_services", "Services in the processor pool.", static_cast<double>(m.services));
  out.gauge("scenert_pool_utilisation_ratio", "Busy worker time over worker wall time since start.",
            m.utilisation);
  out.gauge("scenert_pool_mailbox_messages", "Messages waiting in service mailboxes.",
            static_cast<double>(m.mailbox_depth));
  out.gauge("scenert_pool_quarantined_services", "Services quarantined after repeated failing ticks.",
            static_cast<double>(m.quarantined));
  out.gauge("scenert_pool_stalled_services", "Ticks running longer than the stall threshold right now.",
            static_cast<double>(m.stalled_now.size()));
  out.counter("scenert_ticks_total", "Ticks run by the pool.", static_cast<double>(m.ticks));
  out.counter("scenert_tick_overruns_total", "Ticks that started a period or more late.",
              static_cast<double>(m.overruns));
  out.counter("scenert_tick_exceptions_total", "Ticks that threw (caught).",
              static_cast<double>(m.exceptions));
  out.counter("scenert_tick_stalls_total", "Ticks that ran longer than the stall threshold.",
              static_cast<double>(m.stalls));
  out.histogram("scenert_tick_duration_seconds", "Time a tick ran.", m.tick_duration);
  out.histogram("scenert_tick_lateness_seconds", "Time from a tick's due time to its start.", m.lateness);
}

}  // namespace scenert::admin
