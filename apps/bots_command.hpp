#pragma once
// `scenert bots HOST:PORT --clients N --seconds S [--rate R] [--ws] [--protocol scenert|seed002]
// [--seed K] [--report FILE] [--threshold EXPR]... [--verify-views ADMIN_HOST:PORT]`: real clients
// over real sockets against a running server.

#include <CLI/CLI.hpp>

#include <scenert/bots/party_script.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace scenert::apps {

/// What `bots` was asked to do; filled in by the command-line parser.
struct bots_command_options {
  std::string target;  ///< HOST:PORT of the server's TCP (or, with --ws, WebSocket) listener
  std::uint32_t clients = 100;
  double seconds = 10;
  double rate = 0;  ///< arrivals per second; 0: every bot arrives within the first quarter
  bool ws = false;
  std::string protocol = "scenert";
  std::string box;  ///< X0,Z0,X1,Z1
  float step = 0;
  std::uint64_t seed = 1;
  unsigned threads = 1;
  double move_hz = 10;
  double session_seconds = 0;
  double chat_every = 10;
  double act_every = 5;
  std::uint32_t party_size = 3;
  std::string mix;           ///< "enter_field=3,enter_dungeon=2,...": weights of the world requests
  std::string admin;         ///< where /scenes is read (scenes to travel to); --verify-views sets it too
  std::string verify_views;  ///< ADMIN_HOST:PORT
  std::uint32_t checkpoints = 0;
  int settle_ms = 500;
  int login_timeout_ms = 10'000;
  bool resume = false;
  double hostile = 0;  ///< percent of the bots that misbehave (--hostile)
  std::string report;
  std::string request_log;  ///< every answered request as CSV; empty: none
  std::vector<std::string> thresholds;
  bool quiet = false;
  std::string play;              ///< --play NAME: parties play a game's dungeon through its party script
  std::uint32_t play_scene = 0;  ///< --play-scene: the dungeon scene they enter
  std::uint32_t parties = 1;     ///< --parties
  const bots::party_scripts* scripts = nullptr;  ///< the scripts --play may name (a studio's executable)
};

/// Adds the `bots` subcommand to `app`; `options` is filled in when it is parsed.
CLI::App* add_bots_command(CLI::App& app, bots_command_options& options);

/// Runs `bots`; returns the exit code (0 held, 2 usage or unreachable admin endpoint, 3 a view
/// mismatch or a missed threshold).
int run_bots_command(const bots_command_options& options);

}  // namespace scenert::apps
