#include <scenert/runtime/service.hpp>

#include <exception>
#include <utility>

#include "service_state.hpp"

namespace scenert {

namespace {

// The text of the exception being handled, for the log.
const char* current_what() noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

void report(std::string* failure, const std::string& name, const char* stage, const char* what) {
  if (failure == nullptr) return;
  failure->assign("service '").append(name).append("': ").append(stage).append(" threw: ").append(what);
}

}  // namespace

service::service(std::string name) : state_(std::make_unique<detail::service_state>(std::move(name))) {}

service::~service() = default;

bool service::post(message m) {
  if (!state_->box.post(std::move(m))) return false;
  mail_.store(true, std::memory_order_release);
  return true;
}

const std::string& service::name() const noexcept { return state_->name; }

std::uint64_t service::failures() const noexcept { return state_->failures.load(std::memory_order_relaxed); }

std::size_t service::mailbox_depth() const noexcept { return state_->box.depth(); }

std::uint64_t service::dropped_messages() const noexcept { return state_->box.dropped(); }

void service::init() {
  if (initialized_) return;
  on_init();
  initialized_ = true;
}

void service::activate() {
  init();
  consecutive_failures_ = 0;
  quarantined_.store(false, std::memory_order_release);
  state_->box.open();
  on_active();
  active_.store(true, std::memory_order_release);
}

tick_outcome service::tick_slow(const tick_context& ctx, unsigned quarantine_after, std::size_t mailbox_batch,
                                std::string* failure) noexcept {
  if (quarantined_.load(std::memory_order_relaxed)) return tick_outcome::quarantined;
  try {
    // The exchange reads the latest flag, so a post whose flag it clears is visible to the drain;
    // a post flagging later is drained next tick.
    if (mail_.load(std::memory_order_relaxed) && mail_.exchange(false, std::memory_order_acquire)) {
      const std::size_t ran = state_->box.drain([](message& m) { m(); }, mailbox_batch);
      if (ran == mailbox_batch) mail_.store(true, std::memory_order_relaxed);  // more may wait
    }
    on_tick(ctx);
  } catch (...) {
    mail_.store(true, std::memory_order_relaxed);  // a throwing message may leave others queued
    return tick_threw(quarantine_after, failure);
  }
  consecutive_failures_ = 0;
  return tick_outcome::ok;
}

tick_outcome service::tick_threw(unsigned quarantine_after, std::string* failure) noexcept {
  report(failure, state_->name, "tick", current_what());
  return fail_tick(quarantine_after);
}

tick_outcome service::fail_tick(unsigned quarantine_after) noexcept {
  state_->failures.fetch_add(1, std::memory_order_relaxed);
  ++consecutive_failures_;
  if (quarantine_after == 0 || consecutive_failures_ < quarantine_after) return tick_outcome::failed;
  quarantined_.store(true, std::memory_order_release);
  try {
    on_quarantine();
  } catch (...) {  // nothing more to do for a service already quarantined
  }
  return tick_outcome::quarantined;
}

void service::deactivate(std::string* failure) noexcept {
  state_->box.close();
  for (;;) {  // every message still queued runs; one that throws is counted and the rest go on
    try {
      (void)state_->box.drain([](message& m) { m(); });
      break;
    } catch (...) {
      state_->failures.fetch_add(1, std::memory_order_relaxed);
      report(failure, state_->name, "message", current_what());
    }
  }
  try {
    on_inactive();
  } catch (...) {
    state_->failures.fetch_add(1, std::memory_order_relaxed);
    report(failure, state_->name, "on_inactive", current_what());
  }
  active_.store(false, std::memory_order_release);
}

}  // namespace scenert
