#pragma once
// The nats.c objects behind a link and its buckets. Buckets share the connection, so it closes
// after the last of them.

#include <nats/nats.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <scenert/cluster/cluster_errc.hpp>

namespace scenert::cluster::detail {

struct connection_handles {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  std::int64_t timeout_ms = 2000;
  std::atomic<std::uint64_t> disconnects{0}, reconnects{0};
  std::function<void()> on_reconnected;  // set before it can be called
  // The library calls back on a thread of its own, the closed callback last of all: the handles
  // outlive it (a disconnected callback may still be on its way when Close returns).
  std::mutex closed_m;
  std::condition_variable closed_cv;
  bool closed = false;
  connection_handles() = default;
  connection_handles(const connection_handles&) = delete;
  connection_handles& operator=(const connection_handles&) = delete;
  ~connection_handles() {
    jsCtx_Destroy(js);
    if (nc != nullptr) {
      natsConnection_Close(nc);
      std::unique_lock lock(closed_m);
      closed_cv.wait_for(lock, std::chrono::seconds(5), [this] { return closed; });
    }
    natsConnection_Destroy(nc);
  }
};

struct bucket_handles {
  std::shared_ptr<connection_handles> conn;
  kvStore* kv = nullptr;
  std::string name;
  bucket_handles() = default;
  bucket_handles(const bucket_handles&) = delete;
  bucket_handles& operator=(const bucket_handles&) = delete;
  ~bucket_handles() { kvStore_Destroy(kv); }
};

/// The library's words for a failed call: its status and the thread's last error text.
std::string describe(natsStatus s);

/// A failed call as a cluster error: timeouts and lost connections are `unavailable`.
error<cluster_errc> unavailable(std::string what, natsStatus s);

}  // namespace scenert::cluster::detail
