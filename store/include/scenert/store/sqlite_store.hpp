#pragma once
/// sqlite_store: the player store of one process, in a SQLite file. Grants are applied once by their
/// id (the grants table's primary key) and written by one writer thread that commits what has queued
/// up in one transaction (group commit) and only then answers each request: a grant's `done` runs
/// after its commit is durable (WAL, synchronous=FULL: a commit survives the process and the
/// machine's power). Nothing waits for the disk but that thread.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <scenert/runtime/result.hpp>
#include <scenert/scene/player_store.hpp>

namespace scenert::store {

/// How the store behaves.
struct sqlite_options {
  /// How long a signed-out player's grants still find its account: a line may grant as it leaves.
  std::chrono::milliseconds account_grace{60'000};
  /// The most requests one transaction takes; the rest wait for the next.
  std::size_t max_batch = 4096;
};

/// Counts since the store opened. Thread-safety: read from any thread.
struct store_stats {
  std::uint64_t grants = 0;         ///< grants written (applied now)
  std::uint64_t repeats = 0;        ///< grants whose id was applied before: not applied again
  std::uint64_t failed = 0;         ///< grants that failed (no account, a bad grant, the disk)
  std::uint64_t reads = 0;          ///< holdings read (sign-ins and reads)
  std::uint64_t commits = 0;        ///< transactions committed
  std::uint64_t commit_ns = 0;      ///< time spent committing, in total
  std::uint64_t max_commit_ns = 0;  ///< the longest commit
};

/// Thread-safety: the player_store calls, stats() and path() from any thread; stop() from one.
class sqlite_store final : public player_store {
 public:
  /// Opens (creates when absent) the store at `path` and starts its writer thread: io, naming the
  /// path and SQLite's reason, when the file cannot be opened, is no store, or is a newer store's.
  static result<std::unique_ptr<sqlite_store>, store_errc> open(const std::string& path,
                                                                sqlite_options options = {});
  /// stop(), then closes the file.
  ~sqlite_store() override;
  sqlite_store(const sqlite_store&) = delete;
  sqlite_store& operator=(const sqlite_store&) = delete;

  void sign_in(player_id player, std::string owner, holdings_done done) override;
  void sign_out(player_id player) override;
  void write(grant g, grant_done done) override;
  void read(std::string owner, holdings_done done) override;

  /// Writes and answers everything queued, then stops the writer thread. Later calls are answered
  /// `closed` at once, on the caller's thread.
  void stop();
  [[nodiscard]] store_stats stats() const;
  /// The store's file.
  [[nodiscard]] const std::string& path() const noexcept;

  struct impl;

 private:
  explicit sqlite_store(std::unique_ptr<impl> i);
  std::unique_ptr<impl> impl_;
};

/// Where a table's store is when `--store` does not say: beside the table, its name with
/// `.store.sqlite` for `.json` ("crypt.json" -> "crypt.store.sqlite").
[[nodiscard]] std::string default_store_path(std::string_view table_path);

}  // namespace scenert::store
