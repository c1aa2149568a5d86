#include <scenert/cluster/node_lease.hpp>
#include <scenert/cluster/remote_world.hpp>
#include <scenert/cluster/wire.hpp>
#include "records.hpp"
#include "subjects.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

namespace scenert::cluster {

namespace {

using clock = std::chrono::steady_clock;

// Requests wait this long for the rest of their burst, so a node gets one batch.
constexpr auto request_linger = std::chrono::microseconds(200);
constexpr auto nodes_period = std::chrono::seconds(1);
constexpr auto beat_period = std::chrono::seconds(1);  // the nodes keep this gateway's players meanwhile
// A node is asked for its views at most this often; a line still waiting after an answer (the node
// looked before the gap) is asked for again by the next poll after that.
constexpr auto views_retry = std::chrono::milliseconds(250);
// Batches held for a line waiting for its views; past this the wait starts over with a new ask.
constexpr std::size_t max_held = 4096;
// How long a node may take to say whether it hosts a claimed player (one on its way somewhere is
// answered once it got there: up to a second).
constexpr auto claim_timeout = std::chrono::milliseconds(2000);
// A player placed on a line counts there until the line's events show it (a tick or so later), or
// this long at most (its entry may have come before the answer).
constexpr auto heard_within = std::chrono::seconds(1);
// A journey whose nodes do not answer (the link or the server is away) is asked about again for
// this long before its route is left where it was; its player's requests wait meanwhile.
constexpr auto settle_within = std::chrono::seconds(30);

std::string token_key(std::string_view token) { return fmt::format("token.{}", token); }
std::string party_key(party_id owner, scene_id scene) { return fmt::format("party.{}.{}", owner, scene); }

// A resume token is 32 hex digits (the front's); anything else is nobody's.
bool valid_token(std::string_view t) {
  return t.size() == 32 && std::all_of(t.begin(), t.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

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

struct view_key {
  scene_id scene;
  std::uint32_t line;
  phase_id phase;
  friend auto operator<=>(const view_key&, const view_key&) = default;
};

std::uint64_t entity_of(const line_event& e) { return e.player ^ (e.monster ? (std::uint64_t{1} << 63) : 0); }

// One line (or phase) as this gateway last heard it: who stands where, after which batch.
struct line_view {
  std::string node;
  line_handle line;
  std::uint64_t seq = 0;
  std::unordered_map<std::uint64_t, line_event> standing;
  bool waiting = false;                 // a batch was missed: the node's views are asked for
  std::vector<wire::event_batch> held;  // batches heard while waiting
  std::uint32_t players = 0;            // of those standing, players (not monsters)
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
};

// Where a player's requests go, and the scene it was last placed in (0: not heard). In a private
// instance (`instance`, entered through this gateway), `home` is the scene it came from.
struct stand {
  std::string node;
  scene_id scene = 0, instance = 0, home = 0;
};

// A player between two nodes: its requests wait until the node it goes to answered.
struct journey {
  std::vector<std::pair<world_request, world_reply>> held;
};

// Work that waits on the server (round trips, often more than one), done on threads of its own so
// that no front I/O thread or library thread waits for it. Stopping runs what was queued first.
class chore_queue {
 public:
  void start(unsigned threads) {
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  void push(unique_function<void()> chore) {
    std::lock_guard lock(m_);
    chores_.push_back(std::move(chore));
    cv_.notify_one();
  }
  void stop() {
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void work() {
    std::unique_lock lock(m_);
    for (;;) {
      cv_.wait(lock, [this] { return stopping_ || !chores_.empty(); });
      if (chores_.empty()) return;
      auto chore = std::move(chores_.front());
      chores_.pop_front();
      lock.unlock();
      chore();
      lock.lock();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<unique_function<void()>> chores_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// Claims, party records and the askings of journeys and team-mates run this many at once: a
// gateway taking over a dead one's clients claims them side by side.
constexpr unsigned askers = 4;

struct known_node {
  node_record record;
  std::uint32_t sent = 0;  // players sent to it since its load was read
};

}  // namespace

struct remote_world::impl : std::enable_shared_from_this<impl> {
  nats_link& link;
  kv_bucket nodes_bucket;
  remote_world_options opt;

  mutable std::mutex m;
  std::condition_variable cv;
  std::unordered_map<player_id, stand> node_of;  // where each player's requests go
  std::map<line_key, std::uint32_t> promised;    // players sent to each line, not heard there yet
  std::uint64_t openings = 0;                    // lines this gateway had opened (line_key::opening)
  // Players answered as placed on a line whose events have not shown them yet: their promise there.
  std::unordered_map<player_id, std::pair<line_key, clock::time_point>> unheard;
  std::unordered_map<std::uint64_t, pending_request> pending;
  std::unordered_map<player_id, journey> travelling;
  std::uint64_t next_ticket = 1;
  std::map<std::string, std::vector<wire::request_entry>> outbox;  // by node
  std::map<std::string, known_node> nodes;                         // live ones
  std::map<std::string, clock::time_point> views_asked_at;
  std::set<std::string> unsynced;  // nodes whose views were asked for by resync_all, not given yet
  clock::time_point nodes_read{}, beaten{};
  std::uint64_t dropped_seen = 0;  // the events' slow-consumer drops at the last poll (poll's thread)
  bool stopping = false;
  std::thread flusher;

  std::mutex lines_m;
  std::map<view_key, line_view> lines;
  std::vector<player_id> entering;  // players heard entering lines, whose promises end (lines_m)

  // The sessions bucket's token writes, in order on one thread; the rest that waits on the server
  // (claims, party records, where a player or a mate is) on `askers` threads.
  chore_queue keeper, asking;

  std::unique_ptr<subscription> answers_sub, events_sub, views_sub, claimed_sub;

  std::atomic<std::uint64_t> request_batches{0}, requests{0}, answers{0}, timeouts{0}, no_node{0},
      event_batches{0}, gaps{0}, views_asked{0}, views_applied{0}, bad_messages{0}, nodes_lost{0},
      players_orphaned{0}, claims{0}, claims_refused{0}, claimed_elsewhere{0}, journeys{0},
      journeys_failed{0}, entries_to_room{0}, entries_to_new_line{0};

  impl(nats_link& l, kv_bucket b, remote_world_options o)
      : link(l), nodes_bucket(std::move(b)), opt(std::move(o)) {}

  void warn(std::string_view what) const {
    if (opt.warn) opt.warn(what);
  }

  // --- requests and answers ---

  // The node a player's request goes to (m held): its own, its mate's, or the least loaded of those
  // hosting the scene it enters.
  std::string route(const world_request& q) {
    if (auto at = node_of.find(q.player); at != node_of.end()) return at->second.node;
    if (q.what == world_request::kind::join_team)
      if (auto at = node_of.find(q.mate); at != node_of.end()) return at->second.node;
    return least_loaded(entered(q));
  }

  // The scene a request puts its player in (an entry, a scene change, an instance); 0 for others.
  static scene_id entered(const world_request& q) {
    using k = world_request::kind;
    return q.what == k::enter || q.what == k::transfer || q.what == k::enter_instance ? q.scene : 0;
  }

  // Whether a live node hosts a scene (`scenert run --hosts`; 0: any scene) (m held).
  bool serves(const std::string& node, scene_id scene) const {
    auto n = nodes.find(node);
    return n != nodes.end() && (scene == 0 || n->second.record.hosts(scene));
  }

  // The live node hosting `scene` (0: any) with the fewest players, counting those sent to it since
  // its load was read (m held).
  std::string least_loaded(scene_id scene = 0) {
    known_node* best = nullptr;
    for (auto& [name, n] : nodes)
      if ((scene == 0 || n.record.hosts(scene)) &&
          (best == nullptr || n.record.load + n.sent < best->record.load + best->sent))
        best = &n;
    if (best == nullptr) return {};
    ++best->sent;
    return best->record.name;
  }

  // --- the table's lines across the nodes ---

  struct heard_line {
    std::string node;
    std::uint32_t line = 0, players = 0;
  };

  // Whether anyone may share the scene's lines (its policy places players): not a phase, not a
  // dungeon of private instances.
  bool shared(scene_id scene) const {
    const scene_def* d = opt.table ? opt.table->find_scene(scene) : nullptr;
    return d != nullptr && d->kind != scene_kind::space && d->instances == instance_mode::shared;
  }

  // The scene a request puts its player in by the scene's policy, an entry or a scene change into a
  // shared scene; 0 for any other request.
  scene_id by_policy(const world_request& q) const {
    using k = world_request::kind;
    return (q.what == k::enter || q.what == k::transfer) && shared(q.scene) ? q.scene : 0;
  }

  // Whether a request enters a private instance (a party's, or a solo player's own), as the world
  // decides by the scene's `instances`: the scene left is then the way home.
  bool private_instance(const world_request& q) const {
    using k = world_request::kind;
    const scene_def* d = opt.table ? opt.table->find_scene(q.scene) : nullptr;
    if (d == nullptr) return false;
    if (q.what == k::enter || q.what == k::transfer) return d->instances == instance_mode::party;
    return q.what == k::enter_instance && d->instances != instance_mode::shared &&
           (q.party != 0 || d->instances == instance_mode::party);
  }

  // The way home of a player leaving its party, while it stands in the instance it entered here
  // and that way home is a shared scene; else 0 (its node decides, as in one process). From nowhere,
  // the world's way home is the table's first town: named here when the instance's node does not
  // host it.
  scene_id home_of(player_id p) {
    std::lock_guard lock(m);
    auto at = node_of.find(p);
    if (at == node_of.end() || at->second.instance == 0 || at->second.instance != at->second.scene) return 0;
    if (at->second.home != 0) return shared(at->second.home) ? at->second.home : 0;
    const auto town = std::find_if(opt.table->scenes.begin(), opt.table->scenes.end(),
                                   [](const scene_def& s) { return s.kind == scene_kind::town; });
    return town != opt.table->scenes.end() && shared(town->id) && !serves(at->second.node, town->id)
               ? town->id
               : 0;
  }

  // Notes where a request placed its player (m held): its node and scene, and its way home.
  void placed(const pending_request& r, const std::string& node, scene_id scene) {
    auto& here = node_of[r.player];
    here.node = node;
    if (r.instance && scene != 0) {
      if (here.scene != 0 && here.scene != scene) here.home = here.scene;  // another instance: kept
      here.instance = scene;
    } else if (r.what == world_request::kind::leave_party) {
      here.instance = here.home = 0;
    }
    if (scene != 0) here.scene = scene;
  }

  // A scene's lines as heard on their events, players summed over each line's phases (before m).
  std::vector<heard_line> heard_lines(scene_id scene) {
    std::vector<heard_line> out;
    std::lock_guard lock(lines_m);
    for (auto it = lines.lower_bound(view_key{scene, 0, 0}); it != lines.end() && it->first.scene == scene;
         ++it) {
      if (!out.empty() && out.back().line == it->first.line)
        out.back().players += it->second.players;
      else
        out.push_back({it->second.node, it->first.line, it->second.players});
    }
    return out;
  }

  // Where an entry or a scene change goes (m held): the node of the line the scene's policy picks
  // among every live node's with room, counted in `promise` until heard there; when all are full,
  // where a line opens. A line heard empty is passed over: it may have closed (its node knows). A line
  // opening for players not answered yet counts as a line of theirs (id 0), so that a burst into a
  // full scene fills the line it opens before another node opens one.
  std::string place(player_id p, scene_id scene, const std::vector<heard_line>& heard, line_key& promise) {
    const scene_def& def = *opt.table->find_scene(scene);
    const auto own = node_of.find(p);
    const std::string own_node = own != node_of.end() ? own->second.node : std::string{};
    std::vector<line_load> loads;
    std::vector<const line_key*> keys;  // each load's promise (null: none yet)
    for (const auto& h : heard) {
      const auto sent = promised.find(line_key{scene, h.line, h.node, 0});
      const std::uint32_t players = h.players + (sent != promised.end() ? sent->second : 0);
      if (players == 0 || !nodes.contains(h.node)) continue;
      loads.push_back({h.node, h.line, players});
      keys.push_back(sent != promised.end() ? &sent->first : nullptr);
    }
    // Lines opening, and lines whose events have not come yet (`heard` is by line id).
    for (auto it = promised.lower_bound(line_key{scene, 0, {}, 0});
         it != promised.end() && it->first.scene == scene; ++it) {
      const auto& [key, players] = *it;
      auto h = std::lower_bound(heard.begin(), heard.end(), key.line,
                                [](const heard_line& l, std::uint32_t id) { return l.line < id; });
      const bool counted = key.line != 0 && h != heard.end() && h->line == key.line && h->node == key.node;
      if (counted || !nodes.contains(key.node)) continue;
      loads.push_back({key.node, key.line, players});
      keys.push_back(&key);
    }
    std::string node;
    if (auto i = choose_line(def.policy, def.capacity, loads, own_node)) {
      entries_to_room.fetch_add(1, std::memory_order_relaxed);
      node = std::string(loads[*i].node);
      promise = keys[*i] != nullptr ? *keys[*i] : line_key{scene, loads[*i].line, node, 0};
    } else {
      entries_to_new_line.fetch_add(1, std::memory_order_relaxed);
      node = opt.open_lines_on == line_opening::player_node && serves(own_node, scene) ? own_node
                                                                                       : least_loaded(scene);
      promise = {scene, 0, node, ++openings};
    }
    if (node.empty())
      promise = {};
    else
      ++promised[promise];
    return node;
  }

  // A request answered (m held): a player placed counts on the line it got until the line's events
  // show it; otherwise its line no longer counts it.
  void answered(player_id p, line_key promise, const world_result& r, const std::string& node) {
    unpromise(promise);
    if (promise.scene == 0 || !r || r->line.scene != promise.scene) return;
    line_key on{promise.scene, r->line.line, node, 0};
    ++promised[on];
    auto& was = unheard[p];
    unpromise(std::exchange(was, {std::move(on), clock::now() + heard_within}).first);
  }

  // Players heard entering lines (lines_m held; takes m): they count there by their events now.
  void heard_entering() {
    if (entering.empty()) return;
    std::lock_guard lock(m);
    for (player_id p : entering)
      if (auto u = unheard.find(p); u != unheard.end()) {
        unpromise(u->second.first);
        unheard.erase(u);
      }
    entering.clear();
  }

  // A request given up, or its line heard (m held): its line no longer counts it.
  void unpromise(line_key promise) {
    if (promise.scene == 0) return;
    if (auto p = promised.find(promise); p != promised.end() && --p->second == 0) promised.erase(p);
  }

  // Queues a request for a node (m held); `to`: a journey there.
  void push(const std::string& node, std::uint64_t ticket, const world_request& q,
            const std::string& to = {}) {
    auto& out = outbox[node];
    out.push_back({ticket, q, to});
    if (out.size() == 1) cv.notify_one();
  }

  // Sends a request to a node, its answer awaited until the timeout (m held).
  pending_request& send(const std::string& node, const world_request& q, world_reply reply,
                        line_key promise = {}) {
    const std::uint64_t ticket = next_ticket++;
    pending.emplace(ticket, pending_request{std::move(reply),
                                            q.player,
                                            q.what,
                                            node,
                                            clock::now() + opt.answer_timeout,
                                            q.mate,
                                            {},
                                            false,
                                            promise});
    push(node, ticket, q);
    return pending.at(ticket);
  }

  // The node that hosts a line, as its events said (0 generation: the line open now under that id).
  std::string host_of(line_handle l) {
    std::lock_guard lock(lines_m);
    auto v = lines.find(view_key{l.scene, l.line, 0});
    if (v == lines.end() || (l.generation != 0 && v->second.line.generation != l.generation)) return {};
    return v->second.node;
  }

  // A journey to another node (m held): the node the player stands on hands it over, and answers
  // once the target placed it (the player left) or refused it (it stays). The route switches on
  // that answer; the requests held meanwhile follow it. A gateway dying meanwhile changes nothing.
  pending_request& depart(player_id p, const std::string& from, const std::string& to, const world_request& q,
                          world_reply reply, line_key promise = {}) {
    travelling[p];
    const std::uint64_t ticket = next_ticket++;
    pending.emplace(ticket, pending_request{std::move(reply), p, q.what, from,
                                            clock::now() + opt.answer_timeout, 0, to, false, promise});
    push(from, ticket, q, to);
    return pending.at(ticket);
  }

  // Whether a request takes its player to another node (m held): a team-mate or a line hosted there,
  // or (`placed_on`) the node of the line a scene change or a way home goes to.
  bool travels(const world_request& q, const std::string& line_host, const std::string& placed_on,
               line_key promise, world_reply& reply) {
    auto from = node_of.find(q.player);
    if (!opt.journeys || from == node_of.end()) return false;
    std::string to;
    world_request there = q;
    if (q.what == world_request::kind::join_team) {
      if (auto mate = node_of.find(q.mate); mate != node_of.end()) to = mate->second.node;
    } else if (q.what == world_request::kind::transfer_line) {
      to = line_host;
      there = world_request::enter_line(q.player, q.line);  // nowhere there yet: it enters
    } else if (q.what == world_request::kind::transfer) {
      to = placed_on;
      there = world_request::enter(q.player, q.scene);
    } else if (q.what == world_request::kind::leave_party) {
      to = placed_on;  // its ticket goes with its leave from the instance's node
      there = world_request::enter(q.player, promise.scene);
    } else if (q.what == world_request::kind::enter_instance && !serves(from->second.node, q.scene)) {
      to = least_loaded(q.scene);  // its node does not host the dungeon
      there = world_request::enter_instance_from(q.player, q.scene, q.party, from->second.scene);
    }
    if (q.what == world_request::kind::transfer && to.empty() && !serves(from->second.node, q.scene)) {
      to = least_loaded(q.scene);  // its node does not host the scene
      there = world_request::enter(q.player, q.scene);
    }
    if (to.empty() || to == from->second.node || !nodes.contains(to)) return false;
    depart(q.player, from->second.node, to, there, std::move(reply), promise).instance = private_instance(q);
    return true;
  }

  void submit(const world_request& q, world_reply reply) {
    const std::string line_host =
        q.what == world_request::kind::transfer_line ? host_of(q.line) : std::string{};
    const scene_id home = q.what == world_request::kind::leave_party ? home_of(q.player) : 0;
    const scene_id target = home != 0 ? home : by_policy(q);
    const auto heard = target != 0 ? heard_lines(target) : std::vector<heard_line>{};
    std::unique_lock lock(m);
    if (auto t = travelling.find(q.player); t != travelling.end()) {
      t->second.held.emplace_back(q, std::move(reply));
      return;
    }
    if (q.what == world_request::kind::enter_instance && q.party != 0 && opt.journeys && opt.sessions) {
      travelling[q.player];  // its next requests wait until its party's node is known
      lock.unlock();
      return later([this, q, reply = std::move(reply)]() mutable { to_party(q, std::move(reply)); });
    }
    // An entry by a player nowhere yet, a scene change to another scene, or a way home out of a
    // party's instance goes by the lines.
    using k = world_request::kind;
    const auto at = node_of.find(q.player);
    const bool by_lines =
        target != 0 && (q.what == k::enter ? at == node_of.end()
                        : q.what == k::leave_party
                            ? at != node_of.end() && at->second.instance == at->second.scene
                            : at != node_of.end() && at->second.scene != 0 && at->second.scene != target);
    line_key promise{};
    const std::string placed_on = by_lines ? place(q.player, target, heard, promise) : std::string{};
    if (travels(q, line_host, placed_on, promise, reply)) return;
    std::string node;
    if (!placed_on.empty() && (at == node_of.end() || placed_on == at->second.node)) {
      node = placed_on;
    } else {  // its own node chooses among its lines after all
      unpromise(std::exchange(promise, {}));
      node = route(q);
    }
    if (node.empty()) {
      lock.unlock();
      no_node.fetch_add(1, std::memory_order_relaxed);
      if (reply)
        reply(fail(world_errc::node_unavailable,
                   fmt::format("player {}: no live scene node in the cluster", q.player)));
      return;
    }
    send(node, q, std::move(reply), promise).instance = private_instance(q);
  }

  // A journey's end (m held): `at` is where the player stands now (empty: nowhere known), in
  // `scene` (0: where it was); the requests held meanwhile go (to `resubmit`) there.
  void arrive(const pending_request& r, const std::string& at, bool moved, scene_id scene,
              std::vector<std::pair<world_request, world_reply>>& resubmit) {
    release(r.player, resubmit);
    (moved ? journeys : journeys_failed).fetch_add(1, std::memory_order_relaxed);
    if (at.empty()) return (void)node_of.erase(r.player);
    if (moved) return placed(r, at, scene);
    node_of[r.player].node = at;
  }

  // Ends a player's hold (m held): the requests it made meanwhile go to `resubmit`.
  void release(player_id p, std::vector<std::pair<world_request, world_reply>>& resubmit) {
    auto t = travelling.find(p);
    if (t == travelling.end()) return;
    for (auto& h : t->second.held) resubmit.push_back(std::move(h));
    travelling.erase(t);
  }

  // --- party instances across nodes ---

  // A party's instance of a scene lives on one node, named in the sessions bucket before anyone
  // enters it: the first member claims it for the node it stands on (compare-and-set; a record of a
  // dead node is taken over), the others travel there from wherever they stand. So two members
  // entering at once through two nodes never open two instances. Its other requests wait meanwhile.
  void to_party(const world_request& q, world_reply reply) {
    const std::string key = party_key(q.party, q.scene);
    std::string there;
    for (int i = 0; i < 4 && there.empty(); ++i) {
      auto got = opt.sessions->get(key);
      std::optional<detail::party_record> rec;
      if (got)
        if (auto r = detail::decode_party(key, got->value)) rec = std::move(r).value();
      std::string mine;
      {
        std::lock_guard lock(m);
        if (rec && serves(rec->node, q.scene)) {
          there = rec->node;
          break;
        }
        const auto from = node_of.find(q.player);
        mine = from != node_of.end() && serves(from->second.node, q.scene) ? from->second.node
                                                                           : least_loaded(q.scene);
      }
      if (mine.empty()) break;
      const std::string claim = detail::encode(detail::party_record{mine});
      if (got ? static_cast<bool>(opt.sessions->update(key, claim, got->revision))
              : got.code() == cluster_errc::not_found && static_cast<bool>(opt.sessions->create(key, claim)))
        there = mine;
      else if (got.code() != cluster_errc::not_found && !got)
        break;  // the store is away: its own node places it, as without a cluster
    }
    std::vector<std::pair<world_request, world_reply>> resubmit;
    {
      std::lock_guard lock(m);
      const auto from = node_of.find(q.player);
      if (!there.empty() && from != node_of.end() && from->second.node != there && nodes.contains(there)) {
        const auto way_home =
            world_request::enter_instance_from(q.player, q.scene, q.party, from->second.scene);
        depart(q.player, from->second.node, there, way_home, std::move(reply)).instance = private_instance(q);
        return;
      }
      const std::string node = from != node_of.end() ? from->second.node : !there.empty() ? there : route(q);
      if (!node.empty()) {
        send(node, q, std::move(reply)).instance = private_instance(q);
      } else {
        no_node.fetch_add(1, std::memory_order_relaxed);
      }
      release(q.player, resubmit);
    }
    if (reply)
      reply(fail(world_errc::node_unavailable,
                 fmt::format("player {}: no live scene node in the cluster", q.player)));
    for (auto& [held, r] : resubmit) submit(held, std::move(r));
  }

  // What a node says of a player asked where it stands (a node handing it over answers once that
  // ended): its placement, "not here" (nullopt), or nothing: `unavailable` (the link or the node away).
  cluster_result<std::optional<placement>> ask_where(const std::string& node, player_id p) {
    auto answer =
        link.request(subjects::where(node), wire::encode(wire::claim{p, opt.gateway}), claim_timeout);
    if (!answer) return answer.error();
    auto a = wire::decode_claim_answer(*answer);
    if (!a) return fail(cluster_errc::unavailable, fmt::format("node {}: {}", node, a.error().message));
    if (!a->result) return std::optional<placement>{};
    return std::optional<placement>{*a->result};
  }

  // A journey whose answer did not come in time (the handing node died, or the link dropped it):
  // the handing node says whether the player is still there, else the target whether it got it.
  // While a live node of the two says nothing (the server restarting), the journey waits again
  // under its ticket, so the late answer settles it as well; the player's requests wait with it.
  // Found nowhere with its node gone, the player is handed to the front to be placed again.
  void settle(std::uint64_t ticket, pending_request r, clock::time_point now) {
    if (r.settle_by == clock::time_point{}) {
      timeouts.fetch_add(1, std::memory_order_relaxed);
      r.settle_by = now + settle_within;
    }
    world_result result =
        fail(world_errc::node_unavailable, fmt::format("player {}: node {} did not answer within {} ms",
                                                       r.player, r.node, opt.answer_timeout.count()));
    std::string at;
    bool moved = false, silent = false;
    auto live = [this](const std::string& node) {
      std::lock_guard lock(m);
      return nodes.contains(node);
    };
    const auto source = ask_where(r.node, r.player);
    if (source && *source) {
      at = r.node;
    } else if (const auto target = ask_where(r.journey_to, r.player); target && *target) {
      at = r.journey_to;
      moved = true;
      result = **target;
    } else {
      silent = (!source && live(r.node)) || (!target && live(r.journey_to));
      if (silent && now >= r.settle_by && live(r.node)) at = r.node;  // asked long enough: as it was
    }
    std::vector<std::pair<world_request, world_reply>> resubmit;
    bool lost = false;
    {
      std::lock_guard lock(m);
      if (silent && now < r.settle_by && !stopping) {
        r.deadline = now + opt.answer_timeout;
        pending.emplace(ticket, std::move(r));
        return;
      }
      arrive(r, at, moved, moved ? result->line.scene : 0, resubmit);
      lost = at.empty() && !nodes.contains(r.node);
    }
    if (r.reply) r.reply(std::move(result));
    if (lost) {
      players_orphaned.fetch_add(1, std::memory_order_relaxed);
      if (opt.on_node_lost) opt.on_node_lost(r.node, {orphan{r.player, 0, std::nullopt}});
    }
    for (auto& [q, reply] : resubmit) submit(q, std::move(reply));
  }

  // A team-mate its node does not have may stand on another node: asked of each, then travelled to.
  void find_mate(pending_request r, std::string from, world_result not_found) {
    const std::string ask = wire::encode(wire::claim{r.mate, opt.gateway});
    std::vector<std::string> others;
    {
      std::lock_guard lock(m);
      for (const auto& [name, n] : nodes)
        if (name != from) others.push_back(name);
    }
    for (const auto& node : others) {
      auto answer = link.request(subjects::where(node), ask, claim_timeout);
      if (!answer) continue;
      auto a = wire::decode_claim_answer(*answer);
      if (!a || !a->result) continue;
      std::unique_lock lock(m);
      auto at = node_of.find(r.player);
      if (at == node_of.end() || at->second.node != from || travelling.contains(r.player) ||
          !nodes.contains(node))
        break;  // it moved meanwhile: the answer stands
      depart(r.player, from, node, world_request::join_team(r.player, r.mate), std::move(r.reply));
      return;
    }
    if (r.reply) r.reply(std::move(not_found));
  }

  void flush_requests() {
    std::unique_lock lock(m);
    for (;;) {
      cv.wait(lock, [this] { return stopping || !outbox.empty(); });
      if (outbox.empty()) return;
      lock.unlock();
      std::this_thread::sleep_for(request_linger);
      lock.lock();
      auto batch = std::exchange(outbox, {});
      lock.unlock();
      for (auto& [node, entries] : batch) {
        request_batches.fetch_add(1, std::memory_order_relaxed);
        requests.fetch_add(entries.size(), std::memory_order_relaxed);
        // A failed publish is answered by the timeout: the node may have heard it after all.
        (void)link.publish(subjects::requests(node),
                           wire::encode(wire::request_batch{opt.gateway, std::move(entries)}));
      }
      lock.lock();
    }
  }

  void on_answers(std::string_view data) {
    auto batch = wire::decode_answer_batch(data);
    if (!batch) {
      bad_messages.fetch_add(1, std::memory_order_relaxed);
      return warn(fmt::format("gateway {}: {}", opt.gateway, batch.error().message));
    }
    std::vector<std::pair<world_reply, world_result>> ready;
    std::vector<std::pair<world_request, world_reply>> resubmit;
    {
      std::lock_guard lock(m);
      for (auto& a : batch->answers) {
        auto p = pending.find(a.ticket);
        if (p == pending.end()) continue;  // timed out already
        answered(p->second.player, std::exchange(p->second.promise, {}), a.result,
                 p->second.journey_to.empty() ? batch->node : p->second.journey_to);
        if (p->second.farewell) {
          pending.erase(p);
          continue;
        }
        if (!p->second.journey_to.empty()) {  // the handing node's answer: moved, or stayed
          const bool moved = a.result.has_value();
          arrive(p->second, moved ? p->second.journey_to : batch->node, moved,
                 moved ? a.result->line.scene : 0, resubmit);
          ready.emplace_back(std::move(p->second.reply), std::move(a.result));
          pending.erase(p);
          continue;
        }
        if (opt.journeys && p->second.what == world_request::kind::join_team && !a.result &&
            a.result.code() == world_errc::teammate_not_found && node_of.contains(p->second.player)) {
          later([this, r = std::move(p->second), from = batch->node, e = std::move(a.result)]() mutable {
            find_mate(std::move(r), std::move(from), std::move(e));
          });
          pending.erase(p);
          continue;
        }
        // An answer moves the route only while the route is where the request went: a move answered
        // by the node a player has just travelled from says nothing of where it stands now.
        const auto route_now = node_of.find(p->second.player);
        if (route_now == node_of.end() || route_now->second.node == batch->node) {
          const bool landed = a.result.has_value() && p->second.what != world_request::kind::leave;
          if (landed)
            placed(p->second, batch->node, a.result->line.scene);
          else if (p->second.what == world_request::kind::leave ||
                   a.result.code() == world_errc::not_in_scene)
            node_of.erase(p->second.player);
        }
        ready.emplace_back(std::move(p->second.reply), std::move(a.result));
        pending.erase(p);
      }
    }
    answers.fetch_add(ready.size(), std::memory_order_relaxed);
    for (auto& [reply, result] : ready)
      if (reply) reply(std::move(result));
    for (auto& [q, reply] : resubmit) submit(q, std::move(reply));
  }

  void time_out(clock::time_point now) {
    std::vector<std::pair<world_reply, world_result>> ready;
    std::vector<std::pair<world_request, world_reply>> resubmit;
    {
      std::lock_guard lock(m);
      for (auto u = unheard.begin(); u != unheard.end();) {  // placed, but never heard entering
        if (u->second.second > now) {
          ++u;
          continue;
        }
        unpromise(u->second.first);
        u = unheard.erase(u);
      }
      for (auto p = pending.begin(); p != pending.end();) {
        if (p->second.deadline > now) {
          ++p;
          continue;
        }
        unpromise(std::exchange(p->second.promise, {}));
        if (p->second.farewell && nodes.contains(p->second.node)) {  // said again until the node heard it
          p->second.deadline = now + opt.answer_timeout;
          push(p->second.node, p->first, world_request::leave(p->second.player));
          ++p;
          continue;
        }
        if (!p->second.journey_to.empty()) {  // moved or not? The nodes are asked; its requests wait
          later([this, ticket = p->first, r = std::move(p->second), now]() mutable {
            settle(ticket, std::move(r), now);
          });
          p = pending.erase(p);
          continue;
        }
        ready.emplace_back(std::move(p->second.reply),
                           fail(world_errc::node_unavailable,
                                fmt::format("player {}: node {} did not answer within {} ms",
                                            p->second.player, p->second.node, opt.answer_timeout.count())));
        p = pending.erase(p);
      }
    }
    timeouts.fetch_add(ready.size(), std::memory_order_relaxed);
    for (auto& [reply, result] : ready)
      if (reply) reply(std::move(result));
    for (auto& [q, reply] : resubmit) submit(q, std::move(reply));
  }

  void read_nodes(clock::time_point now) {
    auto all = list_nodes(nodes_bucket);
    if (!all) return warn(fmt::format("gateway {}: {}", opt.gateway, all.error().message));
    std::vector<std::string> lost;
    {
      std::lock_guard lock(m);
      nodes_read = now;
      std::map<std::string, known_node> live;
      for (auto& e : *all) {
        if (e.record.dead) continue;
        std::string name = e.record.name;
        live.emplace(std::move(name), known_node{std::move(e.record), 0});
      }
      for (const auto& [name, n] : nodes)
        if (!live.contains(name)) lost.push_back(name);
      nodes = std::move(live);
    }
    for (const auto& name : lost) lose(name);
  }

  // A node declared dead: its lines leave the front's views, its players are handed back to the
  // front to be placed again.
  void lose(const std::string& node) {
    std::unordered_map<player_id, orphan> orphans;
    {
      std::lock_guard lock(m);
      for (auto it = node_of.begin(); it != node_of.end();) {
        // A player on a journey is found by its journey's end (the target may have it).
        if (it->second.node != node || travelling.contains(it->first)) {
          ++it;
          continue;
        }
        orphans.emplace(it->first, orphan{it->first, it->second.scene, std::nullopt});
        it = node_of.erase(it);
      }
    }
    {
      std::lock_guard lock(lines_m);
      for (auto it = lines.begin(); it != lines.end();) {
        line_view& v = it->second;
        if (v.node != node) {
          ++it;
          continue;
        }
        std::vector<line_event> gone;
        for (const auto& [id, e] : v.standing) {
          gone.push_back({line_event::kind::left, e.player, e.at, e.monster});
          if (auto o = orphans.find(e.player); !e.monster && o != orphans.end())
            o->second = orphan{e.player, v.line.scene, e.at};
        }
        if (!gone.empty() && opt.on_line_events) opt.on_line_events(v.line, it->first.phase, gone);
        it = lines.erase(it);
      }
    }
    nodes_lost.fetch_add(1, std::memory_order_relaxed);
    players_orphaned.fetch_add(orphans.size(), std::memory_order_relaxed);
    std::vector<orphan> list;
    for (auto& [p, o] : orphans) list.push_back(o);
    if (opt.on_node_lost) opt.on_node_lost(node, std::move(list));
  }

  // --- resume tokens across gateways ---

  void later(unique_function<void()> chore) { asking.push(std::move(chore)); }

  void remember(const std::string& token, player_id player, const std::string& name) {
    auto made = opt.sessions->create(token_key(token),
                                     detail::encode(detail::session_record{player, name, opt.gateway}));
    if (!made)
      warn(fmt::format("gateway {}: player {}: resume token not shared: {}", opt.gateway, player,
                       made.error().message));
  }

  void forget(const std::string& token) {
    if (auto gone = opt.sessions->erase(token_key(token)); !gone)
      warn(fmt::format("gateway {}: {}", opt.gateway, gone.error().message));
  }

  result<claimed_player, world_errc> claim(const std::string& token) {
    auto refuse = [this](std::string why) {
      claims_refused.fetch_add(1, std::memory_order_relaxed);
      return fail(world_errc::not_in_scene, std::move(why));
    };
    if (!opt.sessions || !valid_token(token)) return refuse("resume token unknown");
    const std::string key = token_key(token);
    auto got = opt.sessions->get(key);
    if (!got) return refuse(fmt::format("resume token unknown: {}", got.error().message));
    auto record = detail::decode_session(key, got->value);
    if (!record) return refuse(record.error().message);
    const std::string held_by = record->gateway;
    // The record names this gateway from now on: of two gateways claiming it at once, one wins.
    record->gateway = opt.gateway;
    if (auto taken = opt.sessions->update(key, detail::encode(*record), got->revision); !taken)
      return refuse(fmt::format("player {}: {}", record->player, taken.error().message));
    std::vector<std::string> live;
    {
      std::lock_guard lock(m);
      for (const auto& [name, n] : nodes) live.push_back(name);
    }
    // Every node is asked: a gateway that died in the middle of a journey left the player on both
    // its nodes. It goes on where the first says; the others let it go.
    const std::string ask = wire::encode(wire::claim{record->player, opt.gateway});
    std::optional<std::pair<std::string, placement>> found;
    for (const auto& node : live) {
      auto answer = link.request(subjects::claim(node), ask, claim_timeout);
      if (!answer) continue;  // not there now: its players wait for it to be declared dead
      auto a = wire::decode_claim_answer(*answer);
      if (!a) {
        bad_messages.fetch_add(1, std::memory_order_relaxed);
        warn(fmt::format("gateway {}: {}", opt.gateway, a.error().message));
        continue;
      }
      if (!a->result) continue;
      std::lock_guard lock(m);
      if (!found) {
        found.emplace(node, *a->result);
        // On a line of a dungeon of private instances it holds a ticket there, its way home not
        // known here: when it leaves the party, the world's (the table's first town) is taken.
        const scene_id scene = a->result->line.scene;
        const scene_def* d = opt.table ? opt.table->find_scene(scene) : nullptr;
        const bool instance = d != nullptr && d->instances == instance_mode::party;
        node_of[record->player] = stand{node, scene, instance ? scene : 0, 0};
        continue;
      }
      const std::uint64_t ticket = next_ticket++;
      pending.emplace(ticket, pending_request{{},
                                              record->player,
                                              world_request::kind::leave,
                                              node,
                                              clock::now() + opt.answer_timeout,
                                              0,
                                              {},
                                              true,
                                              {}});
      push(node, ticket, world_request::leave(record->player));
    }
    if (!found) {
      forget(token);
      return refuse(fmt::format("player {}: on no live scene node", record->player));
    }
    if (held_by != opt.gateway) (void)link.publish(subjects::claimed(held_by), ask);
    claims.fetch_add(1, std::memory_order_relaxed);
    const placement& at = found->second;
    return claimed_player{record->player, record->name, at.line, at.space, at.phase};
  }

  void on_claimed(std::string_view data) {
    auto c = wire::decode_claim(data);
    if (!c) {
      bad_messages.fetch_add(1, std::memory_order_relaxed);
      return warn(fmt::format("gateway {}: {}", opt.gateway, c.error().message));
    }
    if (c->gateway == opt.gateway) return;
    {
      std::lock_guard lock(m);
      node_of.erase(c->player);
    }
    claimed_elsewhere.fetch_add(1, std::memory_order_relaxed);
    if (opt.on_claimed_elsewhere) opt.on_claimed_elsewhere(c->player);
  }

  // --- line events and views ---

  void ask_views(const std::string& node) {
    {
      std::lock_guard lock(m);
      auto& at = views_asked_at[node];
      const auto now = clock::now();
      if (now - at < views_retry) return;
      at = now;
    }
    views_asked.fetch_add(1, std::memory_order_relaxed);
    (void)link.publish(subjects::views(node), {}, subjects::views_inbox(opt.gateway));
  }

  // A line heard no more as it was (another generation under its id, or another node): everyone who
  // stood on it leaves the front's view, so nobody of the old line lingers in the new (lines_m held).
  void retire(const view_key& k, line_view& v) {
    if (v.standing.empty() || !opt.on_line_events) return;
    std::vector<line_event> gone;
    gone.reserve(v.standing.size());
    for (const auto& [id, e] : v.standing)
      gone.push_back({line_event::kind::left, e.player, e.at, e.monster});
    opt.on_line_events(v.line, k.phase, gone);
  }

  // Applies a batch that follows the view's last one (lines_m held).
  void apply(line_view& v, const wire::event_batch& b) {
    for (const auto& e : b.events) {
      const std::uint32_t player = e.monster ? 0 : 1;
      if (e.what == line_event::kind::left) {
        if (v.standing.erase(entity_of(e)) != 0) v.players -= player;
      } else {
        if (!e.monster && e.what == line_event::kind::entered) entering.push_back(e.player);
        const bool fresh = v.standing
                               .insert_or_assign(entity_of(e), line_event{line_event::kind::entered, e.player,
                                                                          e.at, e.monster})
                               .second;
        if (fresh) v.players += player;
      }
    }
    v.seq = b.seq;
    if (opt.on_line_events) opt.on_line_events(b.line, b.phase, b.events);
  }

  // Hands the front what changed between the view as heard and the view as it stands (lines_m held).
  void replace(line_view& v, const wire::view_state& state) {
    std::unordered_map<std::uint64_t, line_event> now;
    for (const auto& e : state.standing) now.emplace(entity_of(e), e);
    std::vector<line_event> diff;
    for (const auto& [id, e] : v.standing)
      if (!now.contains(id)) diff.push_back({line_event::kind::left, e.player, e.at, e.monster});
    for (const auto& [id, e] : now) {
      auto was = v.standing.find(id);
      if (was == v.standing.end()) {
        diff.push_back({line_event::kind::entered, e.player, e.at, e.monster});
        if (!e.monster) entering.push_back(e.player);
      } else if (was->second.at != e.at)
        diff.push_back({line_event::kind::moved, e.player, e.at, e.monster});
    }
    v.standing = std::move(now);
    v.players = static_cast<std::uint32_t>(
        std::count_if(v.standing.begin(), v.standing.end(), [](const auto& s) { return !s.second.monster; }));
    v.seq = state.seq;
    if (!diff.empty() && opt.on_line_events) opt.on_line_events(v.line, state.phase, diff);
  }

  void on_events(std::string_view subject, std::string_view data) {
    auto b = wire::decode_event_batch(data);
    const auto node = subjects::node_of_line(subject);
    if (!b || node.empty()) {
      bad_messages.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    event_batches.fetch_add(1, std::memory_order_relaxed);
    bool ask = false;
    {
      std::lock_guard lock(lines_m);
      const view_key k{b->line.scene, b->line.line, b->phase};
      auto& v = lines[k];
      if (v.line != b->line || v.node != node) {
        // A new generation (or a line never heard): it starts at batch 1, else we came in late.
        retire(k, v);
        v = line_view{std::string(node), b->line, 0, {}, false, {}};
        if (b->seq != 1) {
          v.waiting = true;
          ask = true;
        }
      }
      if (v.waiting) {
        if (v.held.size() >= max_held) v.held.clear();
        v.held.push_back(std::move(*b));
      } else if (b->seq == v.seq + 1) {
        apply(v, *b);
      } else if (b->seq > v.seq + 1) {
        gaps.fetch_add(1, std::memory_order_relaxed);
        v.waiting = true;
        v.held.push_back(std::move(*b));
        ask = true;
      }  // older than the last applied: heard already
      heard_entering();
    }
    if (ask) ask_views(std::string(node));
  }

  void on_views(std::string_view data) {
    auto got = wire::decode_views(data);
    if (!got) {
      bad_messages.fetch_add(1, std::memory_order_relaxed);
      return warn(fmt::format("gateway {}: {}", opt.gateway, got.error().message));
    }
    views_applied.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(m);
      unsynced.erase(got->node);
    }
    bool ask = false;
    std::lock_guard lock(lines_m);
    std::map<view_key, const wire::view_state*> given;
    for (const auto& s : got->lines) given.emplace(view_key{s.line.scene, s.line.line, s.phase}, &s);
    for (auto& [k, v] : lines) {
      if (v.node != got->node) continue;
      auto s = given.find(k);
      // Not there, another generation, or older than what was applied: the node looked before this
      // gateway heard the line's latest, so the answer says nothing new (a waiting line asks again).
      if (s == given.end()) continue;
      const auto& state = *s->second;
      given.erase(s);
      if (state.line != v.line || state.seq < v.seq) continue;
      if (state.seq > v.seq) replace(v, state);
      v.waiting = false;
      auto held = std::exchange(v.held, {});
      std::sort(held.begin(), held.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
      for (auto& b : held) {
        if (b.seq <= v.seq) continue;
        if (b.seq != v.seq + 1) {
          v.waiting = true;
          ask = true;
          break;
        }
        apply(v, b);
      }
    }
    for (const auto& [k, s] : given) {  // lines this gateway had not heard of
      auto& v = lines[k];
      v = line_view{got->node, s->line, 0, {}, false, {}};
      replace(v, *s);
    }
    heard_entering();
    if (ask) ask_views(got->node);
  }

  void retry_waiting() {
    std::vector<std::string> again;
    {
      std::lock_guard lock(m);
      for (const auto& n : unsynced)
        if (nodes.contains(n)) again.push_back(n);
    }
    {
      std::lock_guard lock(lines_m);
      for (const auto& [k, v] : lines)
        if (v.waiting && std::find(again.begin(), again.end(), v.node) == again.end())
          again.push_back(v.node);
    }
    for (const auto& n : again) ask_views(n);
  }

  void resync_all() {
    std::vector<std::string> names;
    {
      std::lock_guard lock(m);
      for (const auto& [name, n] : nodes) names.push_back(name);
      unsynced = {names.begin(), names.end()};
      views_asked_at.clear();
    }
    for (const auto& n : names) ask_views(n);
  }

  bool resynced() const {
    std::lock_guard lock(m);
    for (const auto& n : unsynced)
      if (nodes.contains(n)) return false;  // a node dead meanwhile owes nothing
    return true;
  }
};

remote_world::remote_world(std::shared_ptr<impl> i) : impl_(std::move(i)) {}

remote_world::~remote_world() {
  impl_->answers_sub.reset();
  impl_->events_sub.reset();
  impl_->views_sub.reset();
  impl_->claimed_sub.reset();
  {
    std::lock_guard lock(impl_->m);
    impl_->stopping = true;
  }
  impl_->cv.notify_one();
  if (impl_->flusher.joinable()) impl_->flusher.join();
  impl_->asking.stop();
  impl_->keeper.stop();
}

cluster_result<std::unique_ptr<remote_world>> remote_world::start(nats_link& link, kv_bucket nodes,
                                                                  remote_world_options options) {
  if (!valid_name(options.gateway))
    return fail(
        cluster_errc::bad_name,
        fmt::format("cluster: gateway name '{}' is not 1-64 letters, digits, '-' or '_'", options.gateway));
  auto i = std::make_shared<impl>(link, std::move(nodes), std::move(options));
  std::unique_ptr<remote_world> w(new remote_world(i));
  auto* raw = i.get();
  auto answers = link.subscribe(
      subjects::answers(raw->opt.gateway),
      [raw](std::string_view, std::string_view data, std::string_view) { raw->on_answers(data); });
  if (!answers) return answers.error();
  i->answers_sub = std::move(answers).value();
  auto events = link.subscribe(
      subjects::all_lines,
      [raw](std::string_view subject, std::string_view data, std::string_view) {
        raw->on_events(subject, data);
      },
      raw->opt.max_pending_event_bytes);
  if (!events) return events.error();
  i->events_sub = std::move(events).value();
  auto views = link.subscribe(
      subjects::views_inbox(raw->opt.gateway),
      [raw](std::string_view, std::string_view data, std::string_view) { raw->on_views(data); });
  if (!views) return views.error();
  i->views_sub = std::move(views).value();
  auto claimed = link.subscribe(
      subjects::claimed(raw->opt.gateway),
      [raw](std::string_view, std::string_view data, std::string_view) { raw->on_claimed(data); });
  if (!claimed) return claimed.error();
  i->claimed_sub = std::move(claimed).value();
  i->flusher = std::thread([raw] { raw->flush_requests(); });
  i->keeper.start(1);
  i->asking.start(askers);
  raw->read_nodes(clock::now());
  raw->resync_all();
  return w;
}

void remote_world::submit(const world_request& request, world_reply reply) {
  impl_->submit(request, std::move(reply));
}

void remote_world::remember(std::string_view token, player_id player, std::string_view name) {
  if (!impl_->opt.sessions) return;
  impl_->keeper.push([i = impl_.get(), t = std::string(token), player, n = std::string(name)] {
    i->remember(t, player, n);
  });
}

void remote_world::forget(std::string_view token) {
  if (!impl_->opt.sessions) return;
  impl_->keeper.push([i = impl_.get(), t = std::string(token)] { i->forget(t); });
}

void remote_world::claim(std::string_view token, claim_reply reply) {
  impl_->later(
      [i = impl_.get(), t = std::string(token), reply = std::move(reply)]() mutable { reply(i->claim(t)); });
}

void remote_world::poll(std::chrono::steady_clock::time_point now) {
  // Batches dropped by the slow-consumer cut-off leave no gap behind when they were a line's last:
  // every node is asked for its lines.
  if (const auto dropped = impl_->events_sub->dropped(); dropped != impl_->dropped_seen) {
    impl_->warn(
        fmt::format("gateway {}: {} line event batches dropped (too slow for them); asking every node "
                    "for its lines",
                    impl_->opt.gateway, dropped - impl_->dropped_seen));
    impl_->dropped_seen = dropped;
    impl_->resync_all();
  }
  if (now - impl_->beaten >= beat_period) {
    impl_->beaten = now;
    (void)impl_->link.publish(subjects::gateway_beat(impl_->opt.gateway), {});
  }
  impl_->time_out(now);
  if (now - impl_->nodes_read >= nodes_period) impl_->read_nodes(now);
  impl_->retry_waiting();
}

void remote_world::resync_all() { impl_->resync_all(); }

bool remote_world::resynced() const { return impl_->resynced(); }

remote_world_stats remote_world::stats() const {
  auto n = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  const auto& i = *impl_;
  remote_world_stats s{n(i.request_batches),
                       n(i.requests),
                       n(i.answers),
                       n(i.timeouts),
                       n(i.no_node),
                       n(i.event_batches),
                       n(i.gaps),
                       n(i.views_asked),
                       n(i.views_applied),
                       n(i.bad_messages),
                       i.events_sub ? i.events_sub->dropped() : 0,
                       n(i.nodes_lost),
                       n(i.players_orphaned),
                       n(i.claims),
                       n(i.claims_refused),
                       n(i.claimed_elsewhere),
                       n(i.journeys),
                       n(i.journeys_failed),
                       n(i.entries_to_room),
                       n(i.entries_to_new_line)};
  std::lock_guard lock(i.m);
  s.live_nodes = static_cast<std::uint32_t>(i.nodes.size());
  s.players = static_cast<std::uint32_t>(i.node_of.size());
  return s;
}

}  // namespace scenert::cluster
