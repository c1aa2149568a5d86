#pragma once
// The hostile bots of a run: one thread of their own (an event loop apart from the well-behaved bots'
// workers), each bot misbehaving in its one way from its planned arrival until the server cuts it or
// the run ends; what ended each one is its outcome in the report.

#include <scenert/bots/hostile.hpp>
#include <scenert/bots/worker.hpp>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace scenert::bots {

struct hostile_bot {
  std::uint32_t index = 0;
  hostile_kind kind = hostile_kind::garbage;
  const bot_plan* plan = nullptr;
  std::mt19937_64 rng;
  std::optional<tcp::socket> sock;
  enum class stage : std::uint8_t { waiting, connecting, upgrading, on, done };
  stage at = stage::waiting;
  std::string upgrade;   // WebSocket: the server's answer to the upgrade, as far as read
  ws_unframer unframer;  // WebSocket
  net::frame_reader reader{1u << 20};
  std::string out, sending;
  bool writing = false;
  bool logged_in = false;  // login_ok (or you_are) read
  bool did_once = false;   // its one-off misdeed (the oversize header, the half frame) is sent
  bool login_sent = false;
  std::size_t trickled = 0;  // slow_login: bytes of its login sent
  std::string login_bytes;   // slow_login: its login, as it goes on the wire
  clock::time_point next_act{};
  std::string goodbye;                            // the server's reason, when it said goodbye
  std::map<std::string, std::uint64_t> answered;  // what the server answered it with
};

class hostile_crew {
 public:
  /// The crew of `picks`' hostile bots (indices into the plan), on the targets of `shared`.
  hostile_crew(shared_state& shared, const std::vector<std::optional<hostile_kind>>& picks, double percent);
  ~hostile_crew();
  hostile_crew(const hostile_crew&) = delete;
  hostile_crew& operator=(const hostile_crew&) = delete;

  /// Starts the crew's thread (none when it has no bot).
  void start();
  /// Ends every bot (a never-reading one reads what came, to learn whether it was cut), joins the
  /// thread and returns the outcomes.
  hostile_report finish();

 private:
  void tick();
  void connect(hostile_bot& b);
  void upgrade(hostile_bot& b);
  void read(hostile_bot& b);
  void take(hostile_bot& b, std::string_view bytes);
  void frames(hostile_bot& b, std::string_view bytes);
  void on_frame(hostile_bot& b, std::uint32_t id, std::string_view payload);
  void act(hostile_bot& b, clock::time_point now);
  void act_logged_in(hostile_bot& b, clock::time_point now);
  void flood(hostile_bot& b);
  void send_module_junk(hostile_bot& b);
  void send_frames(hostile_bot& b, const std::string& frames);
  void send(hostile_bot& b, const net::client_message& m);
  void write(hostile_bot& b);
  void ended(hostile_bot& b, const std::string& why);
  void drain_at_end(hostile_bot& b);
  void count(const hostile_bot& b, const std::string& ending, const std::string& reason);

  shared_state& shared_;
  asio::io_context io_{1};
  asio::steady_timer timer_{io_};
  std::vector<std::unique_ptr<hostile_bot>> bots_;  // after io_: their sockets close before it goes
  std::array<char, 16 * 1024> buffer_{};
  std::minstd_rand masks_;
  std::thread thread_;
  hostile_report report_;
  bool stopping_ = false;
};

}  // namespace scenert::bots
