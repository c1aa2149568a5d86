#include <scenert/cluster/kv_bucket.hpp>

#include <fmt/format.h>

#include "nats_handles.hpp"

namespace scenert::cluster {

const std::string& kv_bucket::name() const noexcept { return h_->name; }

cluster_result<kv_entry> kv_bucket::get(std::string_view key) const {
  const std::string k(key);
  kvEntry* e = nullptr;
  natsStatus s = kvStore_Get(&e, h_->kv, k.c_str());
  if (s == NATS_NOT_FOUND)
    return fail(cluster_errc::not_found, fmt::format("cluster: bucket '{}' has no key '{}'", h_->name, k));
  if (s != NATS_OK) return detail::unavailable(fmt::format("cluster: get '{}' from '{}'", k, h_->name), s);
  kv_entry out{
      std::string(static_cast<const char*>(kvEntry_Value(e)), static_cast<std::size_t>(kvEntry_ValueLen(e))),
      kvEntry_Revision(e)};
  kvEntry_Destroy(e);
  return out;
}

cluster_result<std::uint64_t> kv_bucket::create(std::string_view key, std::string_view value) {
  return publish(key, value, 0, expect::nothing);
}

cluster_result<std::uint64_t> kv_bucket::update(std::string_view key, std::string_view value,
                                                std::uint64_t revision) {
  return publish(key, value, revision, expect::revision);
}

cluster_result<std::uint64_t> kv_bucket::put(std::string_view key, std::string_view value) {
  return publish(key, value, 0, expect::anything);
}

cluster_result<void> kv_bucket::erase_at(std::string_view key, std::uint64_t revision) {
  auto erased = publish(key, {}, revision, expect::revision, true);
  if (!erased) return erased.error();
  return {};
}

// A write with the server's own check: the key's last sequence must be `revision` (none for a
// create). nats.c's update does not say which check failed; the publish's error code does. An
// erase is the bucket's delete marker: an empty message with the KV-Operation header.
cluster_result<std::uint64_t> kv_bucket::publish(std::string_view key, std::string_view value,
                                                 std::uint64_t revision, expect what, bool erasing) {
  const std::string subject = fmt::format("$KV.{}.{}", h_->name, key);
  jsPubOptions po{};
  natsStatus s = jsPubOptions_Init(&po);
  po.MaxWait = h_->conn->timeout_ms;
  if (what == expect::nothing) po.ExpectNoMessage = true;
  if (what == expect::revision) po.ExpectLastSubjectSeq = revision;
  jsPubAck* ack = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  if (s == NATS_OK && !erasing)
    s = js_Publish(&ack, h_->conn->js, subject.c_str(), value.data(), static_cast<int>(value.size()), &po,
                   &code);
  if (s == NATS_OK && erasing) {
    natsMsg* msg = nullptr;
    s = natsMsg_Create(&msg, subject.c_str(), nullptr, nullptr, 0);
    if (s == NATS_OK) s = natsMsgHeader_Set(msg, "KV-Operation", "DEL");
    if (s == NATS_OK) s = js_PublishMsg(&ack, h_->conn->js, msg, &po, &code);
    natsMsg_Destroy(msg);
  }
  if (s == NATS_OK) {
    const std::uint64_t rev = ack->Sequence;
    jsPubAck_Destroy(ack);
    return rev;
  }
  if (code == JSStreamWrongLastSequenceErr)
    return fail(
        cluster_errc::conflict,
        what == expect::nothing
            ? fmt::format("cluster: key '{}' of '{}' exists already", key, h_->name)
            : fmt::format("cluster: key '{}' of '{}' moved past revision {}", key, h_->name, revision));
  return detail::unavailable(fmt::format("cluster: {} '{}' {} '{}'", erasing ? "delete" : "write", key,
                                         erasing ? "from" : "to", h_->name),
                             s);
}

cluster_result<void> kv_bucket::erase(std::string_view key) {
  const std::string k(key);
  natsStatus s = kvStore_Delete(h_->kv, k.c_str());
  if (s != NATS_OK) return detail::unavailable(fmt::format("cluster: delete '{}' from '{}'", k, h_->name), s);
  return {};
}

cluster_result<std::vector<std::string>> kv_bucket::keys() const {
  kvKeysList list{};
  kvWatchOptions wo{};
  natsStatus s = kvWatchOptions_Init(&wo);
  wo.Timeout = h_->conn->timeout_ms;
  if (s == NATS_OK) s = kvStore_Keys(&list, h_->kv, &wo);
  std::vector<std::string> out;
  if (s == NATS_NOT_FOUND) return out;  // an empty bucket
  if (s != NATS_OK) return detail::unavailable(fmt::format("cluster: keys of '{}'", h_->name), s);
  out.reserve(static_cast<std::size_t>(list.Count));
  for (int i = 0; i < list.Count; ++i) out.emplace_back(list.Keys[i]);
  kvKeysList_Destroy(&list);
  return out;
}

}  // namespace scenert::cluster
