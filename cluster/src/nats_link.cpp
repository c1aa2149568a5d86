#include <scenert/cluster/nats_link.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <mutex>

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
void on_closed(natsConnection*, void* closure) {
  auto* h = static_cast<detail::connection_handles*>(closure);
  std::lock_guard lock(h->closed_m);  // notified under the lock: the waiter frees nothing before it is done
  h->closed = true;
  h->closed_cv.notify_all();
}
void on_reconnected(natsConnection*, void* closure) {
  auto* h = static_cast<detail::connection_handles*>(closure);
  h->reconnects.fetch_add(1, std::memory_order_relaxed);
  if (h->on_reconnected) h->on_reconnected();
}

}  // namespace

nats_link::nats_link(std::shared_ptr<detail::connection_handles> h) : h_(std::move(h)) {}
nats_link::~nats_link() = default;

cluster_result<std::unique_ptr<nats_link>> nats_link::connect(const link_options& o) {
  auto h = std::make_shared<detail::connection_handles>();
  h->timeout_ms = o.timeout.count();
  h->on_reconnected = o.on_reconnected;
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
  if (s == NATS_OK) s = natsOptions_SetClosedCB(raw, on_closed, h.get());
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

// A subscription's handler and the signal that the library is done with it.
struct subscription::state {
  message_handler handler;
  natsSubscription* sub = nullptr;
  std::mutex m;
  std::condition_variable cv;
  bool complete = false;
  std::shared_ptr<detail::connection_handles> conn;  // the connection outlives its subscriptions
};

namespace {

void on_message(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* st = static_cast<subscription::state*>(closure);
  if (natsMsg_IsNoResponders(msg)) {  // the server's word that nobody listens: the asker retries
    natsMsg_Destroy(msg);
    return;
  }
  const char* reply = natsMsg_GetReply(msg);
  st->handler(natsMsg_GetSubject(msg),
              std::string_view(natsMsg_GetData(msg), static_cast<std::size_t>(natsMsg_GetDataLength(msg))),
              reply != nullptr ? std::string_view(reply) : std::string_view());
  natsMsg_Destroy(msg);
}

void on_complete(void* closure) {
  auto* st = static_cast<subscription::state*>(closure);
  std::lock_guard lock(st->m);
  st->complete = true;
  st->cv.notify_all();
}

}  // namespace

subscription::subscription(std::unique_ptr<state> s) : s_(std::move(s)) {}

subscription::~subscription() {
  natsSubscription_Unsubscribe(s_->sub);
  std::unique_lock lock(s_->m);
  // The library calls on_complete once the handler returned for the last time; a subscription the
  // library never completes (its connection gone) keeps its state rather than risk a late call.
  if (!s_->cv.wait_for(lock, std::chrono::seconds(5), [this] { return s_->complete; })) {
    lock.unlock();
    (void)s_.release();
    return;
  }
  lock.unlock();
  natsSubscription_Destroy(s_->sub);
}

std::uint64_t subscription::dropped() const noexcept {
  int64_t n = 0;
  natsSubscription_GetDropped(s_->sub, &n);
  return static_cast<std::uint64_t>(n);
}

cluster_result<void> nats_link::publish(const std::string& subject, std::string_view data) {
  natsStatus s = natsConnection_Publish(h_->nc, subject.c_str(), data.data(), static_cast<int>(data.size()));
  if (s != NATS_OK) return detail::unavailable(fmt::format("cluster: publish on {}", subject), s);
  return {};
}

cluster_result<void> nats_link::publish(const std::string& subject, std::string_view data,
                                        const std::string& reply) {
  natsStatus s = natsConnection_PublishRequest(h_->nc, subject.c_str(), reply.c_str(), data.data(),
                                               static_cast<int>(data.size()));
  if (s != NATS_OK) return detail::unavailable(fmt::format("cluster: publish on {}", subject), s);
  return {};
}

cluster_result<std::unique_ptr<subscription>> nats_link::subscribe(const std::string& subject,
                                                                   message_handler handler,
                                                                   std::size_t max_pending_bytes) {
  auto st = std::make_unique<subscription::state>();
  st->handler = std::move(handler);
  st->conn = h_;
  natsStatus s = natsConnection_Subscribe(&st->sub, h_->nc, subject.c_str(), on_message, st.get());
  if (s == NATS_OK) s = natsSubscription_SetOnCompleteCB(st->sub, on_complete, st.get());
  if (s == NATS_OK)
    s = natsSubscription_SetPendingLimits(
        st->sub, -1, static_cast<int>(std::min<std::size_t>(max_pending_bytes, INT32_MAX)));
  if (s != NATS_OK) {
    if (st->sub != nullptr) {
      natsSubscription_Unsubscribe(st->sub);
      (void)st.release();  // the library may still hold it; a failed subscribe is rare and small
    }
    return detail::unavailable(fmt::format("cluster: subscribe to {}", subject), s);
  }
  return std::make_unique<subscription>(std::move(st));
}

cluster_result<std::string> nats_link::request(const std::string& subject, std::string_view data,
                                               std::chrono::milliseconds timeout) {
  natsMsg* raw = nullptr;
  natsStatus s = natsConnection_Request(&raw, h_->nc, subject.c_str(), data.data(),
                                        static_cast<int>(data.size()), timeout.count());
  if (s != NATS_OK) return detail::unavailable(fmt::format("cluster: request on {}", subject), s);
  std::string answer(natsMsg_GetData(raw), static_cast<std::size_t>(natsMsg_GetDataLength(raw)));
  natsMsg_Destroy(raw);
  return answer;
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
