// Journeys: a player going from one node to another is handed over by the node it stands on, its
// requests held until it arrived; a journey whose answer did not come is settled by asking the
// nodes. A party's instance lives on one node, which its members travel to; a team-mate its node
// does not have is looked for on the others.

#include "records.hpp"
#include "remote_world_impl.hpp"
#include "subjects.hpp"

#include <fmt/format.h>

namespace scenert::cluster {

using detail::claim_timeout;
using detail::clock;
using detail::line_key;
using detail::line_view;
using detail::pending_request;
using detail::settle_within;
using detail::view_key;

namespace {

// A journey given up is watched this long for its target's line showing the player entering and
// leaving (longer than a target node remembers an arrival it was told to let go).
constexpr auto given_up_for = std::chrono::seconds(30);

std::string party_key(party_id owner, scene_id scene) { return fmt::format("party.{}.{}", owner, scene); }

}  // namespace

// A journey to another node (m held): the node the player stands on hands it over, and answers
// once the target placed it (the player left) or refused it (it stays). The route switches on
// that answer; the requests held meanwhile follow it. A gateway dying meanwhile changes nothing.
pending_request& remote_world::impl::depart(player_id p, const std::string& from, const std::string& to,
                                            const world_request& q, world_reply reply, line_key promise) {
  travelling[p];
  const std::uint64_t ticket = next_ticket++;
  auto& r = pending
                .emplace(ticket, pending_request{std::move(reply), p, q.what, from,
                                                 clock::now() + opt.answer_timeout, 0, to, false, promise})
                .first->second;
  if (const auto known = nodes.find(from); known != nodes.end()) r.epoch = known->second.record.epoch;
  push(from, ticket, q, to);
  return r;
}

// Whether a request takes its player to another node (m held): a team-mate or a line hosted there,
// or (`placed_on`) the node of the line a scene change or a way home goes to.
bool remote_world::impl::travels(const world_request& q, const std::string& line_host,
                                 const std::string& placed_on, line_key promise, world_reply& reply) {
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

// A journey's end (m held): `at` is where the player stands now (empty: nowhere known), in
// `scene` (0: where it was); the requests held meanwhile go (to `resubmit`) there. A node declared
// dead since the journey began (stopped, it woke to carry out the hand-over, or its handing start
// to refuse it) holds the player no more: it is returned, to be placed again (`orphaned`). A target
// started again meanwhile under its name is taken at its word: the hand-over went to its new start.
std::optional<orphan> remote_world::impl::arrive(
    const pending_request& r, const std::string& at, bool moved, scene_id scene,
    std::vector<std::pair<world_request, world_reply>>& resubmit) {
  release(r.player, resubmit);
  (moved ? journeys : journeys_failed).fetch_add(1, std::memory_order_relaxed);
  if (at.empty()) return (void)node_of.erase(r.player), std::nullopt;
  if (const auto there = nodes.find(at);
      there == nodes.end() || (!moved && r.epoch != 0 && there->second.record.epoch != r.epoch)) {
    const auto was = node_of.find(r.player);
    const scene_id stood = moved ? scene : was != node_of.end() ? was->second.scene : 0;
    if (was != node_of.end()) node_of.erase(was);
    return orphan{r.player, stood, std::nullopt};
  }
  if (moved)
    placed(r, at, scene);
  else
    node_of[r.player].node = at;
  return std::nullopt;
}

// The handing node's answer to a journey (m held): the player moved, or stayed.
void remote_world::impl::journey_answered(pending_request& r, const std::string& from, world_result result,
                                          detail::answers_done& done) {
  const bool moved = result.has_value();
  const std::string& at = moved ? r.journey_to : from;
  if (auto gone = arrive(r, at, moved, moved ? result->line.scene : 0, done.resubmit))
    done.lost.emplace_back(at, *gone);
  if (!moved && result.code() == world_errc::node_unavailable) done.kept.emplace_back(r.player, r.journey_to);
  done.ready.emplace_back(std::move(r.reply), std::move(result));
}

// A player whose node is gone, handed to the front to be placed again (m not held).
void remote_world::impl::orphaned(const std::string& node, orphan lost) {
  players_orphaned.fetch_add(1, std::memory_order_relaxed);
  if (opt.on_node_lost) opt.on_node_lost(node, {std::move(lost)});
}

// Ends a player's hold (m held): the requests it made meanwhile go to `resubmit`.
void remote_world::impl::release(player_id p, std::vector<std::pair<world_request, world_reply>>& resubmit) {
  auto t = travelling.find(p);
  if (t == travelling.end()) return;
  for (auto& h : t->second.held) resubmit.push_back(std::move(h));
  travelling.erase(t);
}

// A party's instance of a scene lives on one node, named in the sessions bucket before anyone
// enters it: the first member claims it for the node it stands on (compare-and-set; a record of a
// dead node is taken over), the others travel there from wherever they stand. So two members
// entering at once through two nodes never open two instances. Its other requests wait meanwhile.
void remote_world::impl::to_party(const world_request& q, world_reply reply) {
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
cluster_result<std::optional<placement>> remote_world::impl::ask_where(const std::string& node, player_id p) {
  auto answer = link.request(subjects::where(node), wire::encode(wire::claim{p, opt.gateway}), claim_timeout);
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
// Found nowhere (its node gone, or a new start of it that never had it), the player is handed to
// the front to be placed again.
void remote_world::impl::settle(std::uint64_t ticket, pending_request r, clock::time_point now) {
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
  std::optional<orphan> gone;
  {
    std::lock_guard lock(m);
    if (silent && now < r.settle_by && !stopping) {
      r.deadline = now + opt.answer_timeout;
      pending.emplace(ticket, std::move(r));
      return;
    }
    gone = arrive(r, at, moved, moved ? result->line.scene : 0, resubmit);
    // Nowhere: its node is gone, or said "not here" (a new start of it, the old one died handing it).
    lost = at.empty() && (!nodes.contains(r.node) || (source && !*source));
  }
  if (!moved && at == r.node) given_up(r.player, r.node, r.journey_to);
  if (r.reply) r.reply(std::move(result));
  if (lost) orphaned(r.node, orphan{r.player, 0, std::nullopt});
  if (gone) orphaned(at, *gone);
  for (auto& [q, reply] : resubmit) submit(q, std::move(reply));
}

// A team-mate its node does not have may stand on another node: asked of each, then travelled to.
void remote_world::impl::find_mate(pending_request r, std::string from, world_result not_found) {
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

// A journey given up, its player kept by the node it went from: the target may have placed it
// meanwhile and may let it go after the answer (the front saw it enter the target's line, then
// leave it). Watched for a while, so that the front hears where the player stands still.
void remote_world::impl::given_up(player_id p, const std::string& from, const std::string& to) {
  if (!opt.on_stands_on) return;
  const auto now = clock::now();
  std::lock_guard lock(lines_m);
  std::erase_if(gave_up, [now](const auto& g) { return now - g.second.at > given_up_for; });
  gave_up.insert_or_assign(p, detail::given_up{from, to, now});
  show_kept(p);
}

// Tells the front the view a player of a given-up journey stands on, once no line of its target
// holds it (lines_m held). The front ignores it while the player stands on a line in its eyes.
void remote_world::impl::show_kept(player_id p) {
  const auto g = gave_up.find(p);
  if (g == gave_up.end()) return;
  const line_view* kept = nullptr;
  view_key where{};
  for (const auto& [k, v] : lines) {
    if (!v.standing.holds(p)) continue;
    if (v.node == g->second.to) return;  // the target holds it: its leaving will tell
    if (v.node == g->second.from) kept = &v, where = k;
  }
  if (kept != nullptr) opt.on_stands_on(p, kept->line, where.phase);
}

// Lines' leavings (lines_m held): a player of a given-up journey that left a line is shown where it
// stands still, if no line of its target holds it (its own later journeys are no harm: the front
// ignores a player it sees on a line).
void remote_world::impl::after_leaving(std::span<const line_event> events) {
  if (gave_up.empty()) return;
  for (const auto& e : events) {
    if (e.monster || e.what != line_event::kind::left) continue;
    if (gave_up.contains(e.player)) show_kept(e.player);
  }
}

}  // namespace scenert::cluster
