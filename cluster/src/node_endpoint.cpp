#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/cluster/wire.hpp>
#include "subjects.hpp"

#include <fmt/format.h>

#include <array>
#include <condition_variable>
#include <optional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace scenert::cluster {

namespace {

// Answers wait this long for the rest of their world tick's answers, so a gateway gets one batch.
constexpr auto answer_linger = std::chrono::microseconds(200);
// A claimed player on its way somewhere is looked at again this often, this many times (a second).
constexpr auto settle_wait = std::chrono::milliseconds(20);
constexpr int settle_tries = 50;

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

  std::unique_ptr<subscription> requests_sub, views_sub, claims_sub, where_sub, beats_sub;

  std::atomic<std::uint64_t> request_batches{0}, requests{0}, bad_batches{0}, answer_batches{0}, answers{0},
      event_batches{0}, views_asked{0}, publish_failures{0}, claims{0},
      gateways_lost{0}, players_abandoned{0};

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
      std::erase_if(gateways, [&](const auto& g) { return g.second.dead_since && now - *g.second.dead_since >= opt.resume; });
    }
    players_abandoned.fetch_add(abandoned.size(), std::memory_order_relaxed);
    for (player_id p : abandoned) w->submit(world_request::leave(p), {});
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
    location at = where ? where(c->player) : location{};
    for (int i = 0; i < settle_tries && (at.where == location::state::switching || at.phase_pending); ++i) {
      std::this_thread::sleep_for(settle_wait);
      at = where(c->player);
    }
    if (take && at.where != location::state::none) {  // its answers and its fate are the claimer's now
      std::lock_guard lock(gateways_m);
      heard(c->gateway, clock::now());
      gateway_of[c->player] = c->gateway;
    }
    wire::claim_answer a{node, fail(world_errc::not_in_scene, fmt::format("player {}: not on node {}", c->player, node))};
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
  auto claims = impl_->link.subscribe(subjects::claim(impl_->node),
                                      [i = impl_.get()](std::string_view, std::string_view data,
                                                        std::string_view reply) { i->on_claim(data, reply, true); });
  if (!claims) return claims.error();
  impl_->claims_sub = std::move(claims).value();
  auto wheres = impl_->link.subscribe(subjects::where(impl_->node),
                                     [i = impl_.get()](std::string_view, std::string_view data,
                                                       std::string_view reply) { i->on_claim(data, reply, false); });
  if (!wheres) return wheres.error();
  impl_->where_sub = std::move(wheres).value();
  auto beats = impl_->link.subscribe(
      subjects::all_gateway_beats,
      [i = impl_.get()](std::string_view subject, std::string_view, std::string_view) { i->on_beat(subject); });
  if (!beats) return beats.error();
  impl_->beats_sub = std::move(beats).value();
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
  std::lock_guard lock(impl_->gateways_m);
  for (const auto& [name, g] : i.gateways) s.gateways += g.dead_since ? 0 : 1;
  return s;
}

}  // namespace scenert::cluster
