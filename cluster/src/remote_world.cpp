// The gateway's remote world: its public face, and its requests to the nodes, their answers and
// time-outs, and the live nodes as the nodes bucket says (a node lost hands its players back).

#include <scenert/cluster/remote_world.hpp>
#include "remote_world_impl.hpp"
#include "subjects.hpp"

#include <fmt/format.h>
#include <boost/asio/post.hpp>

namespace scenert::cluster {

using detail::answers_done;
using detail::clock;
using detail::known_node;
using detail::line_key;
using detail::line_view;
using detail::pending_request;

namespace {

// Requests wait this long for the rest of their burst, so a node gets one batch.
constexpr auto request_linger = std::chrono::microseconds(200);
constexpr auto nodes_period = std::chrono::seconds(1);
constexpr auto beat_period = std::chrono::seconds(1);  // the nodes keep this gateway's players meanwhile

}  // namespace

// Whether a live node hosts a scene (`scenert run --hosts`; 0: any scene) (m held).
bool remote_world::impl::serves(const std::string& node, scene_id scene) const {
  auto n = nodes.find(node);
  return n != nodes.end() && (scene == 0 || n->second.record.hosts(scene));
}

// The live node hosting `scene` (0: any) with the fewest players, counting those sent to it since
// its load was read (m held).
std::string remote_world::impl::least_loaded(scene_id scene) {
  known_node* best = nullptr;
  for (auto& [name, n] : nodes)
    if ((scene == 0 || n.record.hosts(scene)) &&
        (best == nullptr || n.record.load + n.sent < best->record.load + best->sent))
      best = &n;
  if (best == nullptr) return {};
  ++best->sent;
  return best->record.name;
}

// Queues a request for a node (m held); `to`: a journey there.
void remote_world::impl::push(const std::string& node, std::uint64_t ticket, const world_request& q,
                              const std::string& to) {
  outbox[node].push_back({ticket, q, to});
  if (!lingering) gather();
}

// Arms the timer that sends the outbox's batch request_linger from now (m held).
void remote_world::impl::gather() {
  lingering = true;
  linger.expires_after(request_linger);
  linger.async_wait([this](const boost::system::error_code&) { flush_requests(); });
}

void remote_world::impl::later(unique_function<void()> chore) {
  detail::asio::post(asking, std::move(chore));
}

// Sends a request to a node, its answer awaited until the timeout (m held).
pending_request& remote_world::impl::send(const std::string& node, const world_request& q, world_reply reply,
                                          line_key promise) {
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
  auto& sent = pending.at(ticket);
  if (q.what == world_request::kind::enter && !node_of.contains(q.player)) sent.again = q;
  return sent;
}

// Sends the batch gathered for each node (on `io`). One batch goes out at a time, so that a node
// hears a player's requests in order: those made meanwhile wait for the next.
void remote_world::impl::flush_requests() {
  std::unique_lock lock(m);
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
  lingering = false;
  if (!outbox.empty()) gather();
}

void remote_world::impl::on_answers(std::string_view data) {
  auto batch = wire::decode_answer_batch(data);
  if (!batch) {
    bad_messages.fetch_add(1, std::memory_order_relaxed);
    return warn(fmt::format("gateway {}: {}", opt.gateway, batch.error().message));
  }
  if (newer_start(batch->node, batch->epoch)) lose(batch->node);
  answers_done done;
  auto& [ready, resubmit, kept, lost] = done;
  {
    std::lock_guard lock(m);
    for (auto& a : batch->answers) {
      auto p = pending.find(a.ticket);
      if (p == pending.end()) continue;  // timed out already
      if (!p->second.journey_to.empty() && p->second.epoch != 0 && p->second.epoch != batch->epoch) {
        later([this, ticket = p->first, r = std::move(p->second)]() mutable {
          settle(ticket, std::move(r), clock::now());
        });
        pending.erase(p);
        continue;
      }
      answered(p->second.player, std::exchange(p->second.promise, {}), a.result,
               p->second.journey_to.empty() ? batch->node : p->second.journey_to);
      if (p->second.farewell) {
        pending.erase(p);
        continue;
      }
      if (!p->second.journey_to.empty()) {  // the handing node's answer: moved, or stayed
        journey_answered(p->second, batch->node, std::move(a.result), done);
        pending.erase(p);
        continue;
      }
      if (p->second.what == world_request::kind::enter && a.result.code() == world_errc::already_in_scene) {
        later([this, r = std::move(p->second), e = std::move(a.result)]() mutable {
          find_placed(std::move(r), std::move(e));
        });
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
      follow(p->second, batch->node, a.result);
      ready.emplace_back(std::move(p->second.reply), std::move(a.result));
      pending.erase(p);
    }
  }
  answers.fetch_add(ready.size(), std::memory_order_relaxed);
  for (auto& [player, to] : kept) given_up(player, batch->node, to);
  for (auto& [reply, result] : ready)
    if (reply) reply(std::move(result));
  for (auto& [node, player] : lost) orphaned(node, player);
  for (auto& [q, reply] : resubmit) submit(q, std::move(reply));
}

// An answer moves the route only while the route is where the request went (m held): a move
// answered by the node a player has just travelled from says nothing of where it stands now.
void remote_world::impl::follow(const detail::pending_request& r, const std::string& node,
                                const world_result& result) {
  const auto route_now = node_of.find(r.player);
  if (route_now != node_of.end() && route_now->second.node != node) return;
  if (result.has_value() && r.what != world_request::kind::leave)
    placed(r, node, result->line.scene);
  else if (r.what == world_request::kind::leave || result.code() == world_errc::not_in_scene)
    node_of.erase(r.player);
}

void remote_world::impl::time_out(clock::time_point now) {
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
      if (p->second.again) {  // placed or not? Its node is asked
        later([this, ticket = p->first, r = std::move(p->second), now]() mutable {
          settle_entry(ticket, std::move(r), now);
        });
        p = pending.erase(p);
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
                              fmt::format("player {}: node {} did not answer within {} ms", p->second.player,
                                          p->second.node, opt.answer_timeout.count())));
      p = pending.erase(p);
    }
  }
  timeouts.fetch_add(ready.size(), std::memory_order_relaxed);
  for (auto& [reply, result] : ready)
    if (reply) reply(std::move(result));
  for (auto& [q, reply] : resubmit) submit(q, std::move(reply));
}

// An entry answered already_in_scene: the player stands on some node (placed again after its node
// died, a request of its own that a live node took over placed it first), maybe not the one that
// answered. Every live node is asked where it stands; the first that holds it answers the entry with
// its place and takes its requests. None does: the refusal stands.
void remote_world::impl::find_placed(pending_request r, world_result already) {
  std::vector<std::string> live;
  {
    std::lock_guard lock(m);
    for (const auto& [name, n] : nodes) live.push_back(name);
  }
  for (const auto& node : live) {
    auto there = ask_where(node, r.player);
    if (!there || !*there) continue;
    {
      std::lock_guard lock(m);
      placed(r, node, (*there)->line.scene);
    }
    if (r.reply) r.reply(world_result(**there));
    return;
  }
  if (r.reply) r.reply(std::move(already));
}

// An entry of a player standing nowhere whose answer did not come in time (lost, or late from a busy
// node): placed there, it stands there; its node gone, it goes to a live node. Otherwise it waits
// again under its ticket (a late answer settles it too) until settle_within: a request still queued
// on a slow node must not place the player twice. Then a node that says "not here" has it sent
// elsewhere, and a silent one is given up: the client is closed (no_place).
void remote_world::impl::settle_entry(std::uint64_t ticket, pending_request r, clock::time_point now) {
  if (r.settle_by == clock::time_point{}) {
    timeouts.fetch_add(1, std::memory_order_relaxed);
    r.settle_by = now + detail::settle_within;
  }
  const auto there = ask_where(r.node, r.player);
  world_result result =
      fail(world_errc::node_unavailable, fmt::format("player {}: node {} did not place it within {} s",
                                                     r.player, r.node, detail::settle_within.count()));
  bool elsewhere = false;
  {
    std::lock_guard lock(m);
    const bool live = nodes.contains(r.node);
    if (there && *there) {
      result = **there;
      follow(r, r.node, result);
    } else if (live && now < r.settle_by && !stopping) {
      r.deadline = now + opt.answer_timeout;
      pending.emplace(ticket, std::move(r));
      return;
    } else {
      elsewhere = !stopping && (there || !live);
    }
  }
  if (elsewhere) {
    sent_again.fetch_add(1, std::memory_order_relaxed);
    return submit(*r.again, std::move(r.reply));
  }
  if (!result) warn(fmt::format("gateway {}: {}", opt.gateway, result.error().message));
  if (r.reply) r.reply(std::move(result));
}

void remote_world::impl::read_nodes(clock::time_point now) {
  std::vector<std::string> known;
  {
    std::lock_guard lock(m);
    for (const auto& [name, n] : nodes) known.push_back(name);
  }
  // A node known here and left out of a listing is read on its own: losing it would place its
  // players again while it still holds them.
  auto all = list_nodes(nodes_bucket, known);
  if (!all) return warn(fmt::format("gateway {}: {}", opt.gateway, all.error().message));
  std::vector<std::string> lost;
  {
    std::lock_guard lock(m);
    nodes_read = now;
    std::map<std::string, known_node> live;
    for (auto& e : *all) {
      if (e.record.dead || e.record.starting) continue;  // a starting node does not listen yet
      std::string name = e.record.name;
      live.emplace(std::move(name), known_node{std::move(e.record), 0});
    }
    // A node started again under its name (a new epoch) before anyone declared its previous start
    // dead: that start is lost all the same, its players are placed again.
    for (const auto& [name, n] : nodes)
      if (const auto now_is = live.find(name);
          now_is == live.end() || now_is->second.record.epoch != n.record.epoch) {
        lost.push_back(name);
        bury(name, n.record.epoch);
      }
    nodes = std::move(live);
  }
  for (const auto& name : lost) lose(name);
}

// An answer from a newer start of a node than the one known: the known start died and came back
// before anyone declared it dead, and is lost all the same (before the answer is applied).
bool remote_world::impl::newer_start(const std::string& node, std::uint64_t epoch) {
  std::lock_guard lock(m);
  const auto known = nodes.find(node);
  if (known == nodes.end() || epoch <= known->second.record.epoch) return false;
  bury(node, known->second.record.epoch);
  known->second.record.epoch = epoch;
  return true;
}

// A node declared dead: its lines leave the front's views, its players are handed back to the
// front to be placed again.
void remote_world::impl::lose(const std::string& node) {
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
      const std::vector<line_event> gone = v.standing.left();
      for (const auto& e : gone)
        if (auto o = orphans.find(e.player); !e.monster && o != orphans.end())
          o->second = orphan{e.player, v.line.scene, e.at};
      if (!gone.empty() && opt.on_line_events) opt.on_line_events(v.line, it->first.phase, gone);
      it = lines.erase(it);
    }
  }
  nodes_lost.fetch_add(1, std::memory_order_relaxed);
  players_orphaned.fetch_add(orphans.size(), std::memory_order_relaxed);
  std::vector<orphan> list;
  for (auto& [p, o] : orphans) list.push_back(o);
  if (opt.on_node_lost) opt.on_node_lost(node, std::move(list));
  fail_over(node);
}

// The requests a dead node will never answer: an entry of a player standing nowhere yet goes to a
// live node (the client waits; nothing of it stands on the dead node), the rest are answered
// node_unavailable at once (their players are placed again as the dead node's). Journeys are left to
// their settling: the target may have the player.
void remote_world::impl::fail_over(const std::string& node) {
  std::vector<std::pair<world_request, world_reply>> resubmit;
  std::vector<world_reply> refused;
  {
    std::lock_guard lock(m);
    for (auto p = pending.begin(); p != pending.end();) {
      pending_request& r = p->second;
      if (r.node != node || !r.journey_to.empty() || r.farewell) {
        ++p;
        continue;
      }
      unpromise(std::exchange(r.promise, {}));
      if (r.again) {
        resubmit.emplace_back(*r.again, std::move(r.reply));
      } else {
        refused.push_back(std::move(r.reply));
      }
      p = pending.erase(p);
    }
  }
  sent_again.fetch_add(resubmit.size(), std::memory_order_relaxed);
  for (auto& reply : refused)
    if (reply) reply(fail(world_errc::node_unavailable, fmt::format("node {} was declared dead", node)));
  for (auto& [q, reply] : resubmit) submit(q, std::move(reply));
}

// ---- the public face -------------------------------------------------------------------

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
  // Stopping runs what was queued first: the batch being gathered goes out and the token writes
  // are made, then the claims and askings run (a request they make then is not sent).
  impl_->io.join();
  impl_->asking.join();
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
  raw->read_nodes(clock::now());
  raw->resync_all();
  return w;
}

void remote_world::submit(const world_request& request, world_reply reply) {
  impl_->submit(request, std::move(reply));
}

void remote_world::remember(std::string_view token, player_id player, std::string_view name,
                            unique_function<void()> shared) {
  if (!impl_->opt.sessions) {
    if (shared) shared();
    return;
  }
  detail::asio::post(impl_->keeper, [i = impl_.get(), t = std::string(token), player, n = std::string(name),
                                     shared = std::move(shared)]() mutable {
    i->remember(t, player, n);
    if (shared) shared();
  });
}

void remote_world::forget(std::string_view token) {
  if (!impl_->opt.sessions) return;
  detail::asio::post(impl_->keeper, [i = impl_.get(), t = std::string(token)] { i->forget(t); });
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
  // The nodes first: a request to a node declared dead goes elsewhere before its timeout is read.
  if (now - impl_->nodes_read >= nodes_period) impl_->read_nodes(now);
  impl_->time_out(now);
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
                       n(i.entries_to_new_line),
                       n(i.sent_again),
                       n(i.from_dead_starts),
                       n(i.unplaced)};
  std::lock_guard lock(i.m);
  s.live_nodes = static_cast<std::uint32_t>(i.nodes.size());
  s.players = static_cast<std::uint32_t>(i.node_of.size());
  return s;
}

}  // namespace scenert::cluster
