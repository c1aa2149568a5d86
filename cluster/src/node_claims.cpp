// node_endpoint: a gateway's claim of a player (a client resuming through it) or its question of
// where a player stands, answered once the player is no longer on its way: a player between lines,
// into or out of a phase, or in a hand-over between nodes is looked at again on the endpoint's
// executor (a timer, never a sleeping thread), and the world is asked without waiting for it.
// Handlers on the executor hold `this`: they run only on its thread, which stop() joins.

#include "node_endpoint_impl.hpp"
#include "subjects.hpp"

#include <boost/asio/post.hpp>

#include <fmt/format.h>

namespace scenert::cluster {

void node_endpoint::impl::on_claim(std::string_view data, std::string_view reply, bool take) {
  if (reply.empty()) return;
  auto c = wire::decode_claim(data);
  if (!c || !valid_name(c->gateway)) {
    bad_batches.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  claims.fetch_add(1, std::memory_order_relaxed);
  auto job = std::make_shared<claim_job>(claim_job{std::move(*c), std::string(reply), take, 0});
  asio::post(io, [this, job] { settle_transit(job); });
}

void node_endpoint::impl::after(clock::duration wait, unique_function<void()> then) {
  auto timer = std::make_shared<asio::steady_timer>(io, wait);
  timer->async_wait([timer, then = std::move(then)](boost::system::error_code ec) mutable {
    if (!ec) then();
  });
}

// A player being handed over from or to this node is answered once the hand-over ended; one handed
// over stands there, whatever this world says until its leave is applied.
void node_endpoint::impl::settle_transit(std::shared_ptr<claim_job> job) {
  const player_id p = job->claim.player;
  if (in_transit(p) && job->tries++ < settle_tries)
    return after(settle_wait, [this, job] { settle_transit(job); });
  job->tries = 0;
  if (!where || handed_over(p)) return answer_claim(*job, location{});
  ask_where(job);
}

// A player on its way between lines or phases is answered once it got there: the answer that would
// have told its client went to the gateway that asked, which may be gone.
void node_endpoint::impl::settle_place(std::shared_ptr<claim_job> job, location at) {
  const bool moving = at.where == location::state::switching || at.phase_pending;
  if (!moving || job->tries++ >= settle_tries) return answer_claim(*job, at);
  after(settle_wait, [this, job] { ask_where(job); });
}

// The world answers on its own thread; the answer comes back to the executor.
void node_endpoint::impl::ask_where(std::shared_ptr<claim_job> job) {
  where(job->claim.player, [weak = weak_from_this(), job](location at) {
    if (auto self = weak.lock())
      asio::post(self->io, [s = self.get(), job, at] { s->settle_place(job, at); });
  });
}

void node_endpoint::impl::answer_claim(const claim_job& job, location at) {
  const auto& c = job.claim;
  if (job.take && at.where != location::state::none) {  // its answers and its fate are the claimer's now
    std::lock_guard lock(gateways_m);
    heard(c.gateway, clock::now());
    gateway_of[c.player] = c.gateway;
  }
  wire::claim_answer a{
      node, fail(world_errc::not_in_scene, fmt::format("player {}: not on node {}", c.player, node))};
  // A player between two lines is claimed where it goes: its events come from there.
  if (at.where == location::state::in_line)
    a.result = placement{at.line, at.space, at.phase};
  else if (at.where == location::state::switching)
    a.result = placement{at.target, 0, 0};
  publish(job.reply, wire::encode(a));
}

}  // namespace scenert::cluster
