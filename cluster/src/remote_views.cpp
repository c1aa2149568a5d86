// Line events and views: each line (or phase) as this gateway last heard it, its batches applied in
// order; a gap asks the line's node for its views, the batches meanwhile held.

#include "remote_world_impl.hpp"
#include "subjects.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace scenert::cluster {

using detail::clock;
using detail::line_view;
using detail::view_key;

namespace {

// A node is asked for its views at most this often; a line still waiting after an answer (the node
// looked before the gap) is asked for again by the next poll after that.
constexpr auto views_retry = std::chrono::milliseconds(250);
// Batches held for a line waiting for its views; past this the wait starts over with a new ask.
constexpr std::size_t max_held = 4096;

}  // namespace

void remote_world::impl::ask_views(const std::string& node) {
  {
    std::lock_guard lock(m);
    auto& at = views_asked_at[node];
    const auto now = clock::now();
    if (now - at < views_retry) return;
    at = now;
  }
  views_asked.fetch_add(1, std::memory_order_relaxed);
  (void)link.publish(subjects::views(node), {}, subjects::views_inbox(opt.gateway));
}

// A line heard no more as it was (another generation under its id, or another node): everyone who
// stood on it leaves the front's view, so nobody of the old line lingers in the new (lines_m held).
void remote_world::impl::retire(const view_key& k, line_view& v) {
  if (v.standing.empty() || !opt.on_line_events) return;
  const auto gone = v.standing.left();
  v.standing = {};
  opt.on_line_events(v.line, k.phase, gone);
  after_leaving(gone);
}

// Applies a batch that follows the view's last one (lines_m held).
void remote_world::impl::apply(line_view& v, const wire::event_batch& b) {
  for (const auto& e : b.events)
    if (!e.monster && e.what == line_event::kind::entered) entering.push_back(e.player);
  v.standing.apply(b.events);
  v.seq = b.seq;
  if (opt.on_line_events) opt.on_line_events(b.line, b.phase, b.events);
  after_leaving(b.events);
}

// Hands the front what changed between the view as heard and the view as it stands (lines_m held).
void remote_world::impl::replace(line_view& v, const wire::view_state& state) {
  const auto diff = v.standing.replace(state.standing);
  for (const auto& e : diff)
    if (!e.monster && e.what == line_event::kind::entered) entering.push_back(e.player);
  v.seq = state.seq;
  if (!diff.empty() && opt.on_line_events) opt.on_line_events(v.line, state.phase, diff);
  after_leaving(diff);
}

// A line's game-module frames go to the front as they come (they ride behind the line's events).
void remote_world::impl::on_frames(std::string_view data) {
  auto b = wire::decode_frame_batch(data);
  if (!b) {
    bad_messages.fetch_add(1, std::memory_order_relaxed);
    return warn(fmt::format("gateway {}: {}", opt.gateway, b.error().message));
  }
  if (opt.on_module_frames) opt.on_module_frames(b->line, b->frames);
}

bool remote_world::impl::from_dead_start(std::string_view node, std::uint64_t epoch) {
  std::lock_guard lock(m);
  const auto dead = buried.find(std::string(node));
  if (dead == buried.end() || epoch > dead->second) return false;
  from_dead_starts.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void remote_world::impl::on_events(std::string_view subject, std::string_view data) {
  if (wire::is_frame_batch(data)) return on_frames(data);
  auto b = wire::decode_event_batch(data);
  const auto node = subjects::node_of_line(subject);
  if (!b || node.empty()) {
    bad_messages.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (from_dead_start(node, b->epoch)) return;
  event_batches.fetch_add(1, std::memory_order_relaxed);
  bool ask = false;
  {
    std::lock_guard lock(lines_m);
    const view_key k{b->line.scene, b->line.line, b->phase};
    auto& v = lines[k];
    if (v.line != b->line || v.node != node) {
      // A new generation (or a line never heard): it starts at batch 1, else we came in late.
      retire(k, v);
      v = line_view{std::string(node), b->line, 0, {}, false, {}};
      if (b->seq != 1) {
        v.waiting = true;
        ask = true;
      }
    }
    if (v.waiting) {
      if (v.held.size() >= max_held) v.held.clear();
      v.held.push_back(std::move(*b));
    } else if (b->seq == v.seq + 1) {
      apply(v, *b);
    } else if (b->seq > v.seq + 1) {
      gaps.fetch_add(1, std::memory_order_relaxed);
      v.waiting = true;
      v.held.push_back(std::move(*b));
      ask = true;
    }  // older than the last applied: heard already
    heard_entering();
  }
  if (ask) ask_views(std::string(node));
}

void remote_world::impl::on_views(std::string_view data) {
  auto got = wire::decode_views(data);
  if (!got) {
    bad_messages.fetch_add(1, std::memory_order_relaxed);
    return warn(fmt::format("gateway {}: {}", opt.gateway, got.error().message));
  }
  if (from_dead_start(got->node, got->epoch)) return;
  views_applied.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(m);
    unsynced.erase(got->node);
  }
  bool ask = false;
  std::lock_guard lock(lines_m);
  std::map<view_key, const wire::view_state*> given;
  for (const auto& s : got->lines) given.emplace(view_key{s.line.scene, s.line.line, s.phase}, &s);
  for (auto& [k, v] : lines) {
    if (v.node != got->node) continue;
    auto s = given.find(k);
    // Not there, another generation, or older than what was applied: the node looked before this
    // gateway heard the line's latest, so the answer says nothing new (a waiting line asks again).
    if (s == given.end()) continue;
    const auto& state = *s->second;
    given.erase(s);
    if (state.line != v.line || state.seq < v.seq) continue;
    if (state.seq > v.seq) replace(v, state);
    v.waiting = false;
    auto held = std::exchange(v.held, {});
    std::sort(held.begin(), held.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
    for (auto& b : held) {
      if (b.seq <= v.seq) continue;
      if (b.seq != v.seq + 1) {
        v.waiting = true;
        ask = true;
        break;
      }
      apply(v, b);
    }
  }
  for (const auto& [k, s] : given) {  // lines this gateway had not heard of
    auto& v = lines[k];
    v = line_view{got->node, s->line, 0, {}, false, {}};
    replace(v, *s);
  }
  heard_entering();
  if (ask) ask_views(got->node);
}

void remote_world::impl::retry_waiting() {
  std::vector<std::string> again;
  {
    std::lock_guard lock(m);
    for (const auto& n : unsynced)
      if (nodes.contains(n)) again.push_back(n);
  }
  {
    std::lock_guard lock(lines_m);
    for (const auto& [k, v] : lines)
      if (v.waiting && std::find(again.begin(), again.end(), v.node) == again.end()) again.push_back(v.node);
  }
  for (const auto& n : again) ask_views(n);
}

void remote_world::impl::resync_all() {
  std::vector<std::string> names;
  {
    std::lock_guard lock(m);
    for (const auto& [name, n] : nodes) names.push_back(name);
    unsynced = {names.begin(), names.end()};
    views_asked_at.clear();
  }
  for (const auto& n : names) ask_views(n);
}

bool remote_world::impl::resynced() const {
  std::lock_guard lock(m);
  for (const auto& n : unsynced)
    if (nodes.contains(n)) return false;  // a node dead meanwhile owes nothing
  return true;
}

}  // namespace scenert::cluster
