// Logins: a guest (seed 002's clients send nothing first), an explicit login by name, or a resume
// by token of a player whose connection dropped less than resume_ms ago (or that is logged in on
// another connection, which is closed).
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

std::string front::impl::new_token() {
  std::string t;
  for (int i = 0; i < 4; ++i) t += fmt::format("{:08x}", entropy());
  return t;
}

// A client that sends no login within guest_wait is a guest; one whose first frame is on its way
// is not (its first frame decides, and login_timeout bounds the wait).
void front::impl::greet(const std::shared_ptr<session>& s) {
  if (s->login_required) return;
  s->guest_timer.expires_after(opt.guest_wait);
  s->guest_timer.async_wait([this, s](boost::system::error_code ec) {
    if (ec || s->closing || s->at != session::stage::greeting || s->reader.mid_frame()) return;
    log_in_guest(s);
    flush();
  });
}

void front::impl::log_in_guest(const std::shared_ptr<session>& s) {
  add(n.guests);
  const auto pid = static_cast<player_id>(next_pid++);
  admit(s, pid, "guest-" + std::to_string(pid));
  send(*s, server_message{you_are{static_cast<std::int32_t>(pid), s->name}});
  enter_world(s, world_request::enter(pid, landing->id), 0);
}

void front::impl::log_in(const std::shared_ptr<session>& s, const login& l) {
  if (!l.resume_token.empty())
    if (auto t = tokens.find(l.resume_token); t != tokens.end())
      if (sessions.count(t->second) != 0 || detached.count(t->second) != 0) return resume(s, t->second);
  if (auto problem = name_problem(l.name); !problem.empty())
    return close(s, close_reason::bad_login, problem);
  add(n.logins);
  const auto pid = static_cast<player_id>(next_pid++);
  admit(s, pid, l.name.empty() ? "player-" + std::to_string(pid) : l.name);
  s->token = new_token();
  tokens.emplace(s->token, pid);
  s->speaks_scenert = true;
  send(*s, server_message{login_ok{static_cast<std::int32_t>(pid), s->name, s->token, false}});
  send(*s, server_message{you_are{static_cast<std::int32_t>(pid), s->name}});
  enter_world(s, world_request::enter(pid, landing->id), 0);
}

// The same player, on this connection: its place is kept, its view comes fresh (202).
void front::impl::resume(const std::shared_ptr<session>& s, player_id pid) {
  add(n.resumed);
  waiting was;
  if (auto live = sessions.find(pid); live != sessions.end()) {
    auto old = live->second;
    was = {old->name, old->token, old->place, old->placed, {}};
    sessions.erase(live);
    old->pid = 0;  // the player goes on here: closing the old connection must not take it off
    close(old, close_reason::replaced, "logged in from another connection");
  } else {
    auto d = detached.find(pid);
    was = std::move(d->second);
    detached.erase(d);
    n.detached.fetch_sub(1, std::memory_order_relaxed);
  }
  admit(s, pid, was.name);
  s->token = was.token, s->place = was.place, s->placed = was.placed;
  s->speaks_scenert = true;
  s->moved_at = clock::now();
  send(*s, server_message{login_ok{static_cast<std::int32_t>(pid), s->name, s->token, true}});
  send(*s, server_message{you_are{static_cast<std::int32_t>(pid), s->name}});
  if (line_of.count(pid) == 0) return enter_world(s, world_request::enter(pid, landing->id), 0);
  send_view(*s);
  if (const scene_def* def = def_of(line_of[pid].line.scene)) send(*s, info_of(*def, s->place));
}

void front::impl::admit(const std::shared_ptr<session>& s, player_id pid, std::string name) {
  s->guest_timer.cancel();
  std::erase(greeting, s);
  s->at = session::stage::in;
  s->pid = pid;
  s->name = std::move(name);
  sessions[pid] = s;
  names[pid] = s->name;
}

// A connection that closes takes its player off the world, unless it dropped (not for a fault of
// its own) and may come back with its token within resume_ms.
void front::impl::drop_player(session& s, close_reason why) {
  auto it = sessions.find(s.pid);
  if (s.pid == 0 || it == sessions.end() || it->second.get() != &s) return;
  sessions.erase(it);
  const bool may_come_back = !s.token.empty() && resume_for.count() > 0 && !stopping &&
                             (why == close_reason::dropped || why == close_reason::idle ||
                              why == close_reason::half_frame || why == close_reason::slow_reader);
  if (may_come_back) {
    detached[s.pid] = {s.name, s.token, s.place, s.placed, clock::now() + resume_for};
    add(n.detached);
    return;
  }
  if (!s.token.empty()) tokens.erase(s.token);
  w->submit(world_request::leave(s.pid), {});  // its viewers hear it from its line
}

void front::impl::expire_detached(clock::time_point now) {
  std::erase_if(detached, [&](auto& d) {
    if (now < d.second.until) return false;
    tokens.erase(d.second.token);
    n.detached.fetch_sub(1, std::memory_order_relaxed);
    w->submit(world_request::leave(d.first), {});
    return true;
  });
}

}  // namespace scenert::net
