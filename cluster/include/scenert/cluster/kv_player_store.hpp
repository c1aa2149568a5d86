#pragma once
/// kv_player_store: the player store of a cluster, in the cluster's JetStream key-value bucket, so a
/// player finds its items on every node and through every gateway. One record per account (its
/// holdings and the ids of its latest grants) changes by compare-and-set: a grant is applied in one
/// atomic write, so no crash leaves it half applied, and two nodes writing the same grant apply it
/// once (the loser of the race reads the record again and finds the id). Grant ids that leave an
/// account's record (past `recent_grants`) keep a mark of their own (`spent.<id>`) that is written
/// before they leave, so an id is applied once however old. A grant's `done` runs once JetStream
/// acknowledged the write (it is in the stream's file storage). The calls and their answers: as
/// player_store says, on a worker thread of the store's own, which alone talks to the server.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/scene/player_store.hpp>

namespace scenert::cluster {

/// The bucket a cluster's player store lives in, unless told otherwise.
inline constexpr const char* default_player_bucket = "scenert-players";

/// How the store behaves.
struct kv_store_options {
  std::string url = "nats://127.0.0.1:4222";  ///< the cluster's NATS server (JetStream on)
  std::string name;                           ///< the connection's name, for the server's monitoring
  std::string bucket = default_player_bucket;
  /// How long a signed-out player's grants still find its account: a line may grant as it leaves.
  std::chrono::milliseconds account_grace{60'000};
  /// How long this store trusts what it read of a player's sign-in before it reads it again (another
  /// node or gateway may have signed it out meanwhile).
  std::chrono::milliseconds player_ttl{5'000};
  /// Grant ids an account's record keeps; older ones move to marks of their own, and a Bloom filter
  /// of them in the record (5.5 KB) spares most new grants a read of their mark. The record stays
  /// under about recent_grants x 1.4 x the ids' length + 5.5 KB, plus 20 bytes an item.
  std::size_t recent_grants = 256;
  std::size_t max_batch = 4096;             ///< the most requests the worker takes at once
  std::chrono::milliseconds timeout{2000};  ///< each request to the server
};

/// Counts since the store opened. Thread-safety: read from any thread.
struct kv_store_stats {
  std::uint64_t grants = 0;        ///< grants applied now
  std::uint64_t repeats = 0;       ///< grants whose id was applied before: not applied again
  std::uint64_t failed = 0;        ///< grants that failed (no account, a bad grant, the server)
  std::uint64_t reads = 0;         ///< holdings read (sign-ins and reads)
  std::uint64_t writes = 0;        ///< account records written (one for the grants of a batch to one account)
  std::uint64_t conflicts = 0;     ///< writes that lost a race to another store and were done again
  std::uint64_t marks = 0;         ///< spent.<id> marks written for ids leaving a record
  std::uint64_t spent_reads = 0;   ///< marks read: a new grant's id the record's filter may hold
  std::uint64_t write_ns = 0;      ///< time spent in account writes, in total
  std::uint64_t max_write_ns = 0;  ///< the longest account write
  /// Signed-out players whose grace ended: their sign-in let go (unless another store's replaced it)
  std::uint64_t expired = 0;
};

/// Thread-safety: the player_store calls and stats() from any thread; stop() from one.
class kv_player_store final : public player_store {
 public:
  /// Connects, opens (creates when absent) the bucket and starts the worker: io naming the URL or
  /// the bucket when the server cannot be had.
  static result<std::unique_ptr<kv_player_store>, store_errc> open(kv_store_options options);
  /// stop(), then closes the connection.
  ~kv_player_store() override;
  kv_player_store(const kv_player_store&) = delete;
  kv_player_store& operator=(const kv_player_store&) = delete;

  void sign_in(player_id player, std::string owner, holdings_done done) override;
  void sign_out(player_id player) override;
  void write(grant g, grant_done done) override;
  void read(std::string owner, holdings_done done) override;

  /// Writes and answers everything queued, then stops the worker. Later calls are answered `closed`
  /// at once, on the caller's thread.
  void stop();
  [[nodiscard]] kv_store_stats stats() const;
  /// The bucket, for logs.
  [[nodiscard]] const std::string& bucket() const noexcept;

  struct impl;

 private:
  explicit kv_player_store(std::unique_ptr<impl> i);
  std::unique_ptr<impl> impl_;
};

}  // namespace scenert::cluster
