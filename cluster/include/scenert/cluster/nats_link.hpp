#pragma once
/// nats_link: a process's connection to the cluster's NATS server (messages and JetStream).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/cluster/kv_bucket.hpp>

namespace scenert::cluster {

namespace detail {
struct connection_handles;
}

struct link_options {
  std::string url = "nats://127.0.0.1:4222";
  std::string name;  ///< shown by the server's monitoring: the node's or gateway's name
  /// Pings find a dead server within about ping_interval x max_pings_out; after that the client
  /// reconnects every reconnect_wait, without limit, and a restarted server is found again.
  std::chrono::milliseconds ping_interval{1000};
  int max_pings_out = 3;
  std::chrono::milliseconds reconnect_wait{250};
  std::chrono::milliseconds timeout{2000};  ///< the first connect, and each JetStream request
};

/// Thread-safety: any thread. Buckets opened from a link keep its connection alive.
class nats_link {
 public:
  /// Connects once; a server that is not there is `unavailable` (the caller decides to retry).
  [[nodiscard]] static cluster_result<std::unique_ptr<nats_link>> connect(const link_options& options);
  ~nats_link();
  nats_link(const nats_link&) = delete;
  nats_link& operator=(const nats_link&) = delete;

  /// Opens a key-value bucket (file storage, one value per key), creating it when it is missing.
  [[nodiscard]] cluster_result<kv_bucket> bucket(const std::string& name);

  [[nodiscard]] bool connected() const noexcept;
  [[nodiscard]] std::uint64_t disconnects() const noexcept;
  [[nodiscard]] std::uint64_t reconnects() const noexcept;

 private:
  explicit nats_link(std::shared_ptr<detail::connection_handles> h);
  std::shared_ptr<detail::connection_handles> h_;
};

}  // namespace scenert::cluster
