#pragma once
// The front's I/O side: the state its I/O threads share (front::impl) and each thread's own
// (front_shard): its sessions and its mirror of every view, and its parts by topic — logins
// (front_login), a logged-in client's messages (front_play), the lines' events (front_fan_out) and
// the table's geometry (front_geometry).

#include "front_admission.hpp"
#include "front_counters.hpp"
#include "front_fan_out.hpp"
#include "front_geometry.hpp"
#include "front_login.hpp"
#include "front_play.hpp"
#include "player_book.hpp"
#include "session.hpp"

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include <scenert/net/messages.hpp>
#include <scenert/net/view_mirror.hpp>
#include <scenert/runtime/inbox.hpp>
#include <scenert/scene/scene.hpp>
#include <scenert/scene/view_key.hpp>

namespace scenert::net {

// What the lines' threads share with one I/O thread: the batches' inbox and the wake-up.
// Thread-safety: post() from any thread; on_wake runs on the I/O thread.
struct line_feed {
  std::shared_ptr<asio::io_context> io;
  inbox<line_batch> batches{1024};
  std::atomic<bool> wake_pending{false};
  std::function<void()> on_wake;  // set before the first post, run on the I/O thread
  void post(line_handle line, phase_id phase, std::span<const line_event> events);
  /// A batch of no events that says `p` stands on this view still.
  void post_stands(line_handle line, phase_id phase, player_id p);
  void post_frames(line_handle line, std::span<const module_frame> frames);

 private:
  void post_batch(line_batch batch);
};

// Who is logged in on which shard, who waits for its resume, and the resume tokens: touched on
// logins, resumes and closes only.
// Thread-safety: any I/O thread, under `m`.
struct player_roll {
  std::mutex m;
  std::unordered_map<player_id, std::size_t> home;  // logged-in player -> its shard
  std::unordered_map<player_id, waiting> detached;
  std::unordered_map<std::string, player_id> tokens;  // resume token -> player (logged in or detached)
};

class front_shard;

// What the I/O threads share: the table and options, the counters, the players' cards, who is logged
// in on which thread and who waits for a resume. Each I/O thread is a front_shard: it owns its
// connections and keeps a mirror of every view (every line's events reach every shard), so it fans
// out to its own clients alone, as seed 000's gateways each do for theirs.
// Thread-safety: the listeners and shards are the I/O threads'; the rest as each member says.
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
  player_roll roll;
  front_counters n;
  admission_watch admission;

  // Connections handed over by the web port (adopt_websocket) until stop() closes the door.
  std::mutex adopting_mutex;
  bool adopting_closed = false;

  // The listeners live on shard 0; each connection goes to the next shard in turn.
  tcp::acceptor tcp_acceptor, ws_acceptor;
  result<void, front_errc> listen(tcp::acceptor& a, const std::string& host, std::uint16_t port,
                                  const char* flag, std::uint16_t& bound);
  void accept(tcp::acceptor& a, bool websocket);
  void hand_to_shard(int socket, bool websocket, std::string bytes);
  front_shard& next();
  /// A headroom sample of the whole front fed to the gate (shard 0's thread, every sweep).
  void sample_headroom(clock::time_point now);
  /// Whether a new login is admitted now. Any thread.
  [[nodiscard]] bool admitting() const noexcept {
    return admission.admitting.load(std::memory_order_relaxed);
  }
  /// The shard `p` is logged in on, if any (the roll's mutex held by `lock`).
  front_shard* home_of(player_id p, const std::unique_lock<std::mutex>& lock);
  /// Where a player placed again while its client was away stands now: kept for its resume, or told
  /// to the client that resumed meanwhile. An I/O thread.
  void placed_while_away(player_id p, world_result placed);
  /// Places a player waiting for its resume again (its node died), asked again every 250 ms while
  /// its scene has no place (`worth_asking_again`) until `until`, as for a player online.
  void place_while_away(player_id p, scene_id scene, std::optional<grid::cell_point> at,
                        clock::time_point until);
};

/// What a placement again waits out: a dead node's lines open again on a live node soon.
[[nodiscard]] inline bool worth_asking_again(const world_result& r) {
  return !r && (r.code() == world_errc::line_full || r.code() == world_errc::node_unavailable);
}

// One I/O thread of the front: one io_context owns its sessions, its view mirrors and its parts.
// Scenes, the world and the other shards only post to it.
// Thread-safety: its I/O thread only, but for feed (any thread) and the published counts.
class front_shard final : public session_host {
 public:
  front_shard(front::impl& hub, std::size_t number);

  front::impl& hub;
  const std::size_t number;  // in hub.shards
  const front_options& opt;
  front_counters& n;
  std::shared_ptr<asio::io_context> io;
  std::shared_ptr<line_feed> feed;

  /// The world; set by front::start().
  [[nodiscard]] world_port& world() const { return *hub.w; }
  [[nodiscard]] bool stopping() const noexcept { return stopping_; }

  // ---- sessions: the logged-in ones by player, the ones not logged in yet ----
  std::unordered_map<player_id, std::shared_ptr<session>> sessions;
  std::vector<std::shared_ptr<session>> greeting;
  /// The session of `p` logged in here, or null.
  [[nodiscard]] session* session_of(player_id p);

  // ---- the mirror: every view, and the view each player stands in as its events said ----
  std::unordered_map<view_key, view_mirror, view_key_hash> mirrors;
  std::unordered_map<player_id, standing_line> line_of;
  // The view a player stood in before it entered its current one, while that view's batch saying
  // it left has not come (lines on different nodes publish out of each other's order). Should the
  // current view say it left first, the player stands in this one again.
  std::unordered_map<player_id, standing_line> stood_in;
  struct standing_at {
    scene_id scene;
    grid::cell_point cell;
  };
  /// Where `p` stands, as this shard's mirror says.
  [[nodiscard]] std::optional<standing_at> where(player_id p) const;
  /// Whether `p` stands in the view `key` (it hears that view's events).
  [[nodiscard]] bool stands_in(player_id p, const view_key& key) const;

  // ---- the parts ----
  scene_geometry geo;
  login_desk logins;
  play_desk play;
  fan_out fan;

  /// A connection accepted for this shard (`read_already`: what the web port read of it).
  void on_accepted(tcp::socket sock, bool websocket, std::string_view read_already = {});
  /// Every session that queued frames writes them: one write per connection per batch.
  void flush();
  /// Says goodbye to this shard's clients and ends its loop once their sockets are closed.
  void shut_down();
  /// Every quarter second: timeouts, resumes that expired, connections per line.
  void sweep();
  /// Connections per line, at the last sweep. Any thread.
  [[nodiscard]] std::vector<line_connections> connections() const;

  // ---- session_host ----
  void greeted(const std::shared_ptr<session>& s) override;
  void frame_in(const std::shared_ptr<session>& s, std::uint32_t id, std::string_view payload) override;
  void read_done() override { flush(); }
  void queued(const std::shared_ptr<session>& s) override { dirty_.push_back(s); }
  void closing(session& s, close_reason why) override;
  void socket_closed() override;
  front_counters& counters() override { return n; }
  out_counts& sent() override { return sent_; }
  std::string& ws_scratch() override { return ws_scratch_; }

  /// Its load at the last sweep (front_admission.cpp).
  shard_load load;

 private:
  void measure_load(clock::time_point now, clock::duration lag);
  void sweep_once(clock::time_point now);
  void publish_connections();
  void stop_when_quiet();

  std::vector<std::shared_ptr<session>> dirty_;
  std::size_t open_sockets_ = 0;
  bool stopping_ = false;
  asio::steady_timer stop_timer_, sweep_timer_;
  clock::time_point sweep_due_{};  // when the sweep timer should fire: how late it ran is the loop's lag
  std::string ws_scratch_;         // the frames of a WebSocket write before they became messages
  out_counts sent_;
  mutable std::mutex published_mutex_;
  std::vector<line_connections> published_;  // connections per line, every sweep
};

}  // namespace scenert::net
