#pragma once
// The front's I/O side: the state its I/O threads share (front::impl) and each thread's own
// (front_shard).

#include "player_book.hpp"
#include "session.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include <scenert/net/messages.hpp>
#include <scenert/net/view_mirror.hpp>
#include <scenert/runtime/inbox.hpp>
#include <scenert/scene/scene.hpp>

namespace scenert::net {

struct line_batch {
  line_handle line;
  phase_id phase = 0;  // a phase of that town line (0: the line itself)
  std::vector<line_event> events;
};

// A view: a line, or one phase of a town line; each has a mirror of its own.
struct view_key {
  scene_id scene = 0;
  std::uint32_t line = 0;
  phase_id phase = 0;
  friend bool operator==(const view_key&, const view_key&) = default;
};
struct view_key_hash {
  std::size_t operator()(const view_key& k) const noexcept {
    return std::hash<std::uint64_t>{}((std::uint64_t{k.scene} << 32 | k.line) ^
                                      (std::uint64_t{k.phase} << 20));
  }
};
inline view_key key_of(line_handle l, phase_id phase) { return {l.scene, l.line, phase}; }

// Where a player stands, as its view's events said.
struct standing_line {
  line_handle line;
  phase_id phase = 0;
  [[nodiscard]] view_key key() const { return key_of(line, phase); }
};

// What the lines' threads share with one I/O thread: the batches' inbox and the wake-up.
struct line_feed {
  std::shared_ptr<asio::io_context> io;
  inbox<line_batch> batches{1024};
  std::atomic<bool> wake_pending{false};
  std::function<void()> on_wake;  // set before the first post, run on the I/O thread
  void post(line_handle line, phase_id phase, std::span<const line_event> events);
};

// A player whose connection dropped, keeping its place until `until` for its resume token.
struct waiting {
  std::string name, token;
  placement place;
  bool placed = false;
  clock::time_point until;
};

struct front_shard;

// What the I/O threads share: the table and options, the counters, the players' cards, who is logged
// in on which thread and who waits for a resume. Each I/O thread is a front_shard: it owns its
// connections and keeps a mirror of every view (every line's events reach every shard), so it fans
// out to its own clients alone, as seed 000's gateways each do for theirs.
struct front::impl {
  impl(const scene_table& t, front_options o);
  ~impl();

  const scene_table& table;
  front_options opt;
  std::chrono::milliseconds resume_for;
  world_port* w = nullptr;
  const scene_def* landing = nullptr;
  std::uint16_t tcp_port = 0, ws_port = 0;
  std::vector<std::unique_ptr<front_shard>> shards;
  std::vector<std::thread> threads;
  std::atomic<std::size_t> next_shard{0};
  std::atomic<std::int64_t> next_pid{1};
  player_book book;

  // Who is logged in on which shard, who waits for its resume, and the resume tokens: touched on
  // logins, resumes and closes only.
  std::mutex roll_mutex;
  std::unordered_map<player_id, std::size_t> home;  // logged-in player -> its shard
  std::unordered_map<player_id, waiting> detached;
  std::unordered_map<std::string, player_id> tokens;  // resume token -> player (logged in or detached)

  // Connections handed over by the web port (adopt_websocket) until stop() closes the door.
  std::mutex adopting_mutex;
  bool adopting_closed = false;

  struct counters {
    std::atomic<std::uint64_t> accepted{0}, refused{0}, closed{0}, connections{0}, frames_in{0}, bytes_in{0},
        bytes_out{0}, writes{0}, bad_frames{0}, oversize{0}, moves_refused{0}, moves_stale{0},
        rate_limited{0}, logins{0}, guests{0}, resumed{0}, detached{0}, claimed{0};
    std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(close_reason::count_)> closed_by{};
    std::array<std::atomic<std::uint64_t>, std::size(all_message_ids)> in_frames{}, in_bytes{};
  } n;

  // The listeners live on shard 0; each connection goes to the next shard in turn.
  tcp::acceptor tcp_acceptor, ws_acceptor;
  result<void, front_errc> listen(tcp::acceptor& a, const std::string& host, std::uint16_t port,
                                  const char* flag, std::uint16_t& bound);
  void accept(tcp::acceptor& a, bool websocket);
  void hand_to_shard(int socket, bool websocket, std::string bytes);
  front_shard& next();
};

// One I/O thread of the front: one io_context owns its sessions, its view mirrors and its outgoing
// buffers. Scenes, the world and the other shards only post to it. Its work is split by topic:
// front.cpp (connections and bytes), front_login.cpp (logins, guests, resumes), front_play.cpp (a
// logged-in client's messages), front_fan_out.cpp (the lines' events).
struct front_shard {
  front_shard(front::impl& hub, std::size_t number);

  front::impl& hub;
  const std::size_t number;  // in hub.shards
  const scene_table& table;
  const front_options& opt;
  world_port* const& w;
  front::impl::counters& n;
  std::shared_ptr<asio::io_context> io;
  std::shared_ptr<line_feed> feed;

  // ---- this shard's I/O thread only ----
  std::unordered_map<player_id, std::shared_ptr<session>> sessions;  // logged in here
  std::vector<std::shared_ptr<session>> greeting;                    // not logged in yet
  std::unordered_map<view_key, view_mirror, view_key_hash> mirrors;
  std::map<map_id, std::shared_ptr<const grid::map_data>> maps;
  std::map<map_id, std::string> blocked_bits;  // 1006's bitset of each map
  std::vector<std::shared_ptr<session>> dirty;
  std::size_t open_sockets = 0;
  bool stopping = false;
  asio::steady_timer stop_timer, sweep_timer;
  // The line (and phase) each player stands on, as its view's events said (a move asks for it).
  std::unordered_map<player_id, standing_line> line_of;
  // The line each player stood on before it entered its current one, until that line says it left.
  // A cluster's node may place a player and let it go again (a hand-over given up late): the player
  // stands here still.
  std::unordered_map<player_id, standing_line> left_behind;
  std::vector<player_id> stepping_back;  // one drain's players whose line let them go (left_behind's)

  // Coalescing one drain's moves: a player's moves before its last one in the drain are not sent.
  std::vector<line_batch> drained;
  std::vector<std::pair<player_id, std::uint32_t>> move_order;  // (mover, event index)
  std::vector<bool> superseded;

  mutable std::mutex published_mutex;
  std::vector<line_connections> published;  // connections per line, every sweep

  static void add(std::atomic<std::uint64_t>& c, std::uint64_t v = 1) {
    c.fetch_add(v, std::memory_order_relaxed);
  }
  // Frames out, counted by this shard's thread alone: a plain load and store, no locked add shared
  // with the other shards (the fan-out counts every frame it queues). front::stats() sums the shards.
  struct out_counts {
    std::atomic<std::uint64_t> frames{0};
    std::array<std::atomic<std::uint64_t>, std::size(all_message_ids)> frames_by_id{}, bytes_by_id{};
  } sent;
  static void bump(std::atomic<std::uint64_t>& c, std::uint64_t v = 1) {
    c.store(c.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
  }
  void count_in(std::uint32_t id, std::size_t payload);
  void count_out(std::string_view frames);
  void shut_down();

  // ---- front.cpp: connections and bytes ----
  void on_accepted(tcp::socket sock, bool websocket, std::string_view read_already = {});
  void handshake(const std::shared_ptr<session>& s);
  void read(const std::shared_ptr<session>& s);
  void on_read(const std::shared_ptr<session>& s, boost::system::error_code ec, std::string_view bytes);
  void close(const std::shared_ptr<session>& s, close_reason why, const std::string& text = {});
  /// The next player id of the front's range; none once the range is spent.
  [[nodiscard]] std::optional<player_id> take_pid();
  void close_socket(session& s);
  void stop_when_quiet();
  void sweep();
  void sweep_once(clock::time_point now);
  void publish_connections();
  static constexpr std::chrono::seconds linger{2};
  std::vector<std::pair<std::shared_ptr<session>, clock::time_point>> lingering;
  void end_lingering(clock::time_point now);
  void send(session& s, const server_message& m);
  void push(const std::shared_ptr<session>& s, std::string_view frame);
  void mark(session& s);
  void flush();
  void write(const std::shared_ptr<session>& s);
  void frame_as_messages(std::string& frames);
  std::string ws_scratch;  // the frames of a WebSocket write before they became messages
  void wrote(const std::shared_ptr<session>& s, boost::system::error_code ec);

  // ---- front_login.cpp: logins, guests, resumes ----
  void greet(const std::shared_ptr<session>& s);
  void log_in_guest(const std::shared_ptr<session>& s);
  void log_in(const std::shared_ptr<session>& s, const login& l);
  void log_in_afresh(const std::shared_ptr<session>& s, const login& l);
  void claimed(const std::weak_ptr<session>& asking, const login& l, result<claimed_player, world_errc> r);
  void let_go(player_id pid);
  void resume(const std::shared_ptr<session>& s, player_id pid, waiting was);
  void hand_over(player_id pid, std::size_t to, std::weak_ptr<session> asking, login l);
  void admit(const std::shared_ptr<session>& s, player_id pid, std::string name);
  void drop_player(session& s, close_reason why);
  void park(player_id pid, waiting was, bool may_come_back);
  void handed_off(player_id pid);
  void expire_detached(clock::time_point now);
  std::random_device entropy;  // resume tokens: 128 bits each
  std::string new_token();
  void chat_to_all(const std::string& frame);

  // ---- front_play.cpp: a logged-in client's messages ----
  void on_frame(const std::shared_ptr<session>& s, std::uint32_t id, std::string_view payload);
  void bad_frame(const std::shared_ptr<session>& s, const std::string& why);
  bool allowed(bucket& b, const front_options::rate& r);
  void handle(const std::shared_ptr<session>& s, const talk& t);
  void handle(const std::shared_ptr<session>& s, const move_to& m);
  void handle(const std::shared_ptr<session>& s, const walk& step);
  void handle(const std::shared_ptr<session>& s, const request& r);
  void handle(const std::shared_ptr<session>& s, const heartbeat& h);
  void handle(const std::shared_ptr<session>& s, const login& l);
  /// `then_to`: once placed, a walk to that cell (a player placed again where it stood).
  void enter_world(const std::shared_ptr<session>& asking, const world_request& q, std::uint32_t request_id,
                   std::optional<grid::cell_point> then_to = std::nullopt);
  server_message info_of(const scene_def& def, const placement& p);
  const std::string& blocked_bits_of(const scene_def& def);

  // ---- front_fan_out.cpp: the lines' events ----
  void drain_lines();
  void mark_superseded_moves();
  void send_view(session& s, bool players = true);
  void correct_place(session& s);
  void own_move(player_id p, const view_key& key, grid::cell_point at, const scene_def& def);
  void forget_view(const view_mirror& mirror, player_id p);
  [[nodiscard]] bool stands_in(player_id p, const view_key& key) const;
  void entering(player_id p, const view_key& key);
  void step_back(player_id p);

  // ---- geometry ----
  struct standing_at {
    scene_id scene;
    grid::cell_point cell;
  };
  std::optional<standing_at> where(player_id p) const;
  const scene_def* def_of(scene_id id) const { return table.find_scene(id); }
  const scene_def& landing() const { return *hub.landing; }
  const std::shared_ptr<const grid::map_data>& map_of(const scene_def& s);
  const map_def& units_of(const scene_def& d) const;
  static position centre(grid::cell_point c, const map_def& u);
  static position position_of(const session& s, grid::cell_point c, const map_def& u);
  static position last_accepted(const session& s, grid::cell_point c, const map_def& u);
  static position position_of(const std::optional<player_book::card>& card, grid::cell_point c,
                              const map_def& u);
  void claim(session& s, grid::cell_point cell, const position& at);
  void unclaim(session& s);
};

}  // namespace scenert::net
