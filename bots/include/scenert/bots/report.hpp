#pragma once
/// The results of `scenert bots`: a summary table for people, a JSON report for tools, and the
/// measured values that `--threshold` criteria are checked against.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <scenert/net/message_id.hpp>

#include <scenert/bots/hostile.hpp>
#include <scenert/bots/latency_histogram.hpp>
#include <scenert/bots/own_load.hpp>
#include <scenert/bots/verify.hpp>
#include <scenert/loadtest/report.hpp>  // ms_stats

namespace scenert::bots {

using loadtest::ms_stats;

/// Frames and bytes of one message id, both ways (as the bots count them).
struct wire_count {
  std::uint64_t frames_in = 0, bytes_in = 0, frames_out = 0, bytes_out = 0;
};

/// One answered world request (`--request-log`): when it was sent by the wall clock, so that a run's
/// requests can be set against events outside it (a fault's window), and how long its answer took.
struct request_sample {
  std::int64_t sent_unix_ms = 0;
  std::uint32_t rtt_us = 0;
  std::string kind, code;
};

/// Everything a bots run measured.
struct bots_report {
  // ---- the run, as asked ----
  std::string target;     ///< HOST:PORT
  std::string transport;  ///< "tcp" or "ws"
  std::string protocol;   ///< "scenert" or "seed002"
  std::uint32_t clients = 0;
  double seconds = 0, rate = 0, move_hz = 0;
  std::uint64_t seed = 0;
  unsigned threads = 1;
  std::uint64_t plan_digest = 0;
  double wall_seconds = 0;
  bool ended_early = false;  ///< the run was ended before its planned length (bots_options::stop_early)

  // ---- connections ----
  std::uint64_t connected = 0, connect_failed = 0, logged_in = 0, max_online = 0;
  latency_histogram connect, login;  ///< connect: TCP (and WS) handshake; login: connect to first 202
  std::map<std::string, std::uint64_t>
      disconnects;            ///< by reason: the server's goodbye reason, "eof", "error", "timeout"
  std::uint64_t resumed = 0;  ///< --resume: bots that got their player back on another connection
  /// --resume: bots that did not get their player back, by why ("not back in time (LAST LOSS)",
  /// "token refused", "closed by the server (REASON)"); each is an error too.
  std::map<std::string, std::uint64_t> failed_resumes;
  latency_histogram resume;  ///< --resume: dropped to its first view (202) on the new connection
  /// Logins the server refused (server_busy); each bot tried again after the retry-after its goodbye
  /// said, within its login timeout. Past it the bot gave up (busy_gave_up, a disconnect
  /// "server_busy"; no error: refusing newcomers past its line is the server's job).
  std::uint64_t server_busy = 0, busy_gave_up = 0;

  // ---- hostile bots (--hostile): apart from the well-behaved bots, whose figures the rest are ----
  std::uint32_t well_behaved = 0;  ///< bots that played the plan as clients should
  hostile_report hostile;

  // ---- play ----
  std::uint64_t moves_sent = 0, chats_sent = 0;
  std::map<std::string, std::uint64_t> moves_refused;  ///< by the server's reason (1008)
  latency_histogram move_to_viewer;                    ///< a bot's move to each viewer's 200 Tp 4 of it
  /// 200 Tp 4 of a bot not timed: its position names no single one of the mover's last 32 moves
  /// (sent twice among them, or not among them: a place the server chose).
  std::uint64_t untimed_deliveries = 0;
  latency_histogram heartbeat_rtt;
  std::map<std::string, latency_histogram> request_rtt;                 ///< by request kind
  std::map<std::string, std::map<std::string, std::uint64_t>> answers;  ///< request kind -> code -> count
  std::vector<request_sample> request_samples;  ///< every answer, when `keep_request_samples` (by worker)
  std::array<wire_count, std::size(net::all_message_ids)> wire{};  ///< by message id
  std::uint64_t unknown_frames = 0;  ///< frames with an id or payload the bots could not decode

  // ---- the bots' own lag and CPU: whether the latencies above are the server's ----
  own_load own;

  // ---- errors and views ----
  std::uint64_t errors =
      0;  ///< anything a client should never see: bad frames, protocol breaches, failed connects
  std::vector<std::string> error_examples;
  bool views_verified = false;
  view_check views;                     ///< at the end
  std::vector<view_check> checkpoints;  ///< during the run, movement paused
  std::vector<std::string> missed_thresholds;

  /// Mismatches at the end and at every checkpoint.
  [[nodiscard]] std::uint64_t view_mismatches() const noexcept;
};

/// The metric names `--threshold` accepts (move_p99_ms, errors, view_mismatches, ...).
[[nodiscard]] const std::vector<std::string>& bots_threshold_metrics();
/// The measured value of every threshold metric.
[[nodiscard]] std::map<std::string, double> bots_measured_values(const bots_report& r);

/// The table printed at the end of a run (stdout).
[[nodiscard]] std::string bots_summary_text(const bots_report& r);
/// The JSON report (`--report FILE`).
[[nodiscard]] std::string bots_report_json(const bots_report& r);

}  // namespace scenert::bots
