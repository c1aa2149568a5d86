#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/cluster/wire.hpp>
#include "subjects.hpp"

#include <array>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace scenert::cluster {

namespace {

// Answers wait this long for the rest of their world tick's answers, so a gateway gets one batch.
constexpr auto answer_linger = std::chrono::microseconds(200);

struct view_key {
  scene_id scene;
  std::uint32_t line;
  phase_id phase;
  friend bool operator==(const view_key&, const view_key&) = default;
};
struct view_key_hash {
  std::size_t operator()(const view_key& k) const noexcept {
    return std::hash<std::uint64_t>{}((std::uint64_t{k.scene} << 40) ^ (std::uint64_t{k.line} << 16) ^
                                      k.phase);
  }
};

// Who stands on one line (or phase) of the current generation, and how many batches it published.
struct view {
  line_handle line;
  std::uint64_t seq = 0;
  std::unordered_map<std::uint64_t, line_event> standing;  // by entity (monsters apart from players)
};

std::uint64_t entity_of(const line_event& e) { return e.player ^ (e.monster ? (std::uint64_t{1} << 63) : 0); }

}  // namespace

struct node_endpoint::impl : std::enable_shared_from_this<impl> {
  nats_link& link;
  const std::string node;
  const std::uint64_t epoch;
  world_port* w = nullptr;

  // The lines' views, split so that lines ticking on different workers rarely meet on a lock.
  struct shard {
    std::mutex m;
    std::unordered_map<view_key, view, view_key_hash> views;
  };
  std::array<shard, 16> shards;

  std::mutex answers_m;
  std::condition_variable answers_cv;
  std::unordered_map<std::string, std::vector<wire::answer_entry>> outbox;  // by gateway
  bool stopping = false;
  std::thread flusher;

  std::unique_ptr<subscription> requests_sub, views_sub;

  std::atomic<std::uint64_t> request_batches{0}, requests{0}, bad_batches{0}, answer_batches{0}, answers{0},
      event_batches{0}, views_asked{0}, publish_failures{0};

  impl(nats_link& l, std::string n, std::uint64_t e) : link(l), node(std::move(n)), epoch(e) {}

  shard& shard_of(const view_key& k) { return shards[view_key_hash{}(k) % shards.size()]; }

  void publish(const std::string& subject, std::string_view bytes) {
    if (!link.publish(subject, bytes)) publish_failures.fetch_add(1, std::memory_order_relaxed);
  }

  void line_events(line_handle line, phase_id phase, std::span<const line_event> events) {
    const view_key k{line.scene, line.line, phase};
    auto& s = shard_of(k);
    std::lock_guard lock(s.m);
    auto& v = s.views[k];
    if (v.line != line) v = view{line, 0, {}};  // a new generation starts its count again
    for (const auto& e : events) {
      if (e.what == line_event::kind::left)
        v.standing.erase(entity_of(e));
      else
        v.standing[entity_of(e)] = line_event{line_event::kind::entered, e.player, e.at, e.monster};
    }
    wire::event_batch b{line, phase, ++v.seq, {events.begin(), events.end()}};
    // Published under the view's lock, so the line's batches leave in their order.
    publish(subjects::line(node, line), wire::encode(b));
    event_batches.fetch_add(1, std::memory_order_relaxed);
  }

  void on_requests(std::string_view data) {
    auto batch = wire::decode_request_batch(data);
    if (!batch || !valid_name(batch->gateway)) {
      bad_batches.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    request_batches.fetch_add(1, std::memory_order_relaxed);
    requests.fetch_add(batch->requests.size(), std::memory_order_relaxed);
    auto gateway = std::make_shared<const std::string>(std::move(batch->gateway));
    for (const auto& r : batch->requests) {
      w->submit(r.request, [weak = weak_from_this(), gateway, ticket = r.ticket](world_result answer) {
        if (auto self = weak.lock()) self->answer(*gateway, ticket, std::move(answer));
      });
    }
  }

  void answer(const std::string& gateway, std::uint64_t ticket, world_result r) {
    std::lock_guard lock(answers_m);
    auto& out = outbox[gateway];
    out.push_back({ticket, std::move(r)});
    if (out.size() == 1) answers_cv.notify_one();
  }

  void flush_answers() {
    std::unique_lock lock(answers_m);
    for (;;) {
      answers_cv.wait(lock, [this] { return stopping || !outbox.empty(); });
      if (outbox.empty()) return;  // stopping, nothing held
      lock.unlock();
      std::this_thread::sleep_for(answer_linger);
      lock.lock();
      auto batch = std::exchange(outbox, {});
      lock.unlock();
      for (auto& [gateway, entries] : batch) {
        answers.fetch_add(entries.size(), std::memory_order_relaxed);
        answer_batches.fetch_add(1, std::memory_order_relaxed);
        publish(subjects::answers(gateway),
                wire::encode(wire::answer_batch{node, epoch, std::move(entries)}));
      }
      lock.lock();
    }
  }

  void on_views(std::string_view reply) {
    if (reply.empty()) return;
    views_asked.fetch_add(1, std::memory_order_relaxed);
    wire::views all{node, {}};
    for (auto& s : shards) {
      std::lock_guard lock(s.m);
      for (const auto& [k, v] : s.views) {
        wire::view_state state{v.line, k.phase, v.seq, {}};
        state.standing.reserve(v.standing.size());
        for (const auto& [id, e] : v.standing) state.standing.push_back(e);
        all.lines.push_back(std::move(state));
      }
    }
    publish(std::string(reply), wire::encode(all));
  }
};

node_endpoint::node_endpoint(nats_link& link, std::string node, std::uint64_t epoch)
    : impl_(std::make_shared<impl>(link, std::move(node), epoch)) {}

node_endpoint::~node_endpoint() { stop(); }

std::function<void(line_handle, phase_id, std::span<const line_event>)> node_endpoint::on_line_events() {
  return [i = impl_](line_handle line, phase_id phase, std::span<const line_event> events) {
    i->line_events(line, phase, events);
  };
}

cluster_result<void> node_endpoint::start(world_port& w) {
  impl_->w = &w;
  impl_->flusher = std::thread([i = impl_.get()] { i->flush_answers(); });
  auto requests = impl_->link.subscribe(
      subjects::requests(impl_->node),
      [i = impl_.get()](std::string_view, std::string_view data, std::string_view) { i->on_requests(data); });
  if (!requests) return requests.error();
  impl_->requests_sub = std::move(requests).value();
  auto views = impl_->link.subscribe(
      subjects::views(impl_->node),
      [i = impl_.get()](std::string_view, std::string_view, std::string_view reply) { i->on_views(reply); });
  if (!views) return views.error();
  impl_->views_sub = std::move(views).value();
  return {};
}

void node_endpoint::stop() {
  impl_->requests_sub.reset();
  impl_->views_sub.reset();
  {
    std::lock_guard lock(impl_->answers_m);
    impl_->stopping = true;
  }
  impl_->answers_cv.notify_one();
  if (impl_->flusher.joinable()) impl_->flusher.join();
}

node_endpoint_stats node_endpoint::stats() const noexcept {
  auto n = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  const auto& i = *impl_;
  return {n(i.request_batches), n(i.requests),      n(i.bad_batches), n(i.answer_batches),
          n(i.answers),         n(i.event_batches), n(i.views_asked), n(i.publish_failures)};
}

}  // namespace scenert::cluster
