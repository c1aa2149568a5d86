// node_endpoint: its life (start, stop), its subscriptions and its counters. The topics are in
// node_gateways.cpp, node_views.cpp, node_claims.cpp and node_journeys.cpp.

#include "node_endpoint_impl.hpp"
#include "subjects.hpp"

#include <boost/asio/post.hpp>

namespace scenert::cluster {

void node_endpoint::impl::publish(const std::string& subject, std::string_view bytes) {
  if (!link.publish(subject, bytes)) publish_failures.fetch_add(1, std::memory_order_relaxed);
}

cluster_result<void> node_endpoint::impl::subscribe_all() {
  using handler = void (*)(impl&, std::string_view subject, std::string_view data, std::string_view reply);
  const std::pair<std::string, handler> topics[] = {
      {subjects::requests(node), [](impl& i, auto, auto data, auto) { i.on_requests(data); }},
      {subjects::views(node), [](impl& i, auto, auto, auto reply) { i.on_views(reply); }},
      {subjects::claim(node), [](impl& i, auto, auto data, auto reply) { i.on_claim(data, reply, true); }},
      {subjects::where(node), [](impl& i, auto, auto data, auto reply) { i.on_claim(data, reply, false); }},
      {subjects::all_gateway_beats, [](impl& i, auto subject, auto, auto) { i.on_beat(subject); }},
      {subjects::arrive(node), [](impl& i, auto, auto data, auto reply) { i.on_arrive(data, reply); }},
      {subjects::arrived(node), [](impl& i, auto, auto data, auto) { i.on_arrived(data); }},
      {subjects::release(node), [](impl& i, auto, auto data, auto reply) { i.on_release(data, reply); }},
      {subjects::released(node), [](impl& i, auto, auto data, auto) { i.on_released(data); }},
  };
  for (const auto& [subject, handle] : topics) {
    auto sub =
        link.subscribe(subject, [this, handle](std::string_view s, std::string_view data,
                                               std::string_view reply) { handle(*this, s, data, reply); });
    if (!sub) return sub.error();
    subs.push_back(std::move(sub).value());
  }
  return {};
}

node_endpoint::node_endpoint(nats_link& link, std::string node, std::uint64_t epoch,
                             node_endpoint_options options)
    : impl_(std::make_shared<impl>(link, std::move(node), epoch, options)) {}

node_endpoint::~node_endpoint() { stop(); }

std::function<void(line_handle, phase_id, std::span<const line_event>)> node_endpoint::on_line_events() {
  return [i = impl_](line_handle line, phase_id phase, std::span<const line_event> events) {
    i->line_events(line, phase, events);
  };
}

std::function<void(line_handle, std::span<const module_frame>)> node_endpoint::on_module_frames() {
  return
      [i = impl_](line_handle line, std::span<const module_frame> frames) { i->line_frames(line, frames); };
}

cluster_result<void> node_endpoint::start(world_port& w, player_locator where) {
  impl_->w = &w;
  impl_->where = std::move(where);
  impl_->io_work.emplace(impl_->io.get_executor());
  impl_->io_thread = std::thread([i = impl_.get()] { i->io.run(); });
  impl_->link_ups = impl_->link.reconnects();
  return impl_->subscribe_all();
}

void node_endpoint::poll(std::chrono::steady_clock::time_point now) { impl_->poll(now); }

void node_endpoint::stop() {
  impl_->subs.clear();  // no handler runs after this
  if (!impl_->io_thread.joinable()) return;
  // The answers still held leave now; claims still settling are dropped (their gateway asks again).
  asio::post(impl_->io, [i = impl_.get()] {
    i->linger.cancel();
    i->flush_answers();
    i->io.stop();
  });
  impl_->io_work.reset();
  impl_->io_thread.join();
}

node_endpoint_stats node_endpoint::stats() const {
  auto n = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  const auto& i = *impl_;
  node_endpoint_stats s;
  s.request_batches = n(i.request_batches), s.requests = n(i.requests), s.bad_batches = n(i.bad_batches);
  s.claims = n(i.claims), s.gateways_lost = n(i.gateways_lost), s.players_abandoned = n(i.players_abandoned);
  s.answer_batches = n(i.answer_batches), s.answers = n(i.answers), s.event_batches = n(i.event_batches);
  s.frame_batches = n(i.frame_batches);
  s.views_asked = n(i.views_asked), s.publish_failures = n(i.publish_failures);
  s.handoffs_out = n(i.handoffs_out), s.handoffs_in = n(i.handoffs_in),
  s.handoffs_failed = n(i.handoffs_failed), s.releases_again = n(i.releases_again);
  {
    std::lock_guard lock(impl_->travel_m);
    s.releases_unconfirmed = i.releasing.size();
  }
  std::lock_guard lock(impl_->gateways_m);
  for (const auto& [name, g] : i.gateways) s.gateways += g.dead_since ? 0 : 1;
  return s;
}

}  // namespace scenert::cluster
