#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/cluster/wire.hpp>
#include "subjects.hpp"

#include <fmt/format.h>

#include <array>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace scenert::cluster {

namespace {

// Answers wait this long for the rest of their world tick's answers, so a gateway gets one batch.
constexpr auto answer_linger = std::chrono::microseconds(200);
// A claimed player on its way somewhere is looked at again this often, this many times (a second).
constexpr auto settle_wait = std::chrono::milliseconds(20);
constexpr int settle_tries = 50;
// A hand-over to another node not answered within this is taken back (the player stays here). A
// gateway's answer timeout is longer, so it hears how the journey ended from this node.
constexpr auto handoff_timeout = std::chrono::milliseconds(1000);
// A player handed over to this node is remembered this long, for a late release from its node.
constexpr auto arrival_memory = std::chrono::seconds(10);
// A release is said again this often until its node confirms it, for as long as that node remembers
// the arrival: one said just as the server came back may reach a node not yet subscribed again.
constexpr auto release_again = std::chrono::milliseconds(250);

struct view_key {
  scene_id scene;
  std::uint32_t line;
  phase_id phase;
  friend bool operator==(const view_key&, const view_key&) = default;
};
struct view_key_hash {
  std::size_t operator()(const view_key& k) const noexcept {
    return std::hash<std::uint64_t>{}((std::uint64_t{k.scene} << 40) ^ (std::uint64_t{k.line} << 16) ^
                                      k.phase);
  }
};

// Who stands on one line (or phase) of the current generation, and how many batches it published.
struct view {
  line_handle line;
  std::uint64_t seq = 0;
  std::unordered_map<std::uint64_t, line_event> standing;  // by entity (monsters apart from players)
};

std::uint64_t entity_of(const line_event& e) { return e.player ^ (e.monster ? (std::uint64_t{1} << 63) : 0); }

}  // namespace

using clock = std::chrono::steady_clock;

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

struct node_endpoint::impl : std::enable_shared_from_this<impl> {
  nats_link& link;
  const std::string node;
  const std::uint64_t epoch;
  const node_endpoint_options opt;
  world_port* w = nullptr;
  player_locator where;

  // The lines' views, split so that lines ticking on different workers rarely meet on a lock.
  struct shard {
    std::mutex m;
    std::unordered_map<view_key, view, view_key_hash> views;
  };
  std::array<shard, 16> shards;

  std::mutex answers_m;
  std::condition_variable answers_cv;
  std::unordered_map<std::string, std::vector<wire::answer_entry>> outbox;  // by gateway
  bool stopping = false;
  std::thread flusher;

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

  std::unique_ptr<subscription> requests_sub, views_sub, claims_sub, where_sub, beats_sub, arrive_sub,
      arrived_sub, release_sub, released_sub;

  std::atomic<std::uint64_t> request_batches{0}, requests{0}, bad_batches{0}, answer_batches{0}, answers{0},
      event_batches{0}, views_asked{0}, publish_failures{0}, releases_again{0}, claims{0}, gateways_lost{0},
      players_abandoned{0}, handoffs_out{0}, handoffs_in{0}, handoffs_failed{0};

  impl(nats_link& l, std::string n, std::uint64_t e, node_endpoint_options o)
      : link(l), node(std::move(n)), epoch(e), opt(o) {}

  // gateways_m held.
  void heard(const std::string& gateway, clock::time_point now) {
    auto& g = gateways[gateway];
    g.heard = now;
    g.dead_since.reset();  // a gateway that was only slow: its players are its own again
  }

  void on_beat(std::string_view subject) {
    const auto gateway = subjects::gateway_of_beat(subject);
    if (!valid_name(gateway)) return;
    std::lock_guard lock(gateways_m);
    heard(std::string(gateway), clock::now());
  }

  void poll(clock::time_point now) {
    std::vector<player_id> abandoned;
    {
      std::lock_guard lock(gateways_m);
      // Across a link outage nobody could be heard: silence says nothing, the clocks start again.
      if (const auto ups = link.reconnects(); ups != link_ups || !link.connected()) {
        link_ups = ups;
        for (auto& [name, g] : gateways) g.heard = now;
        return;
      }
      for (auto& [name, g] : gateways)
        if (!g.dead_since && now - g.heard >= opt.gateway_dead_after) {
          g.dead_since = now;
          gateways_lost.fetch_add(1, std::memory_order_relaxed);
        }
      for (auto it = gateway_of.begin(); it != gateway_of.end();) {
        const auto g = gateways.find(it->second);
        if (g != gateways.end() && g->second.dead_since && now - *g->second.dead_since >= opt.resume) {
          abandoned.push_back(it->first);
          it = gateway_of.erase(it);
        } else {
          ++it;
        }
      }
      std::erase_if(gateways, [&](const auto& g) {
        return g.second.dead_since && now - *g.second.dead_since >= opt.resume;
      });
    }
    players_abandoned.fetch_add(abandoned.size(), std::memory_order_relaxed);
    for (player_id p : abandoned) w->submit(world_request::leave(p), {});
    give_up_handoffs(now);
  }

  // --- journeys between nodes ---

  // A request that takes its player to another node: that node is asked to place it; the player
  // stands here meanwhile (its gateway holds its next requests).
  void hand_over(std::shared_ptr<const std::string> gateway, const wire::request_entry& e) {
    if (!valid_name(e.to) || e.to == node) {
      bad_batches.fetch_add(1, std::memory_order_relaxed);
      return answer(
          *gateway, e.ticket,
          fail(world_errc::node_unavailable,
               fmt::format("player {}: no journey from node {} to '{}'", e.request.player, node, e.to)));
    }
    std::uint64_t id = 0;
    {
      std::lock_guard lock(travel_m);
      id = next_handoff++;
      handoffs.emplace(id,
                       handoff{e.request.player, gateway, e.ticket, e.to, clock::now() + handoff_timeout});
    }
    handoffs_out.fetch_add(1, std::memory_order_relaxed);
    if (!link.publish(subjects::arrive(e.to), wire::encode(wire::arrival{id, node, *gateway, e.request}),
                      subjects::arrived(node)))
      publish_failures.fetch_add(1, std::memory_order_relaxed);  // given up at its deadline
  }

  // The node the player went to answered: placed there, it leaves here; refused, it stays.
  void on_arrived(std::string_view data) {
    auto a = wire::decode_arrival_answer(data);
    if (!a) {
      bad_batches.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    handoff h;
    {
      std::lock_guard lock(travel_m);
      auto it = handoffs.find(a->id);
      if (it == handoffs.end() || it->second.to != a->node) return;  // given up already: released there
      h = std::move(it->second);
      handoffs.erase(it);
      if (a->result) handed.insert(h.player);
    }
    if (a->result) {
      {
        std::lock_guard lock(gateways_m);
        gateway_of.erase(h.player);
      }
      w->submit(world_request::leave(h.player), [weak = weak_from_this(), p = h.player](world_result) {
        if (auto self = weak.lock()) {
          std::lock_guard lock(self->travel_m);
          self->handed.erase(p);
        }
      });
    } else {
      handoffs_failed.fetch_add(1, std::memory_order_relaxed);
    }
    answer(*h.gateway, h.ticket, std::move(a->result));
  }

  // Hand-overs not answered in time: the player stays, and the other node lets go of it if it
  // placed it after all (told until it confirms, or forgot the arrival).
  void give_up_handoffs(clock::time_point now) {
    std::vector<std::pair<std::uint64_t, handoff>> late;
    std::vector<std::pair<std::string, std::string>> say;  // releases: (node, message)
    {
      std::lock_guard lock(travel_m);
      for (auto it = handoffs.begin(); it != handoffs.end();) {
        if (it->second.deadline > now) {
          ++it;
          continue;
        }
        late.emplace_back(it->first, std::move(it->second));
        it = handoffs.erase(it);
      }
      std::erase_if(arrivals, [&](const auto& a) { return now - a.second.heard >= arrival_memory; });
      std::erase_if(releasing, [&](const auto& r) { return r.second.until <= now; });
      for (auto& [id, r] : releasing)
        if (r.again <= now) {
          r.again = now + release_again;
          say.emplace_back(r.to, r.message);
        }
      releases_again.fetch_add(say.size(), std::memory_order_relaxed);
      for (auto& [id, h] : late) {
        auto message = wire::encode(wire::arrival{id, node, *h.gateway, world_request::leave(h.player)});
        releasing.insert_or_assign(id, release_due{h.to, message, now + release_again, now + arrival_memory});
        say.emplace_back(h.to, std::move(message));
      }
    }
    for (const auto& [to, message] : say)
      if (!link.publish(subjects::release(to), message, subjects::released(node)))
        publish_failures.fetch_add(1, std::memory_order_relaxed);
    for (auto& [id, h] : late) {
      handoffs_failed.fetch_add(1, std::memory_order_relaxed);
      answer(*h.gateway, h.ticket,
             fail(world_errc::node_unavailable, fmt::format("player {}: node {} did not take it within {} ms",
                                                            h.player, h.to, handoff_timeout.count())));
    }
  }

  // A player handed over by the node it stands on: placed here, then that node is told.
  void on_arrive(std::string_view data, std::string_view reply) {
    auto a = wire::decode_arrival(data);
    if (!a || !valid_name(a->from) || !valid_name(a->gateway) || reply.empty()) {
      bad_batches.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    {
      std::lock_guard lock(travel_m);
      auto [it, fresh] =
          arrivals.try_emplace({a->from, a->id}, arrival_state{a->request.player, clock::now()});
      if (!fresh) return;  // heard twice, or released before it came
    }
    handoffs_in.fetch_add(1, std::memory_order_relaxed);
    bool new_here = false;
    {
      std::lock_guard lock(gateways_m);
      heard(a->gateway, clock::now());
      new_here = gateway_of.insert_or_assign(a->request.player, a->gateway).second;
    }
    {
      std::lock_guard lock(travel_m);
      arrivals[{a->from, a->id}].new_here = new_here;
    }
    w->submit(a->request, [weak = weak_from_this(), key = arrival_key{a->from, a->id}, p = a->request.player,
                           reply = std::string(reply)](world_result r) {
      if (auto self = weak.lock()) self->placed_here(key, p, reply, std::move(r));
    });
  }

  // On the world's thread: nothing here waits for the world.
  void placed_here(const arrival_key& key, player_id p, const std::string& reply, world_result r) {
    bool released = false, new_here = false;
    {
      std::lock_guard lock(travel_m);
      auto& a = arrivals[key];
      a.answered = true;
      a.placed = r.has_value();
      released = a.released;
      new_here = a.new_here;
    }
    if (released) {
      if (r) let_go_here(p);
      return;
    }
    if (!r && new_here) {  // refused, and never this node's before
      std::lock_guard lock(gateways_m);
      gateway_of.erase(p);
    }
    publish(reply, wire::encode(wire::arrival_answer{key.second, node, std::move(r)}));
  }

  // The node a player came from gave up waiting: if it was placed here, it leaves again. Said
  // again until confirmed: only the first one counts.
  void on_release(std::string_view data, std::string_view reply) {
    auto a = wire::decode_arrival(data);
    if (!a) {
      bad_batches.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    bool placed = false;
    {
      std::lock_guard lock(travel_m);
      auto [it, fresh] =
          arrivals.try_emplace({a->from, a->id}, arrival_state{a->request.player, clock::now()});
      placed = !it->second.released && it->second.answered && it->second.placed;
      it->second.released = true;
    }
    if (placed) let_go_here(a->request.player);
    if (!reply.empty()) publish(std::string(reply), data);
  }

  // A release this node said reached its node (the confirmation is the release itself).
  void on_released(std::string_view data) {
    auto a = wire::decode_arrival(data);
    if (!a || a->from != node) {
      bad_batches.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    std::lock_guard lock(travel_m);
    releasing.erase(a->id);
  }

  void let_go_here(player_id p) {
    {
      std::lock_guard lock(gateways_m);
      gateway_of.erase(p);
    }
    w->submit(world_request::leave(p), {});
  }

  // Whether a player is being handed over from here or to here (claims wait), or was handed over
  // from here and has not left yet.
  bool in_transit(player_id p) {
    std::lock_guard lock(travel_m);
    return std::any_of(handoffs.begin(), handoffs.end(),
                       [p](const auto& h) { return h.second.player == p; }) ||
           std::any_of(arrivals.begin(), arrivals.end(), [p](const auto& a) {
             return a.second.player == p && !a.second.answered && !a.second.released;
           });
  }
  bool handed_over(player_id p) {
    std::lock_guard lock(travel_m);
    return handed.contains(p);
  }

  shard& shard_of(const view_key& k) { return shards[view_key_hash{}(k) % shards.size()]; }

  void publish(const std::string& subject, std::string_view bytes) {
    if (!link.publish(subject, bytes)) publish_failures.fetch_add(1, std::memory_order_relaxed);
  }

  void line_events(line_handle line, phase_id phase, std::span<const line_event> events) {
    const view_key k{line.scene, line.line, phase};
    auto& s = shard_of(k);
    std::lock_guard lock(s.m);
    auto& v = s.views[k];
    if (v.line != line) v = view{line, 0, {}};  // a new generation starts its count again
    for (const auto& e : events) {
      if (e.what == line_event::kind::left)
        v.standing.erase(entity_of(e));
      else
        v.standing[entity_of(e)] = line_event{line_event::kind::entered, e.player, e.at, e.monster};
    }
    wire::event_batch b{line, phase, ++v.seq, {events.begin(), events.end()}};
    // Published under the view's lock, so the line's batches leave in their order.
    publish(subjects::line(node, line), wire::encode(b));
    event_batches.fetch_add(1, std::memory_order_relaxed);
  }

  void on_requests(std::string_view data) {
    auto batch = wire::decode_request_batch(data);
    if (!batch || !valid_name(batch->gateway)) {
      bad_batches.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    request_batches.fetch_add(1, std::memory_order_relaxed);
    requests.fetch_add(batch->requests.size(), std::memory_order_relaxed);
    auto gateway = std::make_shared<const std::string>(std::move(batch->gateway));
    {
      std::lock_guard lock(gateways_m);
      heard(*gateway, clock::now());
      for (const auto& r : batch->requests) {
        if (r.request.what == world_request::kind::leave)
          gateway_of.erase(r.request.player);
        else
          gateway_of[r.request.player] = *gateway;
      }
    }
    for (const auto& r : batch->requests) {
      if (!r.to.empty()) {
        hand_over(gateway, r);
        continue;
      }
      w->submit(r.request, [weak = weak_from_this(), gateway, ticket = r.ticket](world_result answer) {
        if (auto self = weak.lock()) self->answer(*gateway, ticket, std::move(answer));
      });
    }
  }

  void answer(const std::string& gateway, std::uint64_t ticket, world_result r) {
    std::lock_guard lock(answers_m);
    auto& out = outbox[gateway];
    out.push_back({ticket, std::move(r)});
    if (out.size() == 1) answers_cv.notify_one();
  }

  void flush_answers() {
    std::unique_lock lock(answers_m);
    for (;;) {
      answers_cv.wait(lock, [this] { return stopping || !outbox.empty(); });
      if (outbox.empty()) return;  // stopping, nothing held
      lock.unlock();
      std::this_thread::sleep_for(answer_linger);
      lock.lock();
      auto batch = std::exchange(outbox, {});
      lock.unlock();
      for (auto& [gateway, entries] : batch) {
        answers.fetch_add(entries.size(), std::memory_order_relaxed);
        answer_batches.fetch_add(1, std::memory_order_relaxed);
        publish(subjects::answers(gateway),
                wire::encode(wire::answer_batch{node, epoch, std::move(entries)}));
      }
      lock.lock();
    }
  }

  // A claim takes the player for the asking gateway; a "where" only says where it stands.
  void on_claim(std::string_view data, std::string_view reply, bool take) {
    if (reply.empty()) return;
    auto c = wire::decode_claim(data);
    if (!c || !valid_name(c->gateway)) {
      bad_batches.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    claims.fetch_add(1, std::memory_order_relaxed);
    // A player on its way (between lines, into or out of a phase) is answered once it got there: the
    // answer that would have told its client went to the gateway that asked, which may be gone.
    // A player being handed over to another node is answered once the hand-over ended; one handed
    // over stands there, whatever this world says until its leave is applied.
    for (int i = 0; i < settle_tries && in_transit(c->player); ++i) std::this_thread::sleep_for(settle_wait);
    location at = where && !handed_over(c->player) ? where(c->player) : location{};
    for (int i = 0; i < settle_tries && (at.where == location::state::switching || at.phase_pending); ++i) {
      std::this_thread::sleep_for(settle_wait);
      at = where(c->player);
    }
    if (take && at.where != location::state::none) {  // its answers and its fate are the claimer's now
      std::lock_guard lock(gateways_m);
      heard(c->gateway, clock::now());
      gateway_of[c->player] = c->gateway;
    }
    wire::claim_answer a{
        node, fail(world_errc::not_in_scene, fmt::format("player {}: not on node {}", c->player, node))};
    // A player between two lines is claimed where it goes: its events come from there.
    if (at.where == location::state::in_line)
      a.result = placement{at.line, at.space, at.phase};
    else if (at.where == location::state::switching)
      a.result = placement{at.target, 0, 0};
    publish(std::string(reply), wire::encode(a));
  }

  void on_views(std::string_view reply) {
    if (reply.empty()) return;
    views_asked.fetch_add(1, std::memory_order_relaxed);
    wire::views all{node, {}};
    for (auto& s : shards) {
      std::lock_guard lock(s.m);
      for (const auto& [k, v] : s.views) {
        wire::view_state state{v.line, k.phase, v.seq, {}};
        state.standing.reserve(v.standing.size());
        for (const auto& [id, e] : v.standing) state.standing.push_back(e);
        all.lines.push_back(std::move(state));
      }
    }
    publish(std::string(reply), wire::encode(all));
  }
};

node_endpoint::node_endpoint(nats_link& link, std::string node, std::uint64_t epoch,
                             node_endpoint_options options)
    : impl_(std::make_shared<impl>(link, std::move(node), epoch, options)) {}

node_endpoint::~node_endpoint() { stop(); }

std::function<void(line_handle, phase_id, std::span<const line_event>)> node_endpoint::on_line_events() {
  return [i = impl_](line_handle line, phase_id phase, std::span<const line_event> events) {
    i->line_events(line, phase, events);
  };
}

cluster_result<void> node_endpoint::start(world_port& w, player_locator where) {
  impl_->w = &w;
  impl_->where = std::move(where);
  impl_->flusher = std::thread([i = impl_.get()] { i->flush_answers(); });
  auto requests = impl_->link.subscribe(
      subjects::requests(impl_->node),
      [i = impl_.get()](std::string_view, std::string_view data, std::string_view) { i->on_requests(data); });
  if (!requests) return requests.error();
  impl_->requests_sub = std::move(requests).value();
  auto views = impl_->link.subscribe(
      subjects::views(impl_->node),
      [i = impl_.get()](std::string_view, std::string_view, std::string_view reply) { i->on_views(reply); });
  if (!views) return views.error();
  impl_->views_sub = std::move(views).value();
  auto claims =
      impl_->link.subscribe(subjects::claim(impl_->node),
                            [i = impl_.get()](std::string_view, std::string_view data,
                                              std::string_view reply) { i->on_claim(data, reply, true); });
  if (!claims) return claims.error();
  impl_->claims_sub = std::move(claims).value();
  auto wheres =
      impl_->link.subscribe(subjects::where(impl_->node),
                            [i = impl_.get()](std::string_view, std::string_view data,
                                              std::string_view reply) { i->on_claim(data, reply, false); });
  if (!wheres) return wheres.error();
  impl_->where_sub = std::move(wheres).value();
  auto beats = impl_->link.subscribe(subjects::all_gateway_beats,
                                     [i = impl_.get()](std::string_view subject, std::string_view,
                                                       std::string_view) { i->on_beat(subject); });
  if (!beats) return beats.error();
  impl_->beats_sub = std::move(beats).value();
  auto arrive =
      impl_->link.subscribe(subjects::arrive(impl_->node),
                            [i = impl_.get()](std::string_view, std::string_view data,
                                              std::string_view reply) { i->on_arrive(data, reply); });
  if (!arrive) return arrive.error();
  impl_->arrive_sub = std::move(arrive).value();
  auto arrived = impl_->link.subscribe(
      subjects::arrived(impl_->node),
      [i = impl_.get()](std::string_view, std::string_view data, std::string_view) { i->on_arrived(data); });
  if (!arrived) return arrived.error();
  impl_->arrived_sub = std::move(arrived).value();
  auto release =
      impl_->link.subscribe(subjects::release(impl_->node),
                            [i = impl_.get()](std::string_view, std::string_view data,
                                              std::string_view reply) { i->on_release(data, reply); });
  if (!release) return release.error();
  impl_->release_sub = std::move(release).value();
  auto released = impl_->link.subscribe(
      subjects::released(impl_->node),
      [i = impl_.get()](std::string_view, std::string_view data, std::string_view) { i->on_released(data); });
  if (!released) return released.error();
  impl_->released_sub = std::move(released).value();
  impl_->link_ups = impl_->link.reconnects();
  return {};
}

void node_endpoint::poll(std::chrono::steady_clock::time_point now) { impl_->poll(now); }

void node_endpoint::stop() {
  impl_->requests_sub.reset();
  impl_->views_sub.reset();
  impl_->claims_sub.reset();
  impl_->where_sub.reset();
  impl_->beats_sub.reset();
  impl_->arrive_sub.reset();
  impl_->arrived_sub.reset();
  impl_->release_sub.reset();
  impl_->released_sub.reset();
  {
    std::lock_guard lock(impl_->answers_m);
    impl_->stopping = true;
  }
  impl_->answers_cv.notify_one();
  if (impl_->flusher.joinable()) impl_->flusher.join();
}

node_endpoint_stats node_endpoint::stats() const {
  auto n = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  const auto& i = *impl_;
  node_endpoint_stats s;
  s.request_batches = n(i.request_batches), s.requests = n(i.requests), s.bad_batches = n(i.bad_batches);
  s.claims = n(i.claims), s.gateways_lost = n(i.gateways_lost), s.players_abandoned = n(i.players_abandoned);
  s.answer_batches = n(i.answer_batches), s.answers = n(i.answers), s.event_batches = n(i.event_batches);
  s.views_asked = n(i.views_asked), s.publish_failures = n(i.publish_failures);
  s.handoffs_out = n(i.handoffs_out), s.handoffs_in = n(i.handoffs_in),
  s.handoffs_failed = n(i.handoffs_failed), s.releases_again = n(i.releases_again);
  {
    std::lock_guard lock(impl_->travel_m);
    s.releases_unconfirmed = i.releasing.size();
  }
  std::lock_guard lock(impl_->gateways_m);
  for (const auto& [name, g] : i.gateways) s.gateways += g.dead_since ? 0 : 1;
  return s;
}

}  // namespace scenert::cluster
