// node_endpoint: each line's events out to the gateways, numbered, and the lines as they stand for a
// gateway that missed some.

#include "node_endpoint_impl.hpp"
#include "subjects.hpp"

namespace scenert::cluster {

void node_endpoint::impl::line_events(line_handle line, phase_id phase, std::span<const line_event> events) {
  const view_key k{line.scene, line.line, phase};
  auto& s = shards[view_key_hash{}(k) % shards.size()];
  std::lock_guard lock(s.m);
  auto& v = s.views[k];
  if (v.line != line) v = line_view{line, 0, {}};  // a new generation starts its count again
  v.standing.apply(events);
  wire::event_batch b{line, phase, ++v.seq, {events.begin(), events.end()}, epoch};
  // Published under the view's lock, so the line's batches leave in their order.
  publish(subjects::line(node, line), wire::encode(b));
  event_batches.fetch_add(1, std::memory_order_relaxed);
}

// Called on the line's thread right after its events of the tick: the same subject keeps their order.
void node_endpoint::impl::line_frames(line_handle line, std::span<const module_frame> frames) {
  publish(subjects::line(node, line), wire::encode(wire::frame_batch{line, {frames.begin(), frames.end()}}));
  frame_batches.fetch_add(1, std::memory_order_relaxed);
}

void node_endpoint::impl::on_views(std::string_view reply) {
  if (reply.empty()) return;
  views_asked.fetch_add(1, std::memory_order_relaxed);
  wire::views all{node, {}, epoch};
  for (auto& s : shards) {
    std::lock_guard lock(s.m);
    for (const auto& [k, v] : s.views) {
      all.lines.push_back(wire::view_state{v.line, k.phase, v.seq, v.standing.entered()});
    }
  }
  publish(std::string(reply), wire::encode(all));
}

}  // namespace scenert::cluster
