#include <scenert/loadtest/report.hpp>

#include <scenert/config/table_loader.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <numeric>

namespace scenert::loadtest {
namespace {

std::uint64_t count(const loadtest_report& r, step_kind k) { return r.requests[static_cast<std::size_t>(k)]; }

nlohmann::json ms_json(const ms_stats& s) {
  return {{"p50_ms", s.p50}, {"p99_ms", s.p99}, {"max_ms", s.max}};
}

nlohmann::json requests_json(const loadtest_report& r) {
  nlohmann::json j;
  for (std::size_t k = 0; k < step_kind_count; ++k) j[std::string(step_kind_names[k])] = r.requests[k];
  j["total"] = r.requests_total();
  j["per_second"] = r.requests_per_second();
  j["skipped"] = r.skipped;
  return j;
}

nlohmann::json scenes_json(const loadtest_report& r) {
  auto list = nlohmann::json::array();
  for (const auto& s : r.scenes)
    list.push_back({{"id", s.id},
                    {"name", s.name},
                    {"kind", std::string(to_string(s.kind))},
                    {"max_open_lines", s.max_open_lines},
                    {"max_players_on_line", s.max_players_on_line},
                    {"instances", std::string(to_string(s.instances))},
                    {"line_full", s.line_full},
                    {"line_full_at_max_lines", s.line_full_at_max},
                    {"lines_opened", s.lines_opened},
                    {"instances_opened", s.instances_opened},
                    {"party_runs", s.party_runs},
                    {"lines_closed", s.lines_closed},
                    {"max_phases_on_line", s.max_phases_on_line}});
  return list;
}

nlohmann::json answers_json(const loadtest_report& r) {
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [code, n] : r.errors) errors[code] = n;
  return {{"ok", r.answers_ok}, {"errors", errors}, {"error_examples", r.error_examples}};
}

}  // namespace

std::uint64_t loadtest_report::requests_total() const noexcept {
  return std::accumulate(requests.begin(), requests.end(), std::uint64_t{0});
}

double loadtest_report::requests_per_second() const noexcept {
  return wall_seconds > 0 ? static_cast<double>(requests_total()) / wall_seconds : 0;
}

const std::vector<std::string>& threshold_metrics() {
  static const std::vector<std::string> names{
      "tick_p50_ms",     "tick_p99_ms",      "tick_max_ms",         "lateness_p50_ms", "lateness_p99_ms",
      "lateness_max_ms", "issue_lag_p99_ms", "requests_per_second", "line_full",       "violations",
      "errors"};
  return names;
}

std::map<std::string, double> measured_values(const loadtest_report& r) {
  std::uint64_t errors = 0;
  for (const auto& e : r.errors) errors += e.second;
  return {{"tick_p50_ms", r.tick.p50},
          {"tick_p99_ms", r.tick.p99},
          {"tick_max_ms", r.tick.max},
          {"lateness_p50_ms", r.lateness.p50},
          {"lateness_p99_ms", r.lateness.p99},
          {"lateness_max_ms", r.lateness.max},
          {"issue_lag_p99_ms", r.issue_lag.p99},
          {"requests_per_second", r.requests_per_second()},
          {"line_full", static_cast<double>(r.line_full)},
          {"violations", static_cast<double>(r.violation_count)},
          {"errors", static_cast<double>(errors)}};
}

std::string summary_text(const loadtest_report& r) {
  // line_full as "all (at max_lines)"; private instances as "opened / party runs".
  std::string out =
      fmt::format("{:<34} {:<8} {:>9} {:>12} {:>15} {:>8} {:>8} {:>15}\n", "scene", "kind", "max lines",
                  "max on line", "line_full (max)", "opened", "closed", "instances/runs");
  for (const auto& s : r.scenes)
    out += fmt::format("{:<34} {:<8} {:>9} {:>12} {:>15} {:>8} {:>8} {:>15}\n",
                       fmt::format("{} {}", s.id, s.name).substr(0, 34), to_string(s.kind), s.max_open_lines,
                       s.max_players_on_line, fmt::format("{} ({})", s.line_full, s.line_full_at_max),
                       s.lines_opened, s.lines_closed,
                       s.instances == instance_mode::shared
                           ? std::string("-")
                           : fmt::format("{}/{}", s.instances_opened, s.party_runs));
  out += fmt::format(
      "requests   {} in {:.1f} s ({:.0f}/s): enter {}, join_team {}, transfer {}, instance {}, move {}, "
      "phase "
      "{}, leave {}\n",
      r.requests_total(), r.wall_seconds, r.requests_per_second(), count(r, step_kind::enter),
      count(r, step_kind::join_team), count(r, step_kind::transfer), count(r, step_kind::enter_instance),
      count(r, step_kind::move), count(r, step_kind::enter_phase) + count(r, step_kind::leave_phase),
      count(r, step_kind::leave));
  std::string errors;
  for (const auto& [code, n] : r.errors) errors += fmt::format(", {} {}", code, n);
  out += fmt::format("answers    ok {}{}\n", r.answers_ok, errors);
  out += fmt::format("players    entered {} = left {} + online at the end {}\n", r.enters_ok, r.leaves_ok,
                     r.online_at_end);
  out += fmt::format(
      "tick       p50 {:.2f} ms, p99 {:.2f} ms, max {:.2f} ms; lateness p50 {:.2f} ms, p99 {:.2f} ms, max "
      "{:.2f} ms\n",
      r.tick.p50, r.tick.p99, r.tick.max, r.lateness.p50, r.lateness.p99, r.lateness.max);
  out += fmt::format("invariants {} checks, {} violations{}\n", r.checks, r.violation_count,
                     r.violation_count == 0 ? " (all held)" : "");
  for (const auto& v : r.violations) out += fmt::format("  violation: {}\n", v);
  for (const auto& m : r.missed_thresholds) out += fmt::format("  threshold: {}\n", m);
  return out;
}

std::string report_json(const loadtest_report& r) {
  nlohmann::json j;
  j["players"] = r.players;
  j["seconds"] = r.seconds;
  j["seed"] = r.seed;
  j["rate"] = r.rate;
  j["workers"] = r.workers;
  j["plan_digest"] = fmt::format("{:016x}", r.plan_digest);
  j["requests"] = requests_json(r);
  j["answers"] = answers_json(r);
  j["enters"] = r.enters_ok;
  j["leaves"] = r.leaves_ok;
  j["online_at_end"] = r.online_at_end;
  j["line_full"] = r.line_full;
  j["lines_opened"] = r.lines_opened;
  j["lines_closed"] = r.lines_closed;
  j["tick"] = ms_json(r.tick);
  j["lateness"] = ms_json(r.lateness);
  j["issue_lag"] = ms_json(r.issue_lag);
  j["scenes"] = scenes_json(r);
  j["invariants"] = {
      {"checked", r.checks}, {"violation_count", r.violation_count}, {"violations", r.violations}};
  j["thresholds"] = {{"missed", r.missed_thresholds}};
  return j.dump(2);
}

}  // namespace scenert::loadtest
