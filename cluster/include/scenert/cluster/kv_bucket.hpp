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
  /// The key's new value whatever it held: for a record only its writer decides (its own
  /// player's sign-in), or one whose every value means the same (a spent grant's mark).
  [[nodiscard]] cluster_result<std::uint64_t> put(std::string_view key, std::string_view value);
  /// Removes the key's value: for a record that decides nothing any more (a void resume token).
  [[nodiscard]] cluster_result<void> erase(std::string_view key);
  /// Removes the key's value when it is still at `revision`: `conflict` when it moved on (written
  /// again by someone else meanwhile, who keeps it).
  [[nodiscard]] cluster_result<void> erase_at(std::string_view key, std::uint64_t revision);
  /// Every key that holds a value now, in no particular order.
  [[nodiscard]] cluster_result<std::vector<std::string>> keys() const;
  [[nodiscard]] const std::string& name() const noexcept;

 private:
  enum class expect : std::uint8_t { nothing, revision, anything };
  cluster_result<std::uint64_t> publish(std::string_view key, std::string_view value, std::uint64_t revision,
                                        expect what, bool erasing = false);
  std::shared_ptr<detail::bucket_handles> h_;
};

}  // namespace scenert::cluster
