#include <scenert/bots/report.hpp>

#include "own_load_json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <numeric>

namespace scenert::bots {
namespace {

constexpr std::size_t shown_examples = 3;  // per view check in the summary; the JSON has them all

double to_ms(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e6; }

ms_stats stats_of(const latency_histogram& h) {
  using std::chrono::nanoseconds;
  return {to_ms(nanoseconds(h.quantile(0.5))), to_ms(nanoseconds(h.quantile(0.99))),
          to_ms(nanoseconds(h.max()))};
}

double per_second(std::uint64_t n, double seconds) {
  return seconds > 0 ? static_cast<double>(n) / seconds : 0;
}

latency_histogram all_requests(const bots_report& r) {
  latency_histogram all;
  for (const auto& [kind, h] : r.request_rtt) all.merge(h);
  return all;
}

wire_count wire_total(const bots_report& r) {
  wire_count t;
  for (const auto& w : r.wire) {
    t.frames_in += w.frames_in, t.bytes_in += w.bytes_in;
    t.frames_out += w.frames_out, t.bytes_out += w.bytes_out;
  }
  return t;
}

// "bye" is a bot logging itself off; every other reason is a connection the run lost.
std::uint64_t lost_connections(const bots_report& r) {
  std::uint64_t n = 0;
  for (const auto& [reason, count] : r.disconnects)
    if (reason != "bye") n += count;
  return n;
}

std::uint64_t sum(const std::map<std::string, std::uint64_t>& counts) {
  std::uint64_t n = 0;
  for (const auto& [key, count] : counts) n += count;
  return n;
}

std::string joined(const std::map<std::string, std::uint64_t>& counts) {
  std::string out;
  for (const auto& [key, n] : counts) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", key, n);
  return out.empty() ? "none" : out;
}

}  // namespace

std::uint64_t bots_report::view_mismatches() const noexcept {
  return std::accumulate(checkpoints.begin(), checkpoints.end(), views.mismatches(),
                         [](std::uint64_t n, const view_check& c) { return n + c.mismatches(); });
}

const std::vector<std::string>& bots_threshold_metrics() {
  static const std::vector<std::string> names{
      "connect_p99_ms",   "login_p99_ms",      "move_p50_ms",      "move_p99_ms",          "move_max_ms",
      "heartbeat_p99_ms", "request_p99_ms",    "errors",           "connect_failed",       "disconnects",
      "moves_refused",    "view_mismatches",   "moves_per_second", "frames_in_per_second", "deliveries",
      "logged_in",        "hostile_unexpected"};
  return names;
}

std::map<std::string, double> bots_measured_values(const bots_report& r) {
  const auto move = stats_of(r.move_to_viewer);
  const auto n = [](std::uint64_t v) { return static_cast<double>(v); };
  return {{"connect_p99_ms", stats_of(r.connect).p99},
          {"login_p99_ms", stats_of(r.login).p99},
          {"move_p50_ms", move.p50},
          {"move_p99_ms", move.p99},
          {"move_max_ms", move.max},
          {"heartbeat_p99_ms", stats_of(r.heartbeat_rtt).p99},
          {"request_p99_ms", stats_of(all_requests(r)).p99},
          {"errors", n(r.errors)},
          {"connect_failed", n(r.connect_failed)},
          {"disconnects", n(lost_connections(r))},
          {"moves_refused", n(sum(r.moves_refused))},
          {"view_mismatches", n(r.view_mismatches())},
          {"moves_per_second", per_second(r.moves_sent, r.wall_seconds)},
          {"frames_in_per_second", per_second(wire_total(r).frames_in, r.wall_seconds)},
          {"deliveries", n(r.move_to_viewer.total())},
          {"logged_in", n(r.logged_in)},
          {"hostile_unexpected", n(r.hostile.unexpected())}};
}

// ---- the summary table ----
namespace {

std::string run_lines(const bots_report& r) {
  return fmt::format("run         {} {} {}: {} clients, {} s, seed {}, {} threads\n", r.target, r.transport,
                     r.protocol, r.clients, r.seconds, r.seed, r.threads) +
         fmt::format("            rate {}/s, moves {} Hz, plan {:016x}, took {:.1f} s{}\n", r.rate, r.move_hz,
                     r.plan_digest, r.wall_seconds, r.ended_early ? " (ended early)" : "");
}

std::string latency_row(std::string_view name, const latency_histogram& h) {
  const auto s = stats_of(h);
  return fmt::format("  {:<24} {:>9} {:>9.2f} {:>9.2f} {:>9.2f}\n", name.substr(0, 24), h.total(), s.p50,
                     s.p99, s.max);
}

std::string latency_lines(const bots_report& r) {
  std::string out =
      fmt::format("{:<26} {:>9} {:>9} {:>9} {:>9}\n", "latency (ms)", "count", "p50", "p99", "max");
  out += latency_row("connect", r.connect);
  out += latency_row("login", r.login);
  if (r.resume.total() != 0) out += latency_row("resume", r.resume);  // dropped to its view again
  out += latency_row("move to viewer", r.move_to_viewer);
  if (r.untimed_deliveries != 0)
    out +=
        fmt::format("  and {} deliveries not timed (no single move of their mover's last 32 at that place)\n",
                    r.untimed_deliveries);
  out += latency_row("heartbeat rtt", r.heartbeat_rtt);
  for (const auto& [kind, h] : r.request_rtt) out += latency_row("request " + kind, h);
  return out;
}

std::string answer_lines(const bots_report& r) {
  std::string out;
  for (const auto& [kind, codes] : r.answers)
    out += fmt::format("{:<11} {}: {}\n", out.empty() ? "answers" : "", kind, joined(codes));
  return out;
}

std::string wire_row(std::string_view name, const wire_count& w) {
  return fmt::format("  {:<24} {:>11} {:>13} {:>11} {:>13}\n", name, w.frames_in, w.bytes_in, w.frames_out,
                     w.bytes_out);
}

std::string wire_lines(const bots_report& r) {
  std::string out = fmt::format("{:<26} {:>11} {:>13} {:>11} {:>13}\n", "wire", "frames in", "bytes in",
                                "frames out", "bytes out");
  for (std::size_t i = 0; i < r.wire.size(); ++i) {
    const auto& w = r.wire[i];
    if (w.frames_in + w.frames_out != 0) out += wire_row(net::name_of(net::all_message_ids[i]), w);
  }
  out += wire_row("total", wire_total(r));
  if (r.unknown_frames != 0) out += fmt::format("  {} frames not understood\n", r.unknown_frames);
  return out;
}

std::string play_lines(const bots_report& r) {
  std::string out = fmt::format("connections connected {}, failed {}, logged in {}, max online {}\n",
                                r.connected, r.connect_failed, r.logged_in, r.max_online);
  out += fmt::format("disconnects {}\n", joined(r.disconnects));
  if (r.resumed != 0) out += fmt::format("resumed     {}\n", r.resumed);
  if (r.server_busy != 0)
    out += fmt::format(
        "server_busy {} logins refused, each tried again after its retry-after; {} gave up at their login "
        "timeout\n",
        r.server_busy, r.busy_gave_up);
  if (!r.failed_resumes.empty()) out += fmt::format("not resumed {}\n", joined(r.failed_resumes));
  out += fmt::format("moves       sent {} ({:.0f}/s), refused {}; chats sent {}\n", r.moves_sent,
                     per_second(r.moves_sent, r.wall_seconds), joined(r.moves_refused), r.chats_sent);
  return out;
}

// The hostile bots apart: per kind, how they ended and the server's reasons as they saw them.
std::string hostile_lines(const bots_report& r) {
  const hostile_report& h = r.hostile;
  if (h.bots == 0) return {};
  std::string out =
      fmt::format("hostile     {} bots ({}%), apart from the {} well-behaved ones above; {} unexpected\n",
                  h.bots, h.percent, r.well_behaved, h.unexpected());
  for (const auto& [kind, o] : h.by_kind)
    out += fmt::format("  {:<14} {:>5}  ended: {}; reasons: {}\n", kind, o.bots, joined(o.endings),
                       joined(o.reasons));
  for (const auto& e : h.unexpected_examples) out += fmt::format("  unexpected: {}\n", e);
  return out;
}

std::string error_lines(const bots_report& r) {
  std::string out = fmt::format("errors      {}\n", r.errors);
  for (const auto& e : r.error_examples) out += fmt::format("  error: {}\n", e);
  return out;
}

std::string check_lines(std::string_view name, const view_check& c) {
  std::string out = fmt::format("{:<11} {}: {} bots, {} pairs, {} mismatches", "views", name, c.bots, c.pairs,
                                c.mismatches());
  if (c.mismatches() != 0)
    out += fmt::format(": missing {}, extra {}, wrong cell {}, misplaced {}", c.missing, c.extra,
                       c.wrong_position, c.misplaced);
  if (c.changed != 0)
    out += fmt::format(" ({} players left out: they changed while the truth was read)", c.changed);
  out += '\n';
  for (std::size_t i = 0; i < c.examples.size() && i < shown_examples; ++i)
    out += fmt::format("  view: {}\n", c.examples[i]);
  return out;
}

std::string view_lines(const bots_report& r) {
  if (!r.views_verified) return "views       not verified\n";
  if (r.view_mismatches() == 0)
    return fmt::format(
        "views       verified: {} bots, {} pairs, 0 mismatches{}\n", r.views.bots, r.views.pairs,
        r.checkpoints.empty() ? "" : fmt::format(" (and at {} checkpoints)", r.checkpoints.size()));
  std::string out = check_lines("final", r.views);
  for (std::size_t i = 0; i < r.checkpoints.size(); ++i)
    out += check_lines(fmt::format("checkpoint {}", i + 1), r.checkpoints[i]);
  return out;
}

}  // namespace

std::string bots_summary_text(const bots_report& r) {
  std::string out = run_lines(r) + play_lines(r) + latency_lines(r) + own_load_text(r.own, r.move_to_viewer) +
                    answer_lines(r) + wire_lines(r) + hostile_lines(r) + error_lines(r) + view_lines(r);
  for (const auto& m : r.missed_thresholds) out += fmt::format("  threshold: {}\n", m);
  return out;
}

// ---- the JSON report ----
namespace {

nlohmann::json latency_json(const latency_histogram& h) {
  const auto s = stats_of(h);
  return {{"count", h.total()}, {"p50_ms", s.p50}, {"p99_ms", s.p99}, {"max_ms", s.max}};
}

nlohmann::json request_rtt_json(const bots_report& r) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [kind, h] : r.request_rtt) j[kind] = latency_json(h);
  return j;
}

nlohmann::json wire_json(const bots_report& r) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < r.wire.size(); ++i) {
    const auto& w = r.wire[i];
    j[std::string(net::name_of(net::all_message_ids[i]))] = {{"frames_in", w.frames_in},
                                                             {"bytes_in", w.bytes_in},
                                                             {"frames_out", w.frames_out},
                                                             {"bytes_out", w.bytes_out}};
  }
  return j;
}

nlohmann::json view_json(const view_check& c) {
  return {{"bots", c.bots},
          {"pairs", c.pairs},
          {"mismatches", c.mismatches()},
          {"missing", c.missing},
          {"extra", c.extra},
          {"wrong_position", c.wrong_position},
          {"misplaced", c.misplaced},
          {"changed_while_read", c.changed},
          {"examples", c.examples}};
}

nlohmann::json views_json(const bots_report& r) {
  auto checkpoints = nlohmann::json::array();
  for (const auto& c : r.checkpoints) checkpoints.push_back(view_json(c));
  return {{"verified", r.views_verified},
          {"mismatches", r.view_mismatches()},
          {"final", view_json(r.views)},
          {"checkpoints", checkpoints}};
}

void put_run(nlohmann::json& j, const bots_report& r) {
  j["target"] = r.target;
  j["transport"] = r.transport;
  j["protocol"] = r.protocol;
  j["clients"] = r.clients;
  j["seconds"] = r.seconds;
  j["rate"] = r.rate;
  j["move_hz"] = r.move_hz;
  j["seed"] = r.seed;
  j["threads"] = r.threads;
  j["plan_digest"] = fmt::format("{:016x}", r.plan_digest);
  j["wall_seconds"] = r.wall_seconds;
  j["ended_early"] = r.ended_early;
}

void put_connections(nlohmann::json& j, const bots_report& r) {
  j["connected"] = r.connected;
  j["connect_failed"] = r.connect_failed;
  j["logged_in"] = r.logged_in;
  j["max_online"] = r.max_online;
  j["connect"] = latency_json(r.connect);
  j["login"] = latency_json(r.login);
  j["disconnects"] = r.disconnects;
  j["resumed"] = r.resumed;
  j["server_busy"] = r.server_busy;
  j["busy_gave_up"] = r.busy_gave_up;
  j["failed_resumes"] = r.failed_resumes;
  j["resume"] = latency_json(r.resume);
}

void put_play(nlohmann::json& j, const bots_report& r) {
  j["moves_sent"] = r.moves_sent;
  j["chats_sent"] = r.chats_sent;
  j["moves_refused"] = r.moves_refused;
  j["move_to_viewer"] = latency_json(r.move_to_viewer);
  j["untimed_deliveries"] = r.untimed_deliveries;
  j["heartbeat_rtt"] = latency_json(r.heartbeat_rtt);
  j["request_rtt"] = request_rtt_json(r);
  j["answers"] = r.answers;
  j["wire"] = wire_json(r);
  j["unknown_frames"] = r.unknown_frames;
}

nlohmann::json hostile_json(const bots_report& r) {
  const hostile_report& h = r.hostile;
  nlohmann::json kinds = nlohmann::json::object();
  for (const auto& [kind, o] : h.by_kind)
    kinds[kind] = {
        {"bots", o.bots}, {"endings", o.endings}, {"reasons", o.reasons}, {"unexpected", o.unexpected}};
  return {{"percent", h.percent},         {"bots", h.bots},   {"well_behaved", r.well_behaved},
          {"unexpected", h.unexpected()}, {"by_kind", kinds}, {"unexpected_examples", h.unexpected_examples}};
}

}  // namespace

std::string bots_report_json(const bots_report& r) {
  nlohmann::json j;
  put_run(j, r);
  put_connections(j, r);
  put_play(j, r);
  j["hostile"] = hostile_json(r);
  j["errors"] = {{"count", r.errors}, {"examples", r.error_examples}};
  j["views"] = views_json(r);
  j["own_load"] = own_load_json(r.own, r.move_to_viewer);
  j["measured"] = bots_measured_values(r);
  j["missed_thresholds"] = r.missed_thresholds;
  return j.dump(2);
}

}  // namespace scenert::bots
