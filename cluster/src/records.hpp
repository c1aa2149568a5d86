#pragma once
// The records' JSON in the buckets, read back with a clear error for anything else.

#include <string>
#include <string_view>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/cluster/line_store.hpp>
#include <scenert/cluster/node_lease.hpp>

namespace scenert::cluster::detail {

/// A resume token's player (key token.TOKEN of the sessions bucket) and the gateway holding it.
struct session_record {
  player_id player = 0;
  std::string name, gateway;
};

/// The node holding a party's instance of a scene (key party.OWNER.SCENE of the sessions bucket).
struct party_record {
  std::string node;
};

std::string encode(const party_record& r);
cluster_result<party_record> decode_party(std::string_view key, std::string_view json);
std::string encode(const node_record& r);
std::string encode(const session_record& r);
cluster_result<session_record> decode_session(std::string_view key, std::string_view json);
std::string encode(const line_record& r);
cluster_result<node_record> decode_node(std::string_view key, std::string_view json);
cluster_result<line_record> decode_line(std::string_view key, std::string_view json);

}  // namespace scenert::cluster::detail
