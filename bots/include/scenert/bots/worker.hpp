#pragma once
// One thread of `scenert bots`: an event loop that owns its bots (their sockets, their views, their
// counters) and plays their plans. Threads share only what viewers need to time a delivery (who is
// which bot, and each bot's recent moves) and a few live counters.

#include <utility>  // before Asio: Boost 1.74's asio/awaitable.hpp needs it under g++ 12

#include <tbb/concurrent_unordered_map.h>
#include <boost/asio.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <scenert/net/frame.hpp>
#include <scenert/net/map_blocks.hpp>
#include <scenert/net/messages.hpp>

#include <scenert/bots/engine.hpp>
#include <scenert/bots/websocket.hpp>

namespace scenert::bots {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using clock = std::chrono::steady_clock;

// A bot's recent moves (position bits -> when sent), written by its own thread and read by its
// viewers' threads to time each delivery. A slot is reused after `size` moves (seconds later).
struct move_ring {
  static constexpr std::size_t size = 32;
  struct entry {
    std::atomic<std::uint64_t> key{~std::uint64_t{0}};
    std::atomic<std::int64_t> sent{0};
  };
  std::array<entry, size> slots;
  std::uint32_t next = 0;  // owner's thread only

  void put(std::uint64_t key, std::int64_t ns) noexcept;
  [[nodiscard]] std::optional<std::int64_t> find(std::uint64_t key) const noexcept;
};

// What every thread shares.
struct shared_state {
  shared_state(const bots_options& o, const bots_plan& p);
  const bots_options& opt;
  const bots_plan& plan;
  std::vector<tcp::endpoint> targets;  // bot i: targets[i % size]
  clock::time_point start;
  std::atomic<bool> paused{false};
  std::vector<std::atomic<std::int32_t>> pid_of;                      // bot index -> pid (0: none yet)
  tbb::concurrent_unordered_map<std::int32_t, std::uint32_t> bot_of;  // pid -> bot index
  // The maps' blocks the bots were sent, by digest: a bot's login names them, so that each map's blocks
  // come to the process about once (inserted, never changed or removed).
  tbb::concurrent_unordered_map<std::uint64_t, std::shared_ptr<const net::block_bits>> maps;
  std::unique_ptr<move_ring[]> rings;  // one per bot
  // Live, for the progress line.
  std::atomic<std::uint64_t> online{0}, max_online{0}, moves{0}, frames_in{0}, frames_out{0}, errors{0};
  // Frames that change a view or a place (not heartbeats): a view check waits until they stop.
  std::atomic<std::uint64_t> view_frames{0};
  // While a view check reads the server's truth (line by line, over many ticks): the players its
  // view frames were about (a frame's subject; the bot itself for its own place and view).
  std::atomic<bool> noting_changes{false};
  std::mutex changed_m;
  std::unordered_set<std::int32_t> changed;
};

// Where a bot stands and the geometry it walks on (from 1006; seed002 bots have only their box).
struct standing {
  std::uint32_t scene = 0, line = 0, phase = 0;
  std::int32_t width = 0, height = 0;
  float cell_size = 1, origin_x = 0, origin_z = 0;
  std::shared_ptr<const net::block_bits> blocked;  // shared by every bot of the process on that map
  bool has_map = false;
};

struct bot {
  // reconnecting: dropped by its server, it waits to connect to the next target with its token.
  enum class stage : std::uint8_t { waiting, connecting, logging_in, playing, leaving, reconnecting, done };
  std::uint32_t index = 0;
  const bot_plan* plan = nullptr;
  std::mt19937_64 rng;
  stage at = stage::waiting;
  std::optional<tcp::socket> sock;
  bool ws = false;       // WebSocket: messages unframed on the way in, masked on the way out
  std::string upgrade;   // the upgrade request, then the server's answer as far as read
  ws_unframer unframer;  // WebSocket
  std::string pongs;     // WebSocket: control frames to write before the next frames
  net::frame_reader reader{1u << 20};
  std::string out, sending;  // frames to write, bytes being written
  bool writing = false, dirty = false;

  std::int32_t pid = 0;
  std::string token;             // its resume token (login_ok)
  std::uint32_t connection = 0;  // counts its connections: a handler of an earlier one does nothing
  std::uint32_t shift = 0;       // it connects to targets[(index + shift) % size]
  bool resuming = false;         // logging in again with its token after its server dropped it
  clock::time_point dropped_at, resume_by, next_try;
  std::string goodbye;               // the server's reason, when it said goodbye
  std::string goodbye_said;          // and its whole text (the reason, then why), for an error
  std::uint32_t retry_after_ms = 0;  // what its goodbye said to wait (server_busy)
  bool busy_retry = false;           // connecting again after a server_busy: its login began earlier
  clock::time_point login_started;   // its first connect for this login (its login timeout counts from it)
  std::string last_loss;             // resuming: why its last connection (or attempt) ended
  standing where;
  bool has_position = false;
  bool appeared_since_request = false;  // its 202 (or its own 200 Tp 2) came after its last request
  bool own_appeared_due = false;        // its 202 came: its own 200 Tp 2 follows, saying the same
  std::uint32_t views = 0;              // 202s read: its walks (1011) name the view they are made on
  float x = 0, z = 0, heading = 0;
  std::unordered_map<std::int32_t, std::pair<float, float>> view;  // pid -> x, z
  std::uint32_t home = 0;                                          // the scene it landed in

  clock::time_point connect_started, next_move, next_heartbeat, leave_by;
  std::size_t next_step = 0;
  std::uint32_t next_request = 1;
  struct pending_request {
    std::uint32_t id = 0;
    std::string kind;
    clock::time_point sent;
  };
  std::optional<pending_request> pending;
};

class worker {
 public:
  worker(shared_state& s, unsigned index);
  void add(std::uint32_t bot_index);
  /// The loop, on the worker's own thread, until stop().
  void run();
  /// Closes every bot and ends the loop (from any thread).
  void stop();
  /// Runs `fn` on the worker's thread and waits for it (the loop must be running).
  template <class F>
  auto call(F fn) -> decltype(fn()) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto done = task.get_future();
    asio::post(io_, [&task] { task(); });
    return done.get();
  }
  /// The views of the bots in play, and the players of its bots in transit (logging in, between
  /// lines): on the worker's thread, through call().
  struct views_now {
    std::vector<bot_view> views;
    std::vector<std::int32_t> in_transit;
    bool logins_unanswered = false;  ///< a bot whose player the server may have made, unknown to it yet
  };
  [[nodiscard]] views_now views() const;
  /// A copy of the move-to-viewer latencies so far (on the worker's thread).
  [[nodiscard]] const latency_histogram& deliveries() const { return stats_.move_to_viewer; }
  /// Its counters; read after the loop ended.
  [[nodiscard]] bots_report& stats() { return stats_; }

 private:
  void tick();
  void connect(bot& b);
  void reconnect(bot& b, clock::time_point now);
  void check_login_time(bot& b, clock::time_point now);
  /// Its login was refused (server_busy): it tries again after the retry-after, inside its login timeout.
  void refused_busy(bot& b);
  void upgrade(bot& b);
  void read_upgrade(bot& b);
  void upgrade_failed(bot& b, const std::string& why);
  void connected(bot& b);
  void log_in(bot& b);
  void read(bot& b);
  /// Reads what its socket holds into the thread's buffer; notes how long the newest bytes waited
  /// since the kernel took them (read_lag_ns_, -1 when the socket gave no time stamp).
  std::size_t receive(bot& b, boost::system::error_code& e);
  void take(bot& b, std::string_view bytes);
  void frames(bot& b, std::string_view bytes);
  void on_control(bot& b, std::uint8_t opcode, std::string_view payload);
  void on_frame(bot& b, std::uint32_t id, std::string_view payload);
  void on(bot& b, const net::server_message& m, clock::time_point now);
  void note_change(const bot& b, const net::server_message& m);
  void on_broadcast(bot& b, const net::broadcast& m, clock::time_point now);
  void on_answer(bot& b, const net::answer& a, clock::time_point now);
  void keep_sample(const bot::pending_request& q, const std::string& code, clock::time_point now);
  void on_view(bot& b, const net::players_in_view& v, clock::time_point now);
  void on_scene(bot& b, const net::scene_info& m);
  [[nodiscard]] std::vector<std::uint64_t> maps_held() const;
  void send(bot& b, const net::client_message& m);
  void flush();
  void write(bot& b);
  void move(bot& b, clock::time_point now);
  [[nodiscard]] bool walkable(const bot& b, float x, float z) const;
  void act(bot& b, const bot_step& s, clock::time_point now);
  [[nodiscard]] std::optional<net::request> request_for(bot& b, const bot_step& s) const;
  void depart(bot& b, clock::time_point now);
  void lost(bot& b, const std::string& reason);
  void close(bot& b, const std::string& reason);
  void error(bot& b, const std::string& what);

  shared_state& shared_;
  unsigned index_;
  asio::io_context io_{1};
  asio::steady_timer timer_{io_};
  std::vector<std::unique_ptr<bot>> bots_;  // after io_: their sockets close before it goes
  std::vector<bot*> dirty_;
  std::array<char, 64 * 1024> buffer_{};  // every bot of this thread reads through it
  std::minstd_rand masks_;                // WebSocket mask keys
  bots_report stats_;
  bool stopping_ = false;
  clock::time_point tick_due_{};   // when the pending tick's timer was due (its lateness is the loop's lag)
  std::int64_t read_lag_ns_ = -1;  // the frames being taken: how long their read's newest bytes waited
};

}  // namespace scenert::bots
