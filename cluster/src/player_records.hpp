#pragma once
// The player store's records in the cluster's bucket, and the keys they live under:
//   account.<owner>  what an account holds and the ids of the grants applied to it lately
//   spent.<id>       a grant applied long enough ago to have left its account's record
//   player.<id>      which account a player signed in as, and since when it is gone
// Owners and grant ids are any bytes: in keys and records they are base64url (letters, digits,
// '-', '_'; no padding), which NATS subjects and JSON both take as they are.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/runtime/result.hpp>
#include <scenert/scene/player_store.hpp>

namespace scenert::cluster::detail {

/// `bytes` in base64url without padding.
[[nodiscard]] std::string base64url(std::string_view bytes);
/// The bytes back; none for text that is not base64url.
[[nodiscard]] std::optional<std::string> from_base64url(std::string_view text);

[[nodiscard]] std::string account_key(std::string_view owner);
[[nodiscard]] std::string spent_key(std::string_view encoded_grant_id);
[[nodiscard]] std::string player_key(player_id player);

// One account: its holdings, the encoded ids of its latest grants (oldest first), how many older
// ones it let go of to their spent.<id> marks, and a Bloom filter of those (empty until the first
// leaves): an id the filter does not hold was never marked, so no read of its mark is needed.
struct account_record {
  std::map<item_id, std::int64_t> items;
  std::vector<std::string> recent;
  std::uint64_t spent = 0;
  std::string spent_filter;  // raw bits; base64url in the record
};

/// The filter's size in bytes once an account has marks: 32,768 bits, four probes an id (about one
/// id in 500 read for nothing at 2,000 marks, one in 7 at 8,000).
inline constexpr std::size_t spent_filter_bytes = 4096;
/// Adds an (encoded) id to the filter, sizing it first when empty.
void add_spent(std::string& filter, std::string_view id);
/// False when the id was never added; true when it may have been (or the filter is empty).
[[nodiscard]] bool may_be_spent(const std::string& filter, std::string_view id);

[[nodiscard]] std::string encode(const account_record& r);
/// The record, or why `value` is none (bad_record's reason names no key: the caller does).
[[nodiscard]] result<account_record, store_errc> decode_account(std::string_view value);
[[nodiscard]] std::vector<holding> holdings_of(const account_record& r);

// Which account a player is, and since when it is gone (0: signed in), in wall-clock ms.
struct player_record {
  std::string owner;
  std::int64_t gone_ms = 0;
};

[[nodiscard]] std::string encode(const player_record& r);
[[nodiscard]] result<player_record, store_errc> decode_player(std::string_view value);

}  // namespace scenert::cluster::detail
