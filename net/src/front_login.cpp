// Logins: a guest (seed 002's clients send nothing first), an explicit login by name, or a resume
// by token of a player whose connection dropped less than resume_ms ago (or that is logged in on
// another connection, which is closed, or that another front of a cluster held: it is claimed).
#include "front_impl.hpp"

#include <fmt/format.h>

namespace scenert::net {

namespace {

constexpr std::size_t max_name_bytes = 32;

// Why a login name is not allowed, or empty when it is.
std::string name_problem(std::string_view name) {
  if (name.size() > max_name_bytes)
    return fmt::format("name of {} bytes: at most {} allowed", name.size(), max_name_bytes);
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f) return fmt::format("name holds the control character 0x{:02x}", c);
  return {};
}

void add(std::atomic<std::uint64_t>& c) { front_counters::add(c); }

}  // namespace

std::string login_desk::new_token() {
  std::string t;
  for (int i = 0; i < 4; ++i) t += fmt::format("{:08x}", entropy_());
  return t;
}

// A client that sends no login within guest_wait is a guest; one whose first frame is on its way
// is not (its first frame decides, and login_timeout bounds the wait).
void login_desk::greet(const std::shared_ptr<session>& s) {
  s->player().speaks_scenert = s->login_required();
  if (s->login_required()) return;
  s->wait_for_login(shard_.opt.guest_wait, [this, s] {
    if (s->player().claiming) return;
    log_in_guest(s);
    shard_.flush();
  });
}

std::optional<player_id> login_desk::take_pid() {
  const std::int64_t id = shard_.hub.next_pid.fetch_add(1, std::memory_order_relaxed);
  if (id > shard_.opt.last_player_id) return std::nullopt;
  return static_cast<player_id>(id);
}

void login_desk::log_in_guest(const std::shared_ptr<session>& s) {
  if (refused_busy(s)) return;
  const auto taken = take_pid();
  if (!taken) return s->close(close_reason::server_full, "server full: no player id left");
  add(shard_.n.guests);
  const player_id pid = *taken;
  admit(s, pid, "guest-" + std::to_string(pid));
  s->send(server_message{you_are{static_cast<std::int32_t>(pid), s->player().name}});
  shard_.play.enter_world(s, world_request::enter(pid, shard_.hub.landing->id), 0);
}

void login_desk::log_in(const std::shared_ptr<session>& s, const login& l) {
  auto& hub = shard_.hub;
  if (!l.resume_token.empty()) {
    std::unique_lock lock(hub.roll.m);
    if (auto t = hub.roll.tokens.find(l.resume_token); t != hub.roll.tokens.end()) {
      const player_id pid = t->second;
      if (auto d = hub.roll.detached.find(pid);
          d != hub.roll.detached.end()) {  // waiting for this very login
        waiting was = std::move(d->second);
        hub.roll.detached.erase(d);
        lock.unlock();
        shard_.n.detached.fetch_sub(1, std::memory_order_relaxed);
        return resume(s, pid, std::move(was));
      }
      if (front_shard* there = hub.home_of(pid, lock)) {  // logged in: its shard lets it go
        lock.unlock();
        asio::post(*there->io, [there, pid, to = shard_.number, asking = std::weak_ptr(s), l] {
          there->logins.hand_over(pid, to, asking, l);
        });
        return;
      }
    }
  }
  if (!l.resume_token.empty() && !s->player().claiming) {
    // Not held here: another front of the cluster may hold it (its gateway died, or the client
    // moved on). A token nobody holds logs in afresh.
    s->player().claiming = true;
    s->stop_waiting();
    shard_.world().claim(l.resume_token,
                         [this, asking = std::weak_ptr(s), l](result<claimed_player, world_errc> r) {
                           asio::post(*shard_.io, [this, asking, l, r = std::move(r)]() mutable {
                             claimed(asking, l, std::move(r));
                             shard_.flush();
                           });
                         });
    return;
  }
  log_in_afresh(s, l);
}

void login_desk::log_in_afresh(const std::shared_ptr<session>& s, const login& l) {
  if (auto problem = name_problem(l.name); !problem.empty())
    return s->close(close_reason::bad_login, problem);
  if (refused_busy(s)) return;
  const auto taken = take_pid();
  if (!taken) return s->close(close_reason::server_full, "server full: no player id left");
  add(shard_.n.logins);
  const player_id pid = *taken;
  std::string token = new_token();
  std::string name = l.name.empty() ? "player-" + std::to_string(pid) : l.name;
  // The token is shared with the cluster's other gateways before the client hears it: told a token
  // its gateway died before sharing, the client could not resume through another one. Its frames
  // wait meanwhile (one process: no wait but a post).
  s->player().claiming = true;
  s->stop_waiting();
  shard_.world().remember(token, pid, name, [this, asking = std::weak_ptr(s), pid, token, name]() mutable {
    asio::post(*shard_.io, [this, asking, pid, token = std::move(token), name = std::move(name)]() mutable {
      welcome(asking, pid, std::move(token), std::move(name));
      shard_.flush();
    });
  });
}

// A new player's token is shared: it enters the world, its client hears its token. A client that
// closed meanwhile leaves nobody to hold the token.
void login_desk::welcome(const std::weak_ptr<session>& asking, player_id pid, std::string token,
                         std::string name) {
  auto s = asking.lock();
  if (!s || s->closing()) return shard_.world().forget(token);
  player_state& p = s->player();
  p.claiming = false;
  p.token = std::move(token);
  admit(s, pid, std::move(name));
  p.speaks_scenert = true;
  s->send(server_message{login_ok{static_cast<std::int32_t>(pid), p.name, p.token, false}});
  s->send(server_message{you_are{static_cast<std::int32_t>(pid), p.name}});
  sign_in(s);
  shard_.play.enter_world(s, world_request::enter(pid, shard_.hub.landing->id), 0);
}

// The answer to a claim: the player is this front's now. A client that closed meanwhile leaves it
// waiting for its resume here.
void login_desk::claimed(const std::weak_ptr<session>& asking, const login& l,
                         result<claimed_player, world_errc> r) {
  auto s = asking.lock();
  if (s) s->player().claiming = false;
  if (s && !s->closing() && r) {
    std::unique_lock lock(shard_.hub.roll.m);
    if (shard_.hub.roll.tokens.contains(l.resume_token)) {  // another connection resumed it here meanwhile
      lock.unlock();
      return log_in(s, l);
    }
  }
  if (!r) {
    if (s && !s->closing()) log_in_afresh(s, l);
    return;
  }
  add(shard_.n.claimed);
  waiting was{r->name, l.resume_token, placement{r->line, r->space, r->phase}, true, {}};
  if (!s || s->closing()) return park(r->player, std::move(was), true);
  resume(s, r->player, std::move(was));
}

void login_desk::let_go(player_id pid) {
  auto live = shard_.sessions.find(pid);
  if (live == shard_.sessions.end()) return;
  auto old = live->second;
  shard_.sessions.erase(live);
  {
    std::lock_guard lock(shard_.hub.roll.m);
    leave_home(pid);
    if (!old->player().token.empty()) shard_.hub.roll.tokens.erase(old->player().token);
  }
  old->player().pid = 0;  // the player goes on elsewhere: closing must not take it off the world
  old->close(close_reason::replaced, "resumed on another gateway");
  shard_.flush();
}

// Its connection here is closed (the player goes on there) and its state is handed over.
void login_desk::hand_over(player_id pid, std::size_t to, std::weak_ptr<session> asking, login l) {
  front_shard& there = *shard_.hub.shards[to];
  auto live = shard_.sessions.find(pid);
  if (live == shard_.sessions.end()) {  // it closed meanwhile: the asking shard looks again (it may wait now)
    asio::post(*there.io, [&there, asking, l] {
      if (auto s = asking.lock(); s && !s->closing()) {
        there.logins.log_in(s, l);
        there.flush();
      }
    });
    return;
  }
  auto old = live->second;
  const player_state& p = old->player();
  waiting was{p.name, p.token, p.place, p.placed, {}};
  shard_.sessions.erase(live);
  old->player().pid = 0;  // the player goes on there: closing the old connection must not take it off
  old->close(close_reason::replaced, "logged in from another connection");
  shard_.flush();
  asio::post(*there.io, [&there, asking, pid, was = std::move(was)]() mutable {
    auto s = asking.lock();
    if (!s || s->closing()) return there.logins.park(pid, std::move(was), true);  // gone before it got it
    there.logins.resume(s, pid, std::move(was));
    there.flush();
  });
}

void login_desk::resume(const std::shared_ptr<session>& s, player_id pid, waiting was) {
  add(shard_.n.resumed);
  player_state& p = s->player();
  p.token = was.token;
  admit(s, pid, was.name);
  p.place = was.place, p.placed = was.placed;
  p.speaks_scenert = true;
  p.moved_at = clock::now();
  shard_.play.forget_asked(*s);
  s->send(server_message{login_ok{static_cast<std::int32_t>(pid), p.name, p.token, true}});
  s->send(server_message{you_are{static_cast<std::int32_t>(pid), p.name}});
  sign_in(s);
  if (!p.placed) return shard_.play.enter_world(s, world_request::enter(pid, shard_.hub.landing->id), 0);
  // Its view as this shard's mirrors hold it; a shard that has not heard of its line yet sends the
  // view when the line's event comes (the session is here now).
  shard_.fan.send_view(*s);
  if (const scene_def* def = shard_.geo.def_of(p.place.line.scene))
    s->send(shard_.geo.info_of(*def, p.place, p));
}

void login_desk::admit(const std::shared_ptr<session>& s, player_id pid, std::string name) {
  s->logged_in();
  std::erase(shard_.greeting, s);
  player_state& p = s->player();
  p.admitted = clock::now();
  p.pid = pid;
  p.name = std::move(name);
  shard_.sessions[pid] = s;
  shard_.hub.book.admit(pid, p.name);
  std::lock_guard lock(shard_.hub.roll.m);
  shard_.hub.roll.home[pid] = shard_.number;
  if (!p.token.empty()) shard_.hub.roll.tokens[p.token] = pid;
}

// A connection that closes takes its player off the world, unless it dropped (not for a fault of
// its own) and may come back with its token within resume_ms.
void login_desk::drop_player(session& s, close_reason why) {
  const player_state& p = s.player();
  auto it = shard_.sessions.find(p.pid);
  if (p.pid == 0 || it == shard_.sessions.end() || it->second.get() != &s) return;
  shard_.sessions.erase(it);
  if (shard_.stopping() && shard_.opt.hand_off_on_stop) return handed_off(p.pid);
  const bool may_come_back = !p.token.empty() && !shard_.stopping() &&
                             (why == close_reason::dropped || why == close_reason::idle ||
                              why == close_reason::half_frame || why == close_reason::slow_reader);
  park(p.pid, {p.name, p.token, p.place, p.placed, {}}, may_come_back);
}

// Its viewers hear it leave from its line.
void login_desk::park(player_id pid, waiting was, bool may_come_back) {
  auto& hub = shard_.hub;
  std::unique_lock lock(hub.roll.m);
  leave_home(pid);
  if (may_come_back && hub.resume_for.count() > 0) {
    was.until = clock::now() + hub.resume_for;
    hub.roll.detached[pid] = std::move(was);
    add(shard_.n.detached);
    return;
  }
  if (!was.token.empty()) hub.roll.tokens.erase(was.token);
  lock.unlock();
  if (!was.token.empty()) shard_.world().forget(was.token);
  if (shard_.opt.store != nullptr) shard_.opt.store->sign_out(pid);
  hub.book.gone(pid, clock::now());
  shard_.world().submit(world_request::leave(pid), {});
}

// A player left to another front of the cluster as this one stops: it stays in the world, its token
// good, until its client logs in there again (or its node takes it off after resume_ms).
void login_desk::handed_off(player_id pid) {
  std::lock_guard lock(shard_.hub.roll.m);
  leave_home(pid);
}

// The roll forgets that `pid` is logged in here (its mutex held).
void login_desk::leave_home(player_id pid) {
  auto& home = shard_.hub.roll.home;
  if (auto h = home.find(pid); h != home.end() && h->second == shard_.number) home.erase(h);
}

void login_desk::expire_detached(clock::time_point now) {
  auto& hub = shard_.hub;
  std::vector<player_id> leaving;
  std::vector<std::string> tokens;
  {
    std::lock_guard lock(hub.roll.m);
    std::erase_if(hub.roll.detached, [&](auto& d) {
      if (now < d.second.until) return false;
      hub.roll.tokens.erase(d.second.token);
      leaving.push_back(d.first);
      tokens.push_back(std::move(d.second.token));
      return true;
    });
  }
  for (const auto& t : tokens) shard_.world().forget(t);
  for (player_id p : leaving) {
    shard_.n.detached.fetch_sub(1, std::memory_order_relaxed);
    hub.book.gone(p, clock::now());
    shard_.world().submit(world_request::leave(p), {});
  }
}

}  // namespace scenert::net
