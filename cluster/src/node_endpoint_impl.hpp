#pragma once
// node_endpoint's insides, one topic a file: the gateways and their requests and answers
// (node_gateways.cpp), the lines' views (node_views.cpp), claims (node_claims.cpp) and journeys
// between nodes (node_journeys.cpp). Threads: nats.c's delivery threads run the subscriptions, the
// lines' and the world's threads run on_line_events and the world's answers, and the endpoint's own
// executor (`io`, one thread) runs every timer: the answers' linger and a claim's settling.

#include <utility>  // before Asio (Boost 1.74 with g++ 12)

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/cluster/wire.hpp>
#include <scenert/scene/view_key.hpp>

#include "line_standing.hpp"

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace scenert::cluster {

namespace asio = boost::asio;
using clock = std::chrono::steady_clock;

// Answers wait this long for the rest of their world tick's answers, so a gateway gets one batch.
inline constexpr auto answer_linger = std::chrono::microseconds(200);
// A claimed player on its way somewhere is looked at again this often, this many times (a second).
inline constexpr auto settle_wait = std::chrono::milliseconds(20);
inline constexpr int settle_tries = 50;
// A hand-over to another node not answered within this is taken back (the player stays here). A
// gateway's answer timeout is longer, so it hears how the journey ended from this node.
inline constexpr auto handoff_timeout = std::chrono::milliseconds(1000);
// A player handed over to this node is remembered this long, for a late release from its node.
inline constexpr auto arrival_memory = std::chrono::seconds(10);
// A release is said again this often until its node confirms it, for as long as that node remembers
// the arrival: one said just as the server came back may reach a node not yet subscribed again.
inline constexpr auto release_again = std::chrono::milliseconds(250);

// Who stands on one line (or phase) of the current generation, and how many batches it published.
struct line_view {
  line_handle line;
  std::uint64_t seq = 0;
  line_standing standing;
};

// A gateway as this node hears it; a dead one's players wait for their clients to resume elsewhere.
struct gateway_state {
  clock::time_point heard;
  std::optional<clock::time_point> dead_since;
};

// A journey this node started: the player stands here until the node it goes to placed it.
struct handoff {
  player_id player = 0;
  std::shared_ptr<const std::string> gateway;
  std::uint64_t ticket = 0;
  std::string to;
  clock::time_point deadline;
};

// A player handed over to this node, by (the node it comes from, that node's id for it).
struct arrival_state {
  player_id player = 0;
  clock::time_point heard;
  bool answered = false, placed = false, released = false;
  bool new_here = false;  // its gateway was first noted by this arrival: forgotten if refused
};
using arrival_key = std::pair<std::string, std::uint64_t>;

// A release this node said, not yet confirmed by the node it was said to.
struct release_due {
  std::string to;
  std::string message;  // the encoded release
  clock::time_point again, until;
};

// A gateway's claim (or "where") being settled: answered once its player is no longer on its way.
struct claim_job {
  wire::claim claim;
  std::string reply;
  bool take = false;
  int tries = 0;
};

struct node_endpoint::impl : std::enable_shared_from_this<impl> {
  impl(nats_link& l, std::string n, std::uint64_t e, node_endpoint_options o)
      : link(l), node(std::move(n)), epoch(e), opt(o) {}

  nats_link& link;
  const std::string node;
  const std::uint64_t epoch;
  const node_endpoint_options opt;
  world_port* w = nullptr;
  player_locator where;

  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> io_work;
  std::thread io_thread;

  // The lines' views, split so that lines ticking on different workers rarely meet on a lock.
  struct shard {
    std::mutex m;
    std::unordered_map<view_key, line_view, view_key_hash> views;
  };
  std::array<shard, 16> shards;

  // Answers held for their linger, by gateway; the linger timer is armed by the first of a batch.
  std::mutex answers_m;
  std::unordered_map<std::string, std::vector<wire::answer_entry>> outbox;
  asio::steady_timer linger{io};

  // Which gateway holds each player (its requests come from there), and how each gateway is.
  std::mutex gateways_m;
  std::unordered_map<player_id, std::string> gateway_of;
  std::unordered_map<std::string, gateway_state> gateways;
  std::uint64_t link_ups = 0;  // the link's reconnects at the last poll

  // Journeys between nodes: the node a player leaves drives them, so a gateway that dies meanwhile
  // leaves the player in one place.
  std::mutex travel_m;
  std::uint64_t next_handoff = 1;
  std::unordered_map<std::uint64_t, handoff> handoffs;  // started here, by id
  std::unordered_set<player_id> handed;                 // placed elsewhere, their leave not yet applied
  std::map<arrival_key, arrival_state> arrivals;        // handed to this node
  std::map<std::uint64_t, release_due> releasing;       // said, not confirmed, by hand-over id

  std::vector<std::unique_ptr<subscription>> subs;

  std::atomic<std::uint64_t> request_batches{0}, requests{0}, bad_batches{0}, answer_batches{0}, answers{0},
      event_batches{0}, frame_batches{0}, views_asked{0}, publish_failures{0}, releases_again{0}, claims{0},
      gateways_lost{0}, players_abandoned{0}, handoffs_out{0}, handoffs_in{0}, handoffs_failed{0};

  cluster_result<void> subscribe_all();
  void publish(const std::string& subject, std::string_view bytes);

  // node_gateways.cpp
  void heard(const std::string& gateway, clock::time_point now);  // gateways_m held
  void on_beat(std::string_view subject);
  void poll(clock::time_point now);
  void on_requests(std::string_view data);
  void answer(const std::string& gateway, std::uint64_t ticket, world_result r);
  void flush_answers();

  // node_views.cpp
  void line_events(line_handle line, phase_id phase, std::span<const line_event> events);
  void line_frames(line_handle line, std::span<const module_frame> frames);
  void on_views(std::string_view reply);

  // node_claims.cpp
  void on_claim(std::string_view data, std::string_view reply, bool take);
  void settle_transit(std::shared_ptr<claim_job> job);
  void settle_place(std::shared_ptr<claim_job> job, location at);
  void ask_where(std::shared_ptr<claim_job> job);
  void answer_claim(const claim_job& job, location at);
  void after(clock::duration wait, unique_function<void()> then);

  // node_journeys.cpp
  void hand_over(std::shared_ptr<const std::string> gateway, const wire::request_entry& e);
  void on_arrived(std::string_view data);
  void give_up_handoffs(clock::time_point now);
  std::vector<std::pair<std::uint64_t, handoff>> take_late_handoffs(
      clock::time_point now, std::vector<std::pair<std::string, std::string>>& say);  // travel_m held
  void on_arrive(std::string_view data, std::string_view reply);
  void placed_here(const arrival_key& key, player_id p, const std::string& reply, world_result r);
  void on_release(std::string_view data, std::string_view reply);
  void on_released(std::string_view data);
  void let_go_here(player_id p);
  bool in_transit(player_id p);
  bool handed_over(player_id p);
};

}  // namespace scenert::cluster
