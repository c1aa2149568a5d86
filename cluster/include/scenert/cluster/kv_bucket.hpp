#pragma once
/// kv_bucket: one JetStream key-value bucket, read and written by compare-and-set.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/cluster/cluster_errc.hpp>

namespace scenert::cluster {

namespace detail {
struct bucket_handles;
}

/// A key's latest value and its revision (the stream sequence of the write that put it there).
struct kv_entry {
  std::string value;
  std::uint64_t revision = 0;
};

/// Every write that decides something names what it expects: create() only when the key has never
/// been written (or was deleted), update() only at the revision the caller last read. A lost race is
/// `conflict`, never an overwrite. Keys: letters, digits and `-_=.` (NATS subjects).
/// Thread-safety: any thread; each call is one request to the server (up to the link's timeout).
class kv_bucket {
 public:
  explicit kv_bucket(std::shared_ptr<detail::bucket_handles> h) : h_(std::move(h)) {}

  [[nodiscard]] cluster_result<kv_entry> get(std::string_view key) const;
  /// The key's first value: `conflict` when it holds one already.
  [[nodiscard]] cluster_result<std::uint64_t> create(std::string_view key, std::string_view value);
  /// A new value when the key is still at `revision`: `conflict` when it moved on.
  [[nodiscard]] cluster_result<std::uint64_t> update(std::string_view key, std::string_view value,
                                                     std::uint64_t revision);
  /// Removes the key's value: for a record that decides nothing any more (a void resume token).
  [[nodiscard]] cluster_result<void> erase(std::string_view key);
  /// Every key that holds a value now, in no particular order.
  [[nodiscard]] cluster_result<std::vector<std::string>> keys() const;
  [[nodiscard]] const std::string& name() const noexcept;

 private:
  cluster_result<std::uint64_t> publish(std::string_view key, std::string_view value, std::uint64_t revision,
                                        bool first);
  std::shared_ptr<detail::bucket_handles> h_;
};

}  // namespace scenert::cluster
