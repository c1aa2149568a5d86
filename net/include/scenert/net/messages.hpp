#pragma once
/// The messages of the wire as plain values, decoded once from a frame's payload and encoded into
/// frames. Protobuf stays inside net/: callers see these types only.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <scenert/net/frame.hpp>
#include <scenert/net/message_id.hpp>
#include <scenert/runtime/result.hpp>

namespace scenert::net {

/// A position in world units: X,Z on the ground plane, Y the height, V the heading.
struct position {
  float x = 0, y = 0, z = 0, v = 0;
  std::int32_t blood = 0;
  friend bool operator==(const position&, const position&) = default;
};

// ---- client → server ---------------------------------------------------------------------------
struct talk {  ///< 2
  std::string content;
};
struct move_to {  ///< 3
  position to;
};
struct login {  ///< 1000
  std::string name;
  std::string resume_token;
  std::vector<std::uint64_t> known_maps = {};  ///< digests of maps the client holds (at most max_known_maps)
};
enum class request_kind : std::uint8_t {
  enter,
  enter_instance,
  join_team,
  transfer,
  enter_phase,
  leave_phase,
  leave,
  leave_party,
  count_
};
inline constexpr std::string_view request_kind_names[] = {
    "enter", "enter_instance", "join_team", "transfer", "enter_phase", "leave_phase", "leave", "leave_party"};
static_assert(std::size(request_kind_names) == static_cast<std::size_t>(request_kind::count_),
              "request_kind: name every value");
struct request {  ///< 1002
  std::uint32_t request_id = 0;
  request_kind kind = request_kind::enter;
  std::uint32_t scene = 0;  ///< enter, enter_instance, transfer; enter_phase: the space
  std::uint32_t line = 0;   ///< enter, transfer: a given line (0: the scene's policy picks)
  std::uint64_t party = 0;  ///< enter_instance (0: alone)
  std::int32_t mate = 0;    ///< join_team
};
struct heartbeat {  ///< 1004 from the client; 1005 echoed with server_ns
  std::uint64_t client_ns = 0;
  std::uint64_t server_ns = 0;
};
/// 1011: a move made on the client's `view`-th view of this connection (the count of 202s it read).
/// The server drops one whose view it has replaced since: the move was meant for ground the player left.
struct walk {
  position to;
  std::uint32_t view = 0;
};
/// 2000 and up: a message to the game module of the player's line; the bytes are the module's own.
struct module_message {
  std::uint32_t opcode = 0;
  std::string bytes;
};
using client_message = std::variant<talk, move_to, login, request, heartbeat, walk, module_message>;

// ---- server → client ---------------------------------------------------------------------------
struct you_are {  ///< 1
  std::int32_t pid = 0;
  std::string name;
};
enum class broadcast_type : std::int32_t { chat = 1, appeared = 2, action = 3, moved = 4 };
struct broadcast {  ///< 200
  std::int32_t pid = 0;
  broadcast_type type = broadcast_type::chat;
  std::string name;
  std::string content;  ///< chat
  position p;           ///< appeared, moved
  std::int32_t action = 0;
};
struct left_view {  ///< 201: the same SyncPid as 1, id and name, of the player that left the view
  std::int32_t pid = 0;
  std::string name;
};
struct player_in_view {
  std::int32_t pid = 0;
  position p;
  std::string name;
};
struct players_in_view {  ///< 202
  std::vector<player_in_view> players;
};
struct login_ok {  ///< 1001
  std::int32_t pid = 0;
  std::string name;
  std::string resume_token;
  bool resumed = false;
};
struct answer {  ///< 1003
  std::uint32_t request_id = 0;
  std::string code;  ///< the world's error code by name, "ok" when it worked
  std::string message;
  std::uint32_t scene = 0, line = 0, phase = 0;
};
struct heartbeat_echo {  ///< 1005
  std::uint64_t client_ns = 0;
  std::uint64_t server_ns = 0;
};
struct scene_info {  ///< 1006
  std::uint32_t scene = 0;
  std::string name;
  std::string kind;
  std::uint32_t line = 0, phase = 0;
  std::int32_t width = 0, height = 0;  ///< cells
  float cell_size = 1, origin_x = 0, origin_z = 0;
  std::int32_t area_size = 0;                   ///< cells per area side
  std::int32_t eyesight_x = 1, eyesight_z = 1;  ///< areas seen each way from the player's own
  std::uint64_t map_digest = 0;                 ///< the map's static data (map_blocks.hpp)
  std::vector<std::uint32_t> block_rows;        ///< the blocked cells as row runs (map_blocks.hpp)
  std::string blocked;                          ///< or one bit per cell, when that is shorter
  bool blocks_omitted = false;                  ///< the client holds this map: neither form is sent
};
struct goodbye {  ///< 1007
  std::string reason;
  std::uint32_t retry_after_ms = 0;  ///< server_busy: try again after this long (0: not said)
};
struct move_refused {  ///< 1008
  std::string reason;
};
struct monster_spot {
  std::uint32_t id = 0;               ///< the entity's id on its line (not a player id)
  float x = 0, z = 0;                 ///< world units, the centre of its cell
  std::uint32_t kind = 0, state = 0;  ///< what it is and what it is doing (0, 0: a monster of the table)
  std::int32_t health = 0;            ///< hit points left (0: none kept)
  friend bool operator==(const monster_spot&, const monster_spot&) = default;
};
struct monsters_seen {  ///< 1009
  std::vector<monster_spot> monsters;
  bool all = false;  ///< every monster the player sees: replaces what it had (sent on entering a view)
};
struct monsters_gone {  ///< 1010
  std::vector<std::uint32_t> ids;
};
struct module_error {        ///< 1012
  std::uint32_t opcode = 0;  ///< the module message refused
  std::string code;          ///< module_errc's name: no_module, unknown_opcode, malformed, refused, ...
  std::string reason;
};
/// 1013: a grant of a game module, written to the player store before this frame left.
struct granted {
  std::string id;  ///< the grant's id (unique: the store applied it once)
  std::uint32_t item = 0;
  std::int64_t count = 0;
  friend bool operator==(const granted&, const granted&) = default;
};
struct inventory_item {
  std::uint32_t item = 0;
  std::int64_t count = 0;
  friend bool operator==(const inventory_item&, const inventory_item&) = default;
};
/// 1014: what the player's account holds, by item (after a named login or a resume).
struct inventory {
  std::vector<inventory_item> items;
  friend bool operator==(const inventory&, const inventory&) = default;
};
/// What a click on an entity of a kind sends (1015).
struct click_action {
  std::uint32_t kind = 0;    ///< the entity's kind (monster_spot::kind)
  std::uint32_t opcode = 0;  ///< the module message sent, the entity's id as its 8 bytes
  std::uint32_t range = 0;   ///< cells; 0: any distance
  friend bool operator==(const click_action&, const click_action&) = default;
};
/// 1015: the click actions of a scene's game module, sent on entering one of its lines.
struct click_actions {
  std::uint32_t scene = 0;
  std::vector<click_action> actions;
  friend bool operator==(const click_actions&, const click_actions&) = default;
};
/// 2000 and up: a game module's frame to the client, its bytes as the module wrote them.
struct module_frame_out {
  std::uint32_t opcode = 0;
  std::string bytes;
};
using server_message =
    std::variant<you_are, broadcast, left_view, players_in_view, login_ok, answer, heartbeat_echo, scene_info,
                 goodbye, move_refused, monsters_seen, monsters_gone, module_error, granted, inventory,
                 click_actions, module_frame_out>;

/// The frame id a message travels under.
[[nodiscard]] message_id id_of(const client_message& m) noexcept;
[[nodiscard]] message_id id_of(const server_message& m) noexcept;

/// Decodes a client's frame: unknown_id for an id that is not a client→server message,
/// bad_payload for bytes that do not parse as its message. An id from 2000 up is a module_message
/// (its bytes are not looked at).
[[nodiscard]] result<client_message, wire_errc> decode_client(std::uint32_t id, std::string_view payload);
/// Decodes a server's frame (for clients: the bots and the tests).
[[nodiscard]] result<server_message, wire_errc> decode_server(std::uint32_t id, std::string_view payload);

/// Appends the frame (header and payload) of a message to `out`.
void append_frame(std::string& out, const client_message& m);
void append_frame(std::string& out, const server_message& m);

}  // namespace scenert::net
