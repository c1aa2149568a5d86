#pragma once
// The insides of the gateway's remote world: where each player's requests go, the requests waiting for
// their answers, the live nodes, the players on their way between two nodes and the lines as their
// events tell them. `m` guards the first four, `lines_m` the lines; one who needs both takes
// `lines_m` first.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <scenert/cluster/node_lease.hpp>
#include <scenert/cluster/remote_world.hpp>
#include <scenert/cluster/wire.hpp>
#include <scenert/scene/view_key.hpp>

#include "line_standing.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

namespace scenert::cluster::detail {

namespace asio = boost::asio;

using clock = std::chrono::steady_clock;

// How long a node may take to say whether it hosts a claimed player (one on its way somewhere is
// answered once it got there: up to a second).
constexpr auto claim_timeout = std::chrono::milliseconds(2000);
// A journey or an entry whose answer did not come in time is asked about (where does its player stand?)
// for this long: a node that answers neither is given up, its player's requests waiting meanwhile.
constexpr auto settle_within = std::chrono::seconds(30);
// Rounds of a claim among the nodes that did not answer in time (a busy node's answer may take longer
// than claim_timeout): a silent node is no proof that the player is gone.
constexpr int claim_rounds = 3;

// A line players were sent to, counted there until its events show them: a node's line by its id,
// or (line 0, until answered) a line a node opens for them because every line was full, numbered
// by this gateway (`opening`).
struct line_key {
  scene_id scene = 0;
  std::uint32_t line = 0;
  std::string node;
  std::uint64_t opening = 0;
  friend auto operator<=>(const line_key&, const line_key&) = default;
};

using scenert::view_key;

// One line (or phase) as this gateway last heard it: who stands where, after which batch.
struct line_view {
  std::string node;
  line_handle line;
  std::uint64_t seq = 0;
  line_standing standing;
  bool waiting = false;                 // a batch was missed: the node's views are asked for
  std::vector<wire::event_batch> held;  // batches heard while waiting
};

struct pending_request {
  world_reply reply;
  player_id player = 0;
  world_request::kind what{};
  std::string node;
  clock::time_point deadline;
  player_id mate = 0;             // join_team: looked for on the other nodes when its node does not have it
  std::string journey_to;         // a journey: the node `node` hands the player over to
  bool farewell = false;          // a leave for a copy of a claimed player: it routes nothing
  line_key promise{};             // the line counted for this player until answered (scene 0: none)
  bool instance = false;          // it enters a private instance: the scene it stood in is its way home
  clock::time_point settle_by{};  // a journey asked about since its answer timed out: until when
  // An entry of a player standing nowhere yet (a login, a player placed again): sent to another
  // node if its node is declared dead before it answered; past its timeout, its node is asked
  // where the player stands (`settle_entry`).
  std::optional<world_request> again{};
  // A journey: its handing node's epoch when it was sent. An answer from another start of that node
  // (it died and came back) does not say where the player went: the journey is settled by asking.
  std::uint64_t epoch = 0;
};

// Where a player's requests go, and the scene it was last placed in (0: not heard). In a private
// instance (`instance`, entered through this gateway), `home` is the scene it came from.
struct stand {
  std::string node;
  scene_id scene = 0, instance = 0, home = 0;
};

// What a batch of answers leaves to do once m is let go.
struct answers_done {
  std::vector<std::pair<world_reply, world_result>> ready;
  std::vector<std::pair<world_request, world_reply>> resubmit;
  std::vector<std::pair<player_id, std::string>> kept;  // journeys given up: the player and its target
  std::vector<std::pair<std::string, orphan>> lost;     // left on a start declared dead meanwhile
};

// A player between two nodes: its requests wait until the node it goes to answered.
struct journey {
  std::vector<std::pair<world_request, world_reply>> held;
};

// A journey given up with its player kept where it stood: the nodes it went from and to.
struct given_up {
  std::string from, to;
  clock::time_point at;
};

// Claims, party records and the askings of journeys and team-mates run this many at once: a
// gateway taking over a dead one's clients claims them side by side.
constexpr unsigned askers = 4;

struct known_node {
  node_record record;
  std::uint32_t sent = 0;  // players sent to it since its load was read
};

}  // namespace scenert::cluster::detail

namespace scenert::cluster {

struct remote_world::impl : std::enable_shared_from_this<impl> {
  nats_link& link;
  kv_bucket nodes_bucket;
  remote_world_options opt;

  mutable std::mutex m;
  std::unordered_map<player_id, detail::stand> node_of;  // where each player's requests go
  std::map<detail::line_key, std::uint32_t> promised;    // players sent to each line, not heard there yet
  std::uint64_t openings = 0;                            // lines this gateway had opened (line_key::opening)
  // Players answered as placed on a line whose events have not shown them yet: their promise there.
  std::unordered_map<player_id, std::pair<detail::line_key, detail::clock::time_point>> unheard;
  std::unordered_map<std::uint64_t, detail::pending_request> pending;
  std::unordered_map<player_id, detail::journey> travelling;
  std::uint64_t next_ticket = 1;
  std::map<std::string, std::vector<wire::request_entry>> outbox;  // by node
  std::map<std::string, detail::known_node> nodes;                 // live ones
  // By node name, the newest start declared dead here: what it still publishes is not heard.
  std::map<std::string, std::uint64_t> buried;
  std::map<std::string, detail::clock::time_point> views_asked_at;
  std::set<std::string> unsynced;  // nodes whose views were asked for by resync_all, not given yet
  detail::clock::time_point nodes_read{}, beaten{};
  std::uint64_t dropped_seen = 0;  // the events' slow-consumer drops at the last poll (poll's thread)
  bool stopping = false;
  bool lingering = false;  // `linger` is armed: the outbox is gathering a batch, or one is going out

  std::mutex lines_m;
  std::map<detail::view_key, detail::line_view> lines;
  std::vector<player_id> entering;  // players heard entering lines, whose promises end (lines_m)
  // Players whose journey was given up, for a while: their target's line may show them entering and
  // leaving after the answer, and the front then hears where they stand still (lines_m).
  std::unordered_map<player_id, detail::given_up> gave_up;

  // The remote world's own threads, so that no front I/O thread, tick or library thread waits on
  // the server. `io` runs the request batches' timer (it never blocks) and the sessions bucket's
  // token writes, in order on the `keeper` strand (each a blocking round trip to the server: one at a
  // time, so the timer always has a thread). `asking` runs the rest that waits on the server
  // (claims, party records, where a player or a mate is), `askers` at once, each a blocking round
  // trip (or several) on its thread. Stopping runs what was queued first (see ~remote_world).
  detail::asio::thread_pool io{2}, asking{detail::askers};
  detail::asio::strand<detail::asio::thread_pool::executor_type> keeper{io.get_executor()};
  // Armed by the first request of a batch, it sends the batch request_linger later. Its calls are
  // made with `m` held; its handler touches it no more.
  detail::asio::steady_timer linger{io};

  std::unique_ptr<subscription> answers_sub, events_sub, views_sub, claimed_sub;

  std::atomic<std::uint64_t> request_batches{0}, requests{0}, answers{0}, timeouts{0}, no_node{0},
      event_batches{0}, gaps{0}, views_asked{0}, views_applied{0}, bad_messages{0}, nodes_lost{0},
      players_orphaned{0}, claims{0}, claims_refused{0}, claimed_elsewhere{0}, journeys{0},
      journeys_failed{0}, entries_to_room{0}, entries_to_new_line{0}, sent_again{0}, from_dead_starts{0},
      unplaced{0};

  impl(nats_link& l, kv_bucket b, remote_world_options o)
      : link(l), nodes_bucket(std::move(b)), opt(std::move(o)) {}

  void warn(std::string_view what) const {
    if (opt.warn) opt.warn(what);
  }

  void later(unique_function<void()> chore);

  // --- requests and answers, the live nodes (remote_world.cpp) ---
  bool serves(const std::string& node, scene_id scene) const;
  std::string least_loaded(scene_id scene = 0);
  void push(const std::string& node, std::uint64_t ticket, const world_request& q,
            const std::string& to = {});
  detail::pending_request& send(const std::string& node, const world_request& q, world_reply reply,
                                detail::line_key promise = {});
  void gather();
  void flush_requests();
  void on_answers(std::string_view data);
  void time_out(detail::clock::time_point now);
  void read_nodes(detail::clock::time_point now);
  void lose(const std::string& node);
  bool newer_start(const std::string& node, std::uint64_t epoch);
  // Records a start of `node` declared dead (m held).
  void bury(const std::string& node, std::uint64_t epoch) {
    auto& newest = buried[node];
    newest = std::max(newest, epoch);
  }
  // Whether `epoch` of `node` was declared dead here: a node stopped, declared dead and let run
  // again publishes its lines' events until it learns so, and they are not heard (takes m).
  bool from_dead_start(std::string_view node, std::uint64_t epoch);
  void follow(const detail::pending_request& r, const std::string& node,
              const world_result& result);  // m held
  void fail_over(const std::string& node);

  // --- where a request goes: the table's lines across the nodes (remote_lines.cpp) ---
  struct heard_line {
    std::string node;
    std::uint32_t line = 0, players = 0;
  };

  std::string route(const world_request& q);
  static scene_id entered(const world_request& q);
  bool shared(scene_id scene) const;
  scene_id by_policy(const world_request& q) const;
  bool private_instance(const world_request& q) const;
  scene_id home_of(player_id p);
  void placed(const detail::pending_request& r, const std::string& node, scene_id scene);
  std::vector<heard_line> heard_lines(scene_id scene);
  std::string place(player_id p, scene_id scene, const std::vector<heard_line>& heard,
                    detail::line_key& promise);
  void answered(player_id p, detail::line_key promise, const world_result& r, const std::string& node);
  void heard_entering();
  void unpromise(detail::line_key promise);
  std::string host_of(line_handle l);
  void submit(const world_request& q, world_reply reply);

  // --- journeys between nodes, party instances across nodes (remote_journeys.cpp) ---
  detail::pending_request& depart(player_id p, const std::string& from, const std::string& to,
                                  const world_request& q, world_reply reply, detail::line_key promise = {});
  bool travels(const world_request& q, const std::string& line_host, const std::string& placed_on,
               detail::line_key promise, world_reply& reply);
  [[nodiscard]] std::optional<orphan> arrive(const detail::pending_request& r, const std::string& at,
                                             bool moved, scene_id scene,
                                             std::vector<std::pair<world_request, world_reply>>& resubmit);
  void orphaned(const std::string& node, orphan lost);
  void journey_answered(detail::pending_request& r, const std::string& from, world_result result,
                        detail::answers_done& done);
  void release(player_id p, std::vector<std::pair<world_request, world_reply>>& resubmit);
  void to_party(const world_request& q, world_reply reply);
  cluster_result<std::optional<placement>> ask_where(const std::string& node, player_id p);
  void settle(std::uint64_t ticket, detail::pending_request r, detail::clock::time_point now);
  void settle_entry(std::uint64_t ticket, detail::pending_request r, detail::clock::time_point now);
  void find_mate(detail::pending_request r, std::string from, world_result not_found);
  void find_placed(detail::pending_request r, world_result already);
  void given_up(player_id p, const std::string& from, const std::string& to);
  void show_kept(player_id p);
  void after_leaving(std::span<const line_event> events);

  // --- resume tokens across gateways (remote_claims.cpp) ---
  void remember(const std::string& token, player_id player, const std::string& name);
  void forget(const std::string& token);
  result<claimed_player, world_errc> claim(const std::string& token);
  struct claim_round {
    std::optional<std::pair<std::string, placement>> found;
    std::vector<std::string> silent;  // nodes that did not answer in time: they may hold the player
  };
  claim_round claim_on_nodes(player_id player, const std::string& ask, const std::vector<std::string>& asked);
  std::optional<std::pair<std::string, placement>> find_claimed(player_id player, const std::string& ask);
  void on_claimed(std::string_view data);

  // --- line events and views (remote_views.cpp) ---
  void ask_views(const std::string& node);
  void retire(const detail::view_key& k, detail::line_view& v);
  void apply(detail::line_view& v, const wire::event_batch& b);
  void replace(detail::line_view& v, const wire::view_state& state);
  void on_events(std::string_view subject, std::string_view data);
  void on_frames(std::string_view data);
  void on_views(std::string_view data);
  void retry_waiting();
  void resync_all();
  bool resynced() const;
};

}  // namespace scenert::cluster
