// Where a request goes: the player's own node, or by the table's lines across the nodes, the line
// the scene's policy picks among every live node's, counted there until its events show the player.

#include <scenert/cluster/line_choice.hpp>
#include "remote_world_impl.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace scenert::cluster {

using detail::clock;
using detail::line_key;
using detail::pending_request;
using detail::view_key;

namespace {

// A player placed on a line counts there until the line's events show it (a tick or so later), or
// this long at most (its entry may have come before the answer).
constexpr auto heard_within = std::chrono::seconds(1);

}  // namespace

// The node a player's request goes to (m held): its own, its mate's, or the least loaded of those
// hosting the scene it enters.
std::string remote_world::impl::route(const world_request& q) {
  if (auto at = node_of.find(q.player); at != node_of.end()) return at->second.node;
  if (q.what == world_request::kind::join_team)
    if (auto at = node_of.find(q.mate); at != node_of.end()) return at->second.node;
  return least_loaded(entered(q));
}

// The scene a request puts its player in (an entry, a scene change, an instance); 0 for others.
scene_id remote_world::impl::entered(const world_request& q) {
  using k = world_request::kind;
  return q.what == k::enter || q.what == k::transfer || q.what == k::enter_instance ? q.scene : 0;
}

// Whether anyone may share the scene's lines (its policy places players): not a phase, not a
// dungeon of private instances.
bool remote_world::impl::shared(scene_id scene) const {
  const scene_def* d = opt.table ? opt.table->find_scene(scene) : nullptr;
  return d != nullptr && d->kind != scene_kind::space && d->instances == instance_mode::shared;
}

// The scene a request puts its player in by the scene's policy, an entry or a scene change into a
// shared scene; 0 for any other request.
scene_id remote_world::impl::by_policy(const world_request& q) const {
  using k = world_request::kind;
  return (q.what == k::enter || q.what == k::transfer) && shared(q.scene) ? q.scene : 0;
}

// Whether a request enters a private instance (a party's, or a solo player's own), as the world
// decides by the scene's `instances`: the scene left is then the way home.
bool remote_world::impl::private_instance(const world_request& q) const {
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
scene_id remote_world::impl::home_of(player_id p) {
  std::lock_guard lock(m);
  auto at = node_of.find(p);
  if (at == node_of.end() || at->second.instance == 0 || at->second.instance != at->second.scene) return 0;
  if (at->second.home != 0) return shared(at->second.home) ? at->second.home : 0;
  const auto town = std::find_if(opt.table->scenes.begin(), opt.table->scenes.end(),
                                 [](const scene_def& s) { return s.kind == scene_kind::town; });
  return town != opt.table->scenes.end() && shared(town->id) && !serves(at->second.node, town->id) ? town->id
                                                                                                   : 0;
}

// Notes where a request placed its player (m held): its node and scene, and its way home.
void remote_world::impl::placed(const pending_request& r, const std::string& node, scene_id scene) {
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
std::vector<remote_world::impl::heard_line> remote_world::impl::heard_lines(scene_id scene) {
  std::vector<heard_line> out;
  std::lock_guard lock(lines_m);
  for (auto it = lines.lower_bound(view_key{scene, 0, 0}); it != lines.end() && it->first.scene == scene;
       ++it) {
    if (!out.empty() && out.back().line == it->first.line)
      out.back().players += it->second.standing.players();
    else
      out.push_back({it->second.node, it->first.line, it->second.standing.players()});
  }
  return out;
}

// Where an entry or a scene change goes (m held): the node of the line the scene's policy picks
// among every live node's with room, counted in `promise` until heard there; when all are full,
// where a line opens. A line heard empty is passed over: it may have closed (its node knows). A line
// opening for players not answered yet counts as a line of theirs (id 0), so that a burst into a
// full scene fills the line it opens before another node opens one.
std::string remote_world::impl::place(player_id p, scene_id scene, const std::vector<heard_line>& heard,
                                      line_key& promise) {
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
void remote_world::impl::answered(player_id p, line_key promise, const world_result& r,
                                  const std::string& node) {
  unpromise(promise);
  if (promise.scene == 0 || !r || r->line.scene != promise.scene) return;
  line_key on{promise.scene, r->line.line, node, 0};
  ++promised[on];
  auto& was = unheard[p];
  unpromise(std::exchange(was, {std::move(on), clock::now() + heard_within}).first);
}

// Players heard entering lines (lines_m held; takes m): they count there by their events now.
void remote_world::impl::heard_entering() {
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
void remote_world::impl::unpromise(line_key promise) {
  if (promise.scene == 0) return;
  if (auto p = promised.find(promise); p != promised.end() && --p->second == 0) promised.erase(p);
}

// The node that hosts a line, as its events said (0 generation: the line open now under that id).
std::string remote_world::impl::host_of(line_handle l) {
  std::lock_guard lock(lines_m);
  auto v = lines.find(view_key{l.scene, l.line, 0});
  if (v == lines.end() || (l.generation != 0 && v->second.line.generation != l.generation)) return {};
  return v->second.node;
}

void remote_world::impl::submit(const world_request& q, world_reply reply) {
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
  auto refuse = [&](std::atomic<std::uint64_t>& counted, std::string why) {
    lock.unlock();
    counted.fetch_add(1, std::memory_order_relaxed);
    if (reply) reply(fail(world_errc::node_unavailable, std::move(why)));
  };
  const auto at = node_of.find(q.player);
  // Standing nowhere this gateway knows (its node died and its placement again is under way, or its
  // entry is): sent to any node, a request other than an entry would place it a second time.
  if (at == node_of.end() && q.what != k::enter && q.what != k::enter_line && q.what != k::leave)
    return refuse(unplaced,
                  fmt::format("player {}: stands on no node yet (its placement is under way)", q.player));
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
  if (node.empty())
    return refuse(no_node, fmt::format("player {}: no live scene node in the cluster", q.player));
  send(node, q, std::move(reply), promise).instance = private_instance(q);
}

}  // namespace scenert::cluster
