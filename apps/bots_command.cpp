#include "bots_command.hpp"

#include <scenert/bots/engine.hpp>
#include <scenert/bots/party_play.hpp>
#include <scenert/loadtest/threshold.hpp>
#include "exit_codes.hpp"
#include "shutdown_signal.hpp"

#include <utility>  // before Asio: Boost 1.74's asio/awaitable.hpp needs it under g++ 12

#include <fmt/format.h>
#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <charconv>
#include <fstream>

namespace scenert::apps {

using namespace scenert::admin;
using namespace scenert::bots;
using namespace scenert::loadtest;
namespace {

constexpr const char* me = "scenert bots";

// HOST:PORT with HOST an IP address (the bots resolve no names: loopback in tests).
result<endpoint, std::string> address(const std::string& flag, const std::string& text) {
  auto e = parse_endpoint(text);
  if (!e) return fail(std::string{}, fmt::format("{} {}", flag, e.error().message));
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(e->host, ec);
  if (ec)
    return fail(std::string{},
                fmt::format("{} '{}': HOST must be an IP address such as 127.0.0.1 or ::1", flag, text));
  return *e;
}

// HOST:PORT[,HOST:PORT...], each checked.
result<std::vector<endpoint>, std::string> addresses(const std::string& flag, const std::string& text) {
  std::vector<endpoint> all;
  std::string_view rest = text;
  for (;;) {
    const auto comma = rest.find(',');
    auto one = address(flag, std::string(rest.substr(0, comma)));
    if (!one) return one.error();
    all.push_back(*one);
    if (comma == std::string_view::npos) return all;
    rest.remove_prefix(comma + 1);
  }
}

result<walk_box, std::string> parse_box(const std::string& text) {
  float v[4];
  const char* p = text.data();
  const char* end = p + text.size();
  for (int i = 0; i < 4; ++i) {
    auto [next, ec] = std::from_chars(p, end, v[i]);
    const bool last = i == 3;
    if (ec != std::errc{} || (last ? next != end : (next == end || *next != ',')))
      return fail(std::string{}, fmt::format("--box '{}': expected X0,Z0,X1,Z1 (four numbers)", text));
    p = last ? next : next + 1;
  }
  if (!(v[0] < v[2] && v[1] < v[3]))
    return fail(std::string{}, fmt::format("--box '{}': X0 < X1 and Z0 < Z1 are needed", text));
  return walk_box{v[0], v[1], v[2], v[3]};
}

// "name=weight,..." over the defaults: a name left out keeps its default weight.
result<std::array<double, bot_action_count>, std::string> parse_mix(const std::string& text) {
  auto mix = bots_plan_options{}.mix;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto eq = item.find('=');
    const auto name = item.substr(0, eq);
    const auto* named = std::find(bot_action_names.begin() + 1, bot_action_names.end(), name);
    double weight = -1;
    if (eq != std::string_view::npos) {
      const auto v = item.substr(eq + 1);
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), weight);
      if (ec != std::errc{} || end != v.data() + v.size()) weight = -1;
    }
    if (named == bot_action_names.end() || !(weight >= 0))
      return fail(std::string{}, fmt::format("--mix '{}': expected NAME=WEIGHT with NAME one of enter_field, "
                                             "enter_dungeon, join_team, transfer, enter_phase, leave_phase, "
                                             "back_to_town and WEIGHT >= 0",
                                             item));
    mix[static_cast<std::size_t>(named - bot_action_names.begin())] = weight;
  }
  return mix;
}

// The options of the run, checked; a usage error names the flag.
result<bots_options, std::string> options_of(const bots_command_options& c) {
  bots_options o;
  auto targets = addresses("target", c.target);
  if (!targets) return fail(std::string{}, targets.error().message);
  o.targets = std::move(*targets);
  o.ws = c.ws;
  o.protocol = c.protocol == "seed002" ? bots_protocol::seed002 : bots_protocol::scenert;
  if (!c.box.empty()) {
    auto b = parse_box(c.box);
    if (!b) return fail(std::string{}, b.error().message);
    o.box = *b;
  }
  if (o.protocol == bots_protocol::seed002 && !o.box)
    return fail(std::string{}, "--protocol seed002 needs --box X0,Z0,X1,Z1: the ground the bots walk on");
  o.step = c.step;
  o.threads = c.threads;
  o.move_hz = c.move_hz;
  o.checkpoints = c.checkpoints;
  o.settle = std::chrono::milliseconds(c.settle_ms);
  o.login_timeout = std::chrono::milliseconds(c.login_timeout_ms);
  o.resume = c.resume;
  o.hostile = c.hostile;
  o.progress = !c.quiet;
  o.keep_request_samples = !c.request_log.empty();
  const std::string& admin = c.verify_views.empty() ? c.admin : c.verify_views;
  if (!admin.empty()) {
    auto a = addresses(c.verify_views.empty() ? "--admin" : "--verify-views", admin);
    if (!a) return fail(std::string{}, a.error().message);
    // Every node's scenes: nodes of a cluster may each host part of the table (`--hosts`).
    for (const auto& at : *a) {
      auto scenes = read_scenes(at, std::chrono::seconds(10));
      if (!scenes) return fail(std::string{}, scenes.error().message);
      for (auto& s : *scenes)
        if (std::none_of(o.scenes.begin(), o.scenes.end(),
                         [&s](const scene_entry& e) { return e.id == s.id; }))
          o.scenes.push_back(std::move(s));
    }
    if (!c.verify_views.empty()) o.admins = std::move(*a);
  }
  if (c.checkpoints > 0 && o.admins.empty()) return fail(std::string{}, "--checkpoints needs --verify-views");
  return o;
}

bool write_report(const std::string& path, const bots_report& r) {
  std::ofstream out(path);
  out << bots_report_json(r) << '\n';
  return static_cast<bool>(out);
}

bool write_request_log(const std::string& path, const bots_report& r) {
  std::ofstream out(path);
  out << "sent_unix_ms,rtt_ms,kind,code\n";
  for (const auto& s : r.request_samples)
    out << fmt::format("{},{:.3f},{},{}\n", s.sent_unix_ms, s.rtt_us / 1000.0, s.kind, s.code);
  return static_cast<bool>(out);
}

// What the bots do: how often they move, chat, travel and leave.
void add_behaviour_options(CLI::App* cmd, bots_command_options& o) {
  cmd->add_option("--session", o.session_seconds, "Mean session length in seconds (default: the whole run)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--chat-every", o.chat_every, "Mean seconds between two chats of a bot (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--act-every", o.act_every,
                  "Mean seconds between two world requests of a bot (travel, dungeons, phases; 0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--mix", o.mix,
                  "Weights of the world requests, e.g. 'enter_phase=0,transfer=2' (default: enter_field=3,"
                  "enter_dungeon=2,join_team=1,transfer=1,enter_phase=2,leave_phase=1,back_to_town=2)");
  cmd->add_option("--hostile", o.hostile,
                  "Percent of the bots (chosen by the seed) that misbehave, each in one seeded way: garbage "
                  "bytes, oversize or lying headers, half frames, floods, never reading, slow logins, "
                  "guessed resume tokens, junk module messages; reported apart, their cuts are no errors")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--party-size", o.party_size, "Bots per party (dungeon runs, team joins)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100u));
}

// What the run checks and reports: views against the server's lines, thresholds, the report.
void add_check_options(CLI::App* cmd, bots_command_options& o) {
  cmd->add_option("--admin", o.admin, "ADMIN_HOST:PORT whose /scenes says where bots can travel");
  cmd->add_option(
      "--verify-views", o.verify_views,
      "ADMIN_HOST:PORT: at the end, compare every bot's view with the server's lines (exit 3 on a mismatch); "
      "a cluster's nodes as HOST:PORT,HOST:PORT,...");
  cmd->add_option("--checkpoints", o.checkpoints,
                  "View checks during the run, movement paused (with --verify-views)")
      ->check(CLI::Range(0u, 100u));
  cmd->add_option("--settle-ms", o.settle_ms,
                  "A view check reads the server once no frame changed a view for this long")
      ->capture_default_str()
      ->check(CLI::Range(0, 60'000));
  cmd->add_option("--login-timeout-ms", o.login_timeout_ms,
                  "A bot with no view (202) this long after connecting is an error and closes")
      ->capture_default_str()
      ->check(CLI::Range(100, 600'000));
  cmd->add_flag("--resume", o.resume,
                "A bot its server drops (no goodbye, or shutting_down) connects to the next target and "
                "logs in with its resume token, as after a cluster's gateway died; it has --login-timeout-ms "
                "to get its player back");
  cmd->add_option("--report", o.report, "Write a JSON report to this file");
  cmd->add_option("--request-log", o.request_log,
                  "Write every answered world request to this CSV file: when it was sent (Unix ms), its "
                  "round trip (ms), its kind and the answer's code");
  cmd->add_option("--threshold", o.thresholds,
                  "Fail (exit 3) unless it holds, e.g. 'move_p99_ms<50' (repeatable)");
  cmd->add_flag("--quiet", o.quiet, "No progress lines on stderr");
}

// Parties that play a game's dungeon through the party script its server executable registered.
void add_play_options(CLI::App* cmd, bots_command_options& o) {
  cmd->add_option("--play", o.play,
                  "NAME: parties play the dungeon through this party script of the server executable "
                  "(e.g. dungeon_server's 'crypt'): enter, fight, loot, log in again and find the loot; "
                  "--seconds is then their deadline, --clients unused");
  cmd->add_option("--play-scene", o.play_scene, "With --play: the dungeon scene the parties enter")
      ->check(CLI::Range(1u, 1'000'000u));
  cmd->add_option("--parties", o.parties, "With --play: parties (of --party-size bots)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100'000u));
}

// `--play NAME`: the parties' run, its summary and report; exit 3 when a party failed.
int run_play(const bots_command_options& c) {
  const party_script_factory* script = c.scripts ? c.scripts->find(c.play) : nullptr;
  if (!script) {
    std::string known;
    if (c.scripts)
      for (const auto& n : c.scripts->names()) known += (known.empty() ? "" : ", ") + n;
    fmt::print(stderr, "{}: --play '{}': no such party script ({})\n", me, c.play,
               known.empty() ? "this executable registers none: a studio's server passes its own to "
                               "scenert::apps::main"
                             : "known: " + known);
    return exit_usage;
  }
  if (c.ws || c.protocol != "scenert") {
    fmt::print(stderr,
               "{}: --play speaks scenert's protocol over TCP: leave out --ws and --protocol seed002\n", me);
    return exit_usage;
  }
  if (c.play_scene == 0) {
    fmt::print(stderr, "{}: --play needs --play-scene ID, the dungeon scene the parties enter\n", me);
    return exit_usage;
  }
  auto target = address("target", c.target);
  if (!target) {
    fmt::print(stderr, "{}: {}\n", me, target.error().message);
    return exit_usage;
  }
  party_play_options o;
  o.target = *target, o.script_name = c.play, o.script = script, o.scene = c.play_scene;
  o.parties = c.parties, o.party_size = c.party_size, o.seed = c.seed, o.move_hz = c.move_hz;
  o.deadline = std::chrono::milliseconds(static_cast<std::int64_t>(c.seconds * 1000));
  o.progress = !c.quiet;
  const party_play_report r = run_party_play(o);
  fmt::print("{}", party_play_text(r));
  if (!c.report.empty()) {
    std::ofstream out(c.report);
    out << party_play_json(r) << '\n';
    if (!out) {
      fmt::print(stderr, "{}: cannot write the report to {}\n", me, c.report);
      return exit_usage;
    }
  }
  return r.parties_failed != 0 || r.errors != 0 ? exit_invariant_broken : exit_ok;
}

}  // namespace

CLI::App* add_bots_command(CLI::App& app, bots_command_options& o) {
  CLI::App* cmd =
      app.add_subcommand("bots", "Load-test a running server with real clients over real sockets");
  cmd->add_option("target", o.target,
                  "HOST:PORT of the server's TCP listener (WebSocket with --ws); a cluster's gateways as "
                  "HOST:PORT,HOST:PORT,... (bots dealt to them in turn)")
      ->required();
  cmd->add_option("--clients", o.clients, "Bots")->capture_default_str()->check(CLI::Range(1u, 1'000'000u));
  cmd->add_option("--seconds", o.seconds,
                  "Length of the run (SIGINT or SIGTERM ends it early, with its last check and report)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  cmd->add_option("--rate", o.rate, "Arrivals per second (default: every bot within the first quarter)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_flag("--ws", o.ws, "Connect over WebSocket");
  cmd->add_option("--protocol", o.protocol, "scenert (log in, travel, phases) or seed002 (ids 1-202 only)")
      ->capture_default_str()
      ->check(CLI::IsMember({"scenert", "seed002"}));
  cmd->add_option("--box", o.box, "X0,Z0,X1,Z1: the ground bots walk on, in world units (seed002: required)");
  cmd->add_option("--step", o.step, "World units per move (default: 0.9 cell; seed002: 0.5)")
      ->check(CLI::Range(0.0f, 1e6f));
  cmd->add_option("--seed", o.seed, "Seed of the plan (same seed, same plan)")->capture_default_str();
  cmd->add_option("--threads", o.threads, "Event loops (threads) the bots share")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--move-hz", o.move_hz, "Moves per second of each bot")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1000.0));
  add_behaviour_options(cmd, o);
  add_check_options(cmd, o);
  add_play_options(cmd, o);
  cmd->footer(
      "Exit status: 0 views and thresholds held; 2 usage error or unreachable admin endpoint;\n"
      "3 a view mismatch or a missed threshold (--play: a party failed).");
  return cmd;
}

int run_bots_command(const bots_command_options& c) {
  if (!c.play.empty()) return run_play(c);
  std::vector<threshold> thresholds;
  for (const auto& text : c.thresholds) {
    auto t = parse_threshold(text, bots_threshold_metrics());
    if (!t) {
      fmt::print(stderr, "{}: --threshold {}\n", me, t.error().message);
      return exit_usage;
    }
    thresholds.push_back(*t);
  }
  auto o = options_of(c);
  if (!o) {
    fmt::print(stderr, "{}: {}\n", me, o.error().message);
    return exit_usage;
  }
  auto mix = parse_mix(c.mix);
  if (!mix) {
    fmt::print(stderr, "{}: {}\n", me, mix.error().message);
    return exit_usage;
  }
  const bots_plan plan = make_bots_plan({c.clients, c.seconds, c.rate, c.seed, c.session_seconds,
                                         c.chat_every, c.act_every, *mix, c.party_size});
  if (!c.quiet)
    fmt::print(stderr, "bots: {} clients over {} s at {:.0f} arrivals/s to {} ({}, {}), seed {}{}\n",
               c.clients, c.seconds, plan.rate, c.target, c.ws ? "ws" : "tcp", c.protocol, c.seed,
               c.hostile > 0 ? fmt::format(", {}% hostile", c.hostile) : std::string{});
  // SIGINT or SIGTERM ends the run early, with its last check and its report.
  block_shutdown_signals();
  o->stop_early = [] { return wait_for_shutdown(std::chrono::milliseconds(0)); };
  bots_report r = run_bots(*o, plan);
  r.target = c.target, r.transport = c.ws ? "ws" : "tcp", r.protocol = c.protocol;
  r.clients = c.clients, r.seconds = c.seconds, r.rate = plan.rate, r.move_hz = c.move_hz, r.seed = c.seed;
  r.missed_thresholds = missed_thresholds(thresholds, bots_measured_values(r));
  fmt::print("{}", bots_summary_text(r));
  if (!c.report.empty() && !write_report(c.report, r)) {
    fmt::print(stderr, "{}: cannot write the report to {}\n", me, c.report);
    return exit_usage;
  }
  if (!c.request_log.empty() && !write_request_log(c.request_log, r)) {
    fmt::print(stderr, "{}: cannot write the request log to {}\n", me, c.request_log);
    return exit_usage;
  }
  return r.view_mismatches() != 0 || !r.missed_thresholds.empty() ? exit_invariant_broken : exit_ok;
}

}  // namespace scenert::apps
