#pragma once
// A scene node in this process, wired by hand as `scenert run --cluster` wires one (its own link, lease,
// endpoint, and a world whose lines open by compare-and-set in the shared lines bucket), minus the
// watch of other nodes' deaths; and the loop that keeps a gateway and its nodes polled and beating.
// For the cluster tests and bench_cluster.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <scenert/cluster/cluster_directory.hpp>
#include <scenert/cluster/line_store.hpp>
#include <scenert/cluster/node_endpoint.hpp>
#include <scenert/cluster/node_lease.hpp>
#include <scenert/cluster/remote_world.hpp>
#include <scenert/runtime/processor_pool.hpp>
#include <scenert/scene/world.hpp>

#include "nats_server.hpp"

namespace scenert::cluster::test {

inline constexpr const char* nodes_bucket = "scenert-nodes";  // the buckets `scenert run --cluster` shares
inline constexpr const char* lines_bucket = "scenert-lines";

struct node_in_process {
  // The endpoint and the pool stop before the world they point to goes (also when a start failed).
  ~node_in_process() {
    if (endpoint) endpoint->stop();
    if (pool) (void)pool->stop();
  }
  std::string name;
  std::unique_ptr<nats_link> link;
  std::optional<node_lease> lease;
  std::unique_ptr<node_endpoint> endpoint;
  std::unique_ptr<processor_pool> pool;
  std::shared_ptr<world> w;
};

inline std::unique_ptr<node_in_process> start_node(const nats_server& server, const scene_table& table,
                                              std::string name, unsigned workers,
                                              std::function<void(std::string_view)> warn) {
  using namespace std::chrono_literals;
  auto n = std::make_unique<node_in_process>();
  n->name = std::move(name);
  auto [link, nodes] = open_bucket(server, nodes_bucket, n->name);
  n->link = std::move(link);
  auto lines = n->link->bucket(lines_bucket);
  auto lease = node_lease::join(nodes, n->name, 0);
  if (!lines || !lease) throw std::runtime_error(n->name + ": cannot join the cluster");
  n->lease.emplace(std::move(lease).value());
  n->endpoint = std::make_unique<node_endpoint>(*n->link, n->name, n->lease->record().epoch);
  world_options wo;
  wo.directory =
      make_cluster_directory(table, line_store(*lines), n->lease->record(), {1000ms, std::move(warn), {}});
  wo.on_line_events = n->endpoint->on_line_events();
  pool_options po;
  po.workers = workers;
  n->pool = std::make_unique<processor_pool>(po);
  (void)n->pool->start();
  n->w = world::create(table, *n->pool, std::move(wo));
  n->w->start();
  if (auto started = n->endpoint->start(*n->w); !started)
    throw std::runtime_error(n->name + ": " + started.error().message);
  return n;
}

// What the run loop of `scenert run` and `scenert gateway` does a few times a second: the gateway
// rereads the nodes' loads, the endpoints and leases keep the cluster's view of them alive.
class poller {
 public:
  poller(remote_world& g, std::vector<std::unique_ptr<node_in_process>>& nodes,
         std::function<void(std::string_view)> warn)
      : thread_([&g, &nodes, this, warn = std::move(warn)] {
          using namespace std::chrono_literals;
          for (auto beat = std::chrono::steady_clock::now(); !stop_.load();
               std::this_thread::sleep_for(100ms)) {
            const auto now = std::chrono::steady_clock::now();
            g.poll(now);
            for (auto& n : nodes) n->endpoint->poll(now);
            if (now < beat) continue;
            beat = now + 1s;
            for (auto& n : nodes)
              if (auto b = n->lease->beat(static_cast<std::uint32_t>(n->w->snapshot()->players)); !b)
                warn(b.error().message);
          }
        }) {}
  ~poller() {
    stop_ = true;
    thread_.join();
  }
  poller(const poller&) = delete;
  poller& operator=(const poller&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace scenert::cluster::test
