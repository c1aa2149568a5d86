#pragma once
// The nats.c objects behind a link and its buckets. Buckets share the connection, so it closes
// after the last of them.

#include <nats/nats.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <scenert/cluster/cluster_errc.hpp>

namespace scenert::cluster::detail {

struct connection_handles {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  std::int64_t timeout_ms = 2000;
  std::atomic<std::uint64_t> disconnects{0}, reconnects{0};
  std::function<void()> on_reconnected;  // set before it can be called
  connection_handles() = default;
  connection_handles(const connection_handles&) = delete;
  connection_handles& operator=(const connection_handles&) = delete;
  ~connection_handles() {
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);  // callbacks that fire while it closes still find the counters
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
