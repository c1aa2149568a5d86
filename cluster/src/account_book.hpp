#pragma once
// account_book: what the cluster's player store does on its worker thread, one call at a time:
// sign-ins and sign-outs as player.<id> records, holdings read from account.<owner>, and a batch's
// grants applied by compare-and-set, one write per account. It keeps what it read last of each
// account (a write from there costs one round trip when nobody else wrote meanwhile; a lost race
// reads the record again) and of each player (for player_ttl).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <scenert/cluster/kv_bucket.hpp>
#include <scenert/cluster/kv_player_store.hpp>
#include <scenert/scene/player_store.hpp>

#include "player_records.hpp"

namespace scenert::cluster::detail {

// Counts read by stats() on any thread.
struct kv_counters {
  std::atomic<std::uint64_t> grants{0}, repeats{0}, failed{0}, reads{0}, writes{0}, conflicts{0}, marks{0},
      spent_reads{0}, write_ns{0}, max_write_ns{0}, expired{0};
};

// A grant of the batch on its way: `receipt.code` is final once `decided`.
struct pending_grant {
  grant_receipt receipt;
  grant_done done;
  std::string account;  // the account's key
  std::string id;       // the grant's id, base64url
  bool decided = false;
};

// Thread-safety: none; the store's worker alone.
class account_book {
 public:
  account_book(kv_bucket bucket, const kv_store_options& o, kv_counters& n)
      : bucket_(std::move(bucket)), o_(o), n_(n) {}

  // The account the player signed in as (still, or gone less than the grace ago).
  result<std::string, store_errc> owner_of(player_id player);
  // Writes the player's record, then reads its account.
  holdings sign_in(player_id player, std::string owner);
  // Marks gone a player this store signed in (its record removed after the grace, by this store),
  // unless the record was written again since (the player signed in elsewhere).
  void sign_out(player_id player);
  holdings read(std::string owner);
  // Decides every grant not decided yet: applied, repeated or failed.
  void apply(std::vector<pending_grant>& grants);
  // When the next signed-out player's record is due to go, if any.
  [[nodiscard]] std::optional<std::chrono::steady_clock::time_point> next_erase() const;
  void erase_due();

 private:
  struct known_player {
    player_record rec;
    std::uint64_t revision = 0;
    std::chrono::steady_clock::time_point read_at;
  };
  struct known_account {
    account_record rec;
    std::uint64_t revision = 0;  // 0: the key holds nothing
  };
  struct gone_player {
    std::chrono::steady_clock::time_point due;
    player_id player;
    std::uint64_t revision;
  };
  // What one round of an account's write decided: the record to write and which grants it applies.
  struct round {
    account_record next;
    std::vector<bool> applies;
    std::size_t applied = 0;
    std::size_t examined = 0;  // the grants decided by this round: the first ones, in order
  };

  result<known_player*, store_errc> player(player_id p);
  result<known_account, store_errc> load(const std::string& key, bool fresh);
  result<round, store_errc> decide(const known_account& now, std::vector<pending_grant*>& grants);
  result<bool, store_errc> spent(const std::string& id);
  result<void, store_errc> let_go(round& r, std::size_t prior);
  void write_account(const std::string& key, std::vector<pending_grant*>& grants);
  bool write_round(const std::string& key, std::vector<pending_grant*>& grants);
  void remember(const std::string& key, known_account a);
  void prune_players();

  kv_bucket bucket_;
  const kv_store_options& o_;
  kv_counters& n_;
  std::unordered_map<player_id, known_player> players_;
  std::unordered_map<player_id, known_player> signed_in_;  // this store's own sign-ins, as it wrote them
  std::unordered_map<std::string, known_account> accounts_;
  std::unordered_set<std::string> spent_seen_;  // marks found in this write's rounds
  std::deque<gone_player> gone_;                // by due time: the grace is the same for all
  std::chrono::steady_clock::time_point pruned_ = std::chrono::steady_clock::now();
};

}  // namespace scenert::cluster::detail
