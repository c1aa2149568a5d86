#pragma once
/// nats_link: a process's connection to the cluster's NATS server (messages and JetStream).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

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
  /// Runs (on a thread of the library's) each time the link comes back after losing the server:
  /// messages sent meanwhile may be lost.
  std::function<void()> on_reconnected;
};

/// What a subscription hears: a message's subject, its bytes, and where to answer (empty: nowhere).
using message_handler =
    std::function<void(std::string_view subject, std::string_view data, std::string_view reply)>;

/// An interest in a subject. Its handler runs on a thread of its own, one message at a time; once
/// the subscription is destroyed the handler is no longer running and never runs again.
class subscription {
 public:
  struct state;
  explicit subscription(std::unique_ptr<state> s);
  ~subscription();
  subscription(const subscription&) = delete;
  subscription& operator=(const subscription&) = delete;
  /// Messages the library dropped because the handler fell behind (the slow-consumer cut-off).
  [[nodiscard]] std::uint64_t dropped() const noexcept;

 private:
  std::unique_ptr<state> s_;
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

  /// Queues a message (the library sends its buffer soon, in order per link); `unavailable` when the
  /// link is closed or its reconnect buffer is full.
  cluster_result<void> publish(const std::string& subject, std::string_view data);
  /// Publishes with a reply subject: the answer arrives at whoever subscribed to `reply`.
  cluster_result<void> publish(const std::string& subject, std::string_view data, const std::string& reply);
  /// Hears every message on `subject` (wildcards `*` and `>` allowed) until the result is destroyed.
  /// At most `max_pending_bytes` wait for the handler; past that the library drops them (dropped()).
  [[nodiscard]] cluster_result<std::unique_ptr<subscription>> subscribe(
      const std::string& subject, message_handler handler, std::size_t max_pending_bytes = 64u << 20);
  /// Sends and waits for one answer; `unavailable` after `timeout` or when nobody listens.
  [[nodiscard]] cluster_result<std::string> request(const std::string& subject, std::string_view data,
                                                    std::chrono::milliseconds timeout);
  [[nodiscard]] bool connected() const noexcept;
  [[nodiscard]] std::uint64_t disconnects() const noexcept;
  [[nodiscard]] std::uint64_t reconnects() const noexcept;

 private:
  explicit nats_link(std::shared_ptr<detail::connection_handles> h);
  std::shared_ptr<detail::connection_handles> h_;
};

}  // namespace scenert::cluster
