#include "worker_detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>

namespace scenert::bots {
using namespace detail;

void move_ring::put(std::uint64_t key, std::int64_t ns) noexcept {
  entry& e = slots[next++ % size];
  e.sent.store(ns, std::memory_order_relaxed);
  e.key.store(key, std::memory_order_release);
}

// A position the bot sent twice among its last `size` moves (back and forth, or kept by a refusal)
// names no one move: which one a delivery answers is unknown, so it is not timed (the first slot
// found used to answer, up to `size` moves earlier: seconds of latency that never were).
std::optional<std::int64_t> move_ring::find(std::uint64_t key) const noexcept {
  std::optional<std::int64_t> sent;
  for (const entry& e : slots) {
    if (e.key.load(std::memory_order_acquire) != key) continue;
    if (sent) return std::nullopt;
    sent = e.sent.load(std::memory_order_relaxed);
  }
  return sent;
}

shared_state::shared_state(const bots_options& o, const bots_plan& p)
    : opt(o), plan(p), pid_of(p.bots.size()), rings(std::make_unique<move_ring[]>(p.bots.size())) {
  for (const auto& t : o.targets) targets.emplace_back(asio::ip::make_address(t.host), t.port);
}

worker::worker(shared_state& s, unsigned index) : shared_(s), index_(index) {}

void worker::add(std::uint32_t bot_index) {
  auto b = std::make_unique<bot>();
  b->index = bot_index;
  b->plan = &shared_.plan.bots[bot_index];
  b->rng.seed(b->plan->seed);
  bots_.push_back(std::move(b));
}

void worker::run() {
  tick();
  io_.run();
  stats_.own.busiest_thread_cpu_seconds = thread_cpu_seconds();
  stats_.own.busiest_thread_wait_seconds = thread_wait_seconds();
}

void worker::stop() {
  asio::post(io_, [this] {
    stopping_ = true;
    timer_.cancel();
    for (auto& b : bots_)
      if (b->at != bot::stage::waiting && b->at != bot::stage::done) close(*b, "bye");
    io_.stop();
  });
}

worker::views_now worker::views() const {
  views_now out;
  for (const auto& b : bots_) {
    if (b->at == bot::stage::logging_in && b->pid == 0) out.logins_unanswered = true;
    if (b->resuming && b->at != bot::stage::done) {  // its player stands where it was, unseen by it
      out.in_transit.push_back(b->pid);
      continue;
    }
    if (b->at != bot::stage::playing && b->at != bot::stage::logging_in) continue;
    // A bot logging in or between lines has no view to check yet, and its viewers may or may not
    // have heard of it: it is left out on both sides.
    if (b->at == bot::stage::logging_in || b->pending || !b->has_position) {
      if (b->pid != 0) out.in_transit.push_back(b->pid);
      continue;
    }
    bot_view v{b->pid, b->where.scene, b->where.line, b->where.phase, b->x, b->z, {}};
    v.seen.reserve(b->view.size());
    for (const auto& [pid, at] : b->view) v.seen.push_back({pid, at.first, at.second});
    out.views.push_back(std::move(v));
  }
  return out;
}

// ---- the plan, every tick ---------------------------------------------------------------------

// A bot still without its view: past its login timeout (or, resuming, past the time it had to get
// its player back) it is an error, with its reason.
void worker::check_login_time(bot& b, clock::time_point now) {
  if (b.resuming && now > b.resume_by) {
    error(b, fmt::format("bot {} (player {}): not back within {} ms of its server dropping it (last: {})",
                         b.index, b.pid, shared_.opt.login_timeout.count(), b.last_loss));
    ++stats_.failed_resumes[fmt::format("not back in time (last: {})", b.last_loss)];
    close(b, "resume_failed");
  } else if (!b.resuming && now - b.login_started > shared_.opt.login_timeout) {
    error(b, fmt::format("bot {}: no view (202) within {} ms of connecting", b.index,
                         shared_.opt.login_timeout.count()));
    close(b, "timeout");
  }
}

void worker::tick() {
  if (stopping_) return;
  const auto now = clock::now();
  if (tick_due_ != clock::time_point{})
    stats_.own.loop_lag.record(std::max(now - tick_due_, clock::duration{}));
  const auto elapsed = now - shared_.start;
  const bool paused = shared_.paused.load(std::memory_order_relaxed);
  const bool scenert = shared_.opt.protocol == bots_protocol::scenert;
  const auto move_period = std::chrono::duration_cast<clock::duration>(
      std::chrono::duration<double>(1.0 / std::max(shared_.opt.move_hz, 1e-3)));
  for (auto& owned : bots_) {
    bot& b = *owned;
    switch (b.at) {
      case bot::stage::waiting:
        if (!paused && elapsed >= b.plan->arrive) connect(b);
        break;
      case bot::stage::reconnecting:
        if (now >= b.next_try) connect(b);
        break;
      case bot::stage::connecting:
      case bot::stage::logging_in:
        check_login_time(b, now);
        break;
      case bot::stage::playing:
        if (scenert && now >= b.next_heartbeat) {
          send(b, net::heartbeat{static_cast<std::uint64_t>(ns_of(now)), 0});
          b.next_heartbeat = now + std::chrono::duration_cast<clock::duration>(
                                       std::chrono::duration<double>(shared_.opt.heartbeat_every));
        }
        if (paused) break;
        if (b.plan->leave < shared_.plan.length && elapsed >= b.plan->leave) {
          depart(b, now);
          break;
        }
        if (now >= b.next_move) {
          move(b, now);
          b.next_move = std::max(b.next_move + move_period, now);
        }
        for (; b.next_step < b.plan->steps.size() && b.plan->steps[b.next_step].at <= elapsed; ++b.next_step)
          act(b, b.plan->steps[b.next_step], now);
        break;
      case bot::stage::leaving:
        if (now >= b.leave_by) close(b, "bye");
        break;
      case bot::stage::done:
        break;
    }
  }
  flush();
  tick_due_ = now + tick_period;
  timer_.expires_at(tick_due_);
  timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) tick();
  });
}

// ---- connections ------------------------------------------------------------------------------

}  // namespace scenert::bots
