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

}  // namespace

std::string front_shard::new_token() {
  std::string t;
  for (int i = 0; i < 4; ++i) t += fmt::format("{:08x}", entropy());
  return t;
}

// A client that sends no login within guest_wait is a guest; one whose first frame is on its way
// is not (its first frame decides, and login_timeout bounds the wait). Bytes that arrived but are
// not read yet (a busy I/O thread runs this timer and that read in either order) are on their way.
void front_shard::greet(const std::shared_ptr<session>& s) {
  if (s->login_required) return;
  s->guest_timer.expires_after(opt.guest_wait);
  s->guest_timer.async_wait([this, s](boost::system::error_code ec) {
    if (ec || s->closing || s->claiming || s->at != session::stage::greeting || s->reader.mid_frame()) return;
    if (boost::system::error_code unread; s->socket().available(unread) > 0 && !unread) return;
    log_in_guest(s);
    flush();
  });
}

std::optional<player_id> front_shard::take_pid() {
  const std::int64_t id = hub.next_pid.fetch_add(1, std::memory_order_relaxed);
  if (id > opt.last_player_id) return std::nullopt;
  return static_cast<player_id>(id);
}

void front_shard::log_in_guest(const std::shared_ptr<session>& s) {
  const auto taken = take_pid();
  if (!taken) return close(s, close_reason::server_full, "server full: no player id left");
  add(n.guests);
  const player_id pid = *taken;
  admit(s, pid, "guest-" + std::to_string(pid));
  send(*s, server_message{you_are{static_cast<std::int32_t>(pid), s->name}});
  enter_world(s, world_request::enter(pid, landing().id), 0);
}

void front_shard::log_in(const std::shared_ptr<session>& s, const login& l) {
  if (!l.resume_token.empty()) {
    std::unique_lock lock(hub.roll_mutex);
    if (auto t = hub.tokens.find(l.resume_token); t != hub.tokens.end()) {
      const player_id pid = t->second;
      if (auto d = hub.detached.find(pid); d != hub.detached.end()) {  // waiting for this very login
        waiting was = std::move(d->second);
        hub.detached.erase(d);
        lock.unlock();
        n.detached.fetch_sub(1, std::memory_order_relaxed);
        return resume(s, pid, std::move(was));
      }
      if (auto h = hub.home.find(pid); h != hub.home.end()) {  // logged in: its shard lets it go
        front_shard& there = *hub.shards[h->second];
        lock.unlock();
        asio::post(*there.io, [&there, pid, to = number, asking = std::weak_ptr(s), l] {
          there.hand_over(pid, to, asking, l);
        });
        return;
      }
    }
  }
  if (!l.resume_token.empty() && !s->claiming) {
    // Not held here: another front of the cluster may hold it (its gateway died, or the client
    // moved on). A token nobody holds logs in afresh.
    s->claiming = true;
    s->guest_timer.cancel();
    w->claim(l.resume_token, [this, asking = std::weak_ptr(s), l](result<claimed_player, world_errc> r) {
      asio::post(*io, [this, asking, l, r = std::move(r)]() mutable {
        claimed(asking, l, std::move(r));
        flush();
      });
    });
    return;
  }
  log_in_afresh(s, l);
}

void front_shard::log_in_afresh(const std::shared_ptr<session>& s, const login& l) {
  if (auto problem = name_problem(l.name); !problem.empty())
    return close(s, close_reason::bad_login, problem);
  const auto taken = take_pid();
  if (!taken) return close(s, close_reason::server_full, "server full: no player id left");
  add(n.logins);
  const player_id pid = *taken;
  s->token = new_token();
  admit(s, pid, l.name.empty() ? "player-" + std::to_string(pid) : l.name);
  w->remember(s->token, pid, s->name);
  s->speaks_scenert = true;
  send(*s, server_message{login_ok{static_cast<std::int32_t>(pid), s->name, s->token, false}});
  send(*s, server_message{you_are{static_cast<std::int32_t>(pid), s->name}});
  enter_world(s, world_request::enter(pid, landing().id), 0);
}

// The answer to a claim: the player is this front's now. A client that closed meanwhile leaves it
// waiting for its resume here.
void front_shard::claimed(const std::weak_ptr<session>& asking, const login& l,
                          result<claimed_player, world_errc> r) {
  auto s = asking.lock();
  if (s) s->claiming = false;
  if (s && !s->closing && r) {
    std::unique_lock lock(hub.roll_mutex);
    if (hub.tokens.contains(l.resume_token)) {  // another connection resumed it here meanwhile
      lock.unlock();
      return log_in(s, l);
    }
  }
  if (!r) {
    if (s && !s->closing) log_in_afresh(s, l);
    return;
  }
  add(n.claimed);
  waiting was{r->name, l.resume_token, placement{r->line, r->space, r->phase}, true, {}};
  if (!s || s->closing) return park(r->player, std::move(was), true);
  resume(s, r->player, std::move(was));
}

void front_shard::let_go(player_id pid) {
  auto live = sessions.find(pid);
  if (live == sessions.end()) return;
  auto old = live->second;
  sessions.erase(live);
  {
    std::lock_guard lock(hub.roll_mutex);
    if (auto h = hub.home.find(pid); h != hub.home.end() && h->second == number) hub.home.erase(h);
    if (!old->token.empty()) hub.tokens.erase(old->token);
  }
  old->pid = 0;  // the player goes on elsewhere: closing must not take it off the world
  close(old, close_reason::replaced, "resumed on another gateway");
  flush();
}

// On the shard of a logged-in player whose token logged in again on shard `to`: its connection here
// is closed (the player goes on there) and its state is handed over.
void front_shard::hand_over(player_id pid, std::size_t to, std::weak_ptr<session> asking, login l) {
  front_shard& there = *hub.shards[to];
  auto live = sessions.find(pid);
  if (live == sessions.end()) {  // it closed meanwhile: the asking shard looks again (it may wait now)
    asio::post(*there.io, [&there, asking, l] {
      if (auto s = asking.lock(); s && !s->closing) {
        there.log_in(s, l);
        there.flush();
      }
    });
    return;
  }
  auto old = live->second;
  waiting was{old->name, old->token, old->place, old->placed, {}};
  sessions.erase(live);
  old->pid = 0;  // the player goes on there: closing the old connection must not take it off
  close(old, close_reason::replaced, "logged in from another connection");
  flush();
  asio::post(*there.io, [&there, asking, pid, was = std::move(was)]() mutable {
    auto s = asking.lock();
    if (!s || s->closing) return there.park(pid, std::move(was), true);  // gone before it got it
    there.resume(s, pid, std::move(was));
    there.flush();
  });
}

// The same player, on this connection: its place is kept, its view comes fresh (202).
void front_shard::resume(const std::shared_ptr<session>& s, player_id pid, waiting was) {
  add(n.resumed);
  s->token = was.token;
  admit(s, pid, was.name);
  s->place = was.place, s->placed = was.placed;
  s->speaks_scenert = true;
  s->moved_at = clock::now();
  unclaim(*s);
  send(*s, server_message{login_ok{static_cast<std::int32_t>(pid), s->name, s->token, true}});
  send(*s, server_message{you_are{static_cast<std::int32_t>(pid), s->name}});
  if (!s->placed) return enter_world(s, world_request::enter(pid, landing().id), 0);
  // Its view as this shard's mirrors hold it; a shard that has not heard of its line yet sends the
  // view when the line's event comes (the session is here now).
  send_view(*s);
  if (const scene_def* def = def_of(s->place.line.scene)) send(*s, info_of(*def, s->place));
}

void front_shard::admit(const std::shared_ptr<session>& s, player_id pid, std::string name) {
  s->guest_timer.cancel();
  std::erase(greeting, s);
  s->at = session::stage::in;
  s->admitted = clock::now();
  s->pid = pid;
  s->name = std::move(name);
  sessions[pid] = s;
  hub.book.admit(pid, s->name);
  std::lock_guard lock(hub.roll_mutex);
  hub.home[pid] = number;
  if (!s->token.empty()) hub.tokens[s->token] = pid;
}

// A connection that closes takes its player off the world, unless it dropped (not for a fault of
// its own) and may come back with its token within resume_ms.
void front_shard::drop_player(session& s, close_reason why) {
  auto it = sessions.find(s.pid);
  if (s.pid == 0 || it == sessions.end() || it->second.get() != &s) return;
  sessions.erase(it);
  if (stopping && hub.opt.hand_off_on_stop) return handed_off(s.pid);
  const bool may_come_back = !s.token.empty() && !stopping &&
                             (why == close_reason::dropped || why == close_reason::idle ||
                              why == close_reason::half_frame || why == close_reason::slow_reader);
  park(s.pid, {s.name, s.token, s.place, s.placed, {}}, may_come_back);
}

// A player without a connection: it waits resume_ms for its token when it may come back, else it
// leaves the world (its viewers hear it from its line).
void front_shard::park(player_id pid, waiting was, bool may_come_back) {
  std::unique_lock lock(hub.roll_mutex);
  if (auto h = hub.home.find(pid); h != hub.home.end() && h->second == number) hub.home.erase(h);
  if (may_come_back && hub.resume_for.count() > 0) {
    was.until = clock::now() + hub.resume_for;
    hub.detached[pid] = std::move(was);
    add(n.detached);
    return;
  }
  if (!was.token.empty()) hub.tokens.erase(was.token);
  lock.unlock();
  if (!was.token.empty()) w->forget(was.token);
  hub.book.gone(pid, clock::now());
  w->submit(world_request::leave(pid), {});
}

// A player left to another front of the cluster as this one stops: it stays in the world, its token
// good, until its client logs in there again (or its node takes it off after resume_ms).
void front_shard::handed_off(player_id pid) {
  std::lock_guard lock(hub.roll_mutex);
  if (auto h = hub.home.find(pid); h != hub.home.end() && h->second == number) hub.home.erase(h);
}

void front_shard::expire_detached(clock::time_point now) {
  std::vector<player_id> leaving;
  std::vector<std::string> tokens;
  {
    std::lock_guard lock(hub.roll_mutex);
    std::erase_if(hub.detached, [&](auto& d) {
      if (now < d.second.until) return false;
      hub.tokens.erase(d.second.token);
      leaving.push_back(d.first);
      tokens.push_back(std::move(d.second.token));
      return true;
    });
  }
  for (const auto& t : tokens) w->forget(t);
  for (player_id p : leaving) {
    n.detached.fetch_sub(1, std::memory_order_relaxed);
    hub.book.gone(p, clock::now());
    w->submit(world_request::leave(p), {});
  }
}

}  // namespace scenert::net
