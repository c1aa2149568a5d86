#include <scenert/cluster/nats_link.hpp>

#include <fmt/format.h>

#include "nats_handles.hpp"

namespace scenert::cluster {

namespace detail {

std::string describe(natsStatus s) {
  const char* last = nats_GetLastError(nullptr);
  return last != nullptr && *last != '\0' ? fmt::format("{} ({})", natsStatus_GetText(s), last)
                                          : std::string(natsStatus_GetText(s));
}

error<cluster_errc> unavailable(std::string what, natsStatus s) {
  return fail(cluster_errc::unavailable, fmt::format("{}: {}", what, describe(s)));
}

}  // namespace detail

namespace {

void on_disconnected(natsConnection*, void* closure) {
  static_cast<detail::connection_handles*>(closure)->disconnects.fetch_add(1, std::memory_order_relaxed);
}
void on_reconnected(natsConnection*, void* closure) {
  static_cast<detail::connection_handles*>(closure)->reconnects.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

nats_link::nats_link(std::shared_ptr<detail::connection_handles> h) : h_(std::move(h)) {}
nats_link::~nats_link() = default;

cluster_result<std::unique_ptr<nats_link>> nats_link::connect(const link_options& o) {
  auto h = std::make_shared<detail::connection_handles>();
  h->timeout_ms = o.timeout.count();
  natsOptions* raw = nullptr;
  natsStatus s = natsOptions_Create(&raw);
  std::unique_ptr<natsOptions, void (*)(natsOptions*)> opts(raw, natsOptions_Destroy);
  if (s == NATS_OK) s = natsOptions_SetURL(raw, o.url.c_str());
  if (s == NATS_OK && !o.name.empty()) s = natsOptions_SetName(raw, o.name.c_str());
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(raw, -1);  // never give the server up
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(raw, o.reconnect_wait.count());
  if (s == NATS_OK) s = natsOptions_SetPingInterval(raw, o.ping_interval.count());
  if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(raw, o.max_pings_out);
  if (s == NATS_OK) s = natsOptions_SetTimeout(raw, o.timeout.count());
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(raw, on_disconnected, h.get());
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(raw, on_reconnected, h.get());
  if (s == NATS_OK) s = natsConnection_Connect(&h->nc, raw);
  if (s != NATS_OK) return detail::unavailable(fmt::format("cluster: connect to {}", o.url), s);
  jsOptions js{};
  s = jsOptions_Init(&js);
  js.Wait = o.timeout.count();
  if (s == NATS_OK) s = natsConnection_JetStream(&h->js, h->nc, &js);
  if (s != NATS_OK) return detail::unavailable(fmt::format("cluster: JetStream at {}", o.url), s);
  return std::unique_ptr<nats_link>(new nats_link(std::move(h)));
}

cluster_result<kv_bucket> nats_link::bucket(const std::string& name) {
  auto b = std::make_shared<detail::bucket_handles>();
  b->conn = h_;
  b->name = name;
  kvConfig cfg{};
  natsStatus s = kvConfig_Init(&cfg);
  cfg.Bucket = name.c_str();
  cfg.History = 1;
  cfg.StorageType = js_FileStorage;
  // Creating a bucket that exists with the same settings answers it; one made otherwise is bound.
  if (s == NATS_OK) s = js_CreateKeyValue(&b->kv, h_->js, &cfg);
  if (s != NATS_OK) s = js_KeyValue(&b->kv, h_->js, name.c_str());
  if (s != NATS_OK) return detail::unavailable(fmt::format("cluster: open bucket '{}'", name), s);
  return kv_bucket(std::move(b));
}

bool nats_link::connected() const noexcept {
  return natsConnection_Status(h_->nc) == NATS_CONN_STATUS_CONNECTED;
}
std::uint64_t nats_link::disconnects() const noexcept {
  return h_->disconnects.load(std::memory_order_relaxed);
}
std::uint64_t nats_link::reconnects() const noexcept {
  return h_->reconnects.load(std::memory_order_relaxed);
}

}  // namespace scenert::cluster
