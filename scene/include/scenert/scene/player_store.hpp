#pragma once
/// player_store: where what a game module gives a player (items, currency) is kept, beyond the line,
/// the session and the process. A grant is written durably before its player hears of it, and the
/// same grant (by its id) is applied once, however often it is written. The store answers on a
/// thread of its own; whoever asked posts the answer to its own thread (a line's mailbox, a front's
/// executor). One process: the SQLite store of store/ (`scenert run --store`); a cluster: the JetStream
/// bucket of cluster/'s kv_player_store, shared by every node and gateway.

#include <cstdint>
#include <string>
#include <vector>

#include <scenert/runtime/unique_function.hpp>
#include <scenert/scene/fwd.hpp>

namespace scenert {

/// An item or a currency, in a studio's own numbering.
using item_id = std::uint32_t;

/// Why the store did not apply a grant or read a player's holdings.
enum class store_errc : std::uint8_t {
  ok = 0,
  no_account,  ///< the player has no account in the store (a guest, or it signed out long ago)
  bad_grant,   ///< a count of zero or below, an empty id or one over max_grant_id_bytes
  io,          ///< the store's file could not be written or read (the grant is not applied)
  closed,      ///< the store stopped before the request was written
  no_store,    ///< the line has no store (`grant` on a world without one)
  count_
};
/// Every store_errc's name, by code.
inline constexpr const char* store_errc_names[] = {"ok", "no_account", "bad_grant",
                                                   "io", "closed",     "no_store"};
static_assert(std::size(store_errc_names) == static_cast<std::size_t>(store_errc::count_),
              "store_errc: name every code");

/// The longest grant id the store takes.
inline constexpr std::size_t max_grant_id_bytes = 128;

/// One grant: `count` (> 0) of `item` to a player, applied once for its `id`.
struct grant {
  std::string id;  ///< unique per grant, across lines, runs and players: a repeat is not applied
  player_id player = 0;
  item_id item = 0;
  std::int64_t count = 0;
};

/// How the store answered a grant.
struct grant_receipt {
  grant what;
  store_errc code = store_errc::ok;  ///< ok: it is in the store (now, or already before: `repeated`)
  bool repeated = false;             ///< its id was applied before: nothing changed now
  std::string reason;                ///< not ok: why, for logs
};

/// What an account holds of one item.
struct holding {
  item_id item = 0;
  std::int64_t count = 0;
  friend bool operator==(const holding&, const holding&) = default;
};

/// What an account holds, item by item (ascending), or why it could not be read.
struct holdings {
  std::string owner;
  std::vector<holding> items;
  store_errc code = store_errc::ok;
  std::string reason;
};

using grant_done = unique_function<void(grant_receipt)>;
using holdings_done = unique_function<void(holdings)>;

/// The store as lines and fronts use it. Every call returns at once (no call waits for a disk);
/// each `done` is called exactly once, on the store's own thread, in the order the calls were made:
/// keep it short and post to your own thread.
/// Thread-safety: every call from any thread.
class player_store {
 public:
  virtual ~player_store() = default;
  /// The player is the account `owner` from now on (a named login); `done` hears what it holds.
  /// Grants to a player are kept under the account it signed in as.
  virtual void sign_in(player_id player, std::string owner, holdings_done done) = 0;
  /// The player left: grants to it still take its account for a grace period, then fail no_account.
  virtual void sign_out(player_id player) = 0;
  /// Writes a grant; `done` hears of it once it is committed (durable), or why not.
  virtual void write(grant g, grant_done done) = 0;
  /// What an account holds.
  virtual void read(std::string owner, holdings_done done) = 0;
};

}  // namespace scenert
