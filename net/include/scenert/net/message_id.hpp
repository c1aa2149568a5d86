#pragma once
/// Frame ids on the wire: seed 002's (1, 2, 3, 200, 201, 202) and scenert's own from 1000 up.

#include <cstdint>
#include <string_view>

namespace scenert::net {

enum class message_id : std::uint32_t {
  sync_pid = 1,           ///< server→client: your id and name, the first frame after connect
  talk = 2,               ///< client→server: world chat
  position = 3,           ///< client→server: move
  broadcast = 200,        ///< server→client: chat (Tp 1), appeared (2), action (3), moved (4)
  left_view = 201,        ///< server→client: that player left your view
  sync_players = 202,     ///< server→client: everyone in your view, on entering a scene
  login = 1000,           ///< client→server
  login_ok = 1001,        ///< server→client
  request = 1002,         ///< client→server: a request to the world
  answer = 1003,          ///< server→client: the world's answer, by code name
  heartbeat = 1004,       ///< client→server: the client's clock
  heartbeat_echo = 1005,  ///< server→client: the client's clock echoed, with the server's
  scene_info = 1006,      ///< server→client: the geometry of the line the player stands on
  goodbye = 1007,         ///< server→client: the connection closes, and why
  move_refused = 1008,    ///< server→client: a move was refused; the position follows as 200 Tp 4
  monsters_seen = 1009,   ///< server→client: monsters in your view, where they stand
  monsters_gone = 1010,   ///< server→client: monsters that left your view
  walk = 1011,            ///< client→server: a move on the view the client knows (stale ones dropped)
  module_error = 1012,    ///< server→client: a message to a game module was not taken, and why
  granted = 1013,         ///< server→client: the player store kept a grant of a game module for you
  inventory = 1014,       ///< server→client: what your account holds (after each named login)
  click_actions = 1015,   ///< server→client: what a click on an entity sends on a scene (its module's)
};

/// Ids from here up belong to game modules, both ways: their payload is the module's own.
inline constexpr std::uint32_t first_module_id = 2000;

/// Every id, in wire order, for counters and reports.
inline constexpr message_id all_message_ids[] = {
    message_id::sync_pid,      message_id::talk,         message_id::position,     message_id::broadcast,
    message_id::left_view,     message_id::sync_players, message_id::login,        message_id::login_ok,
    message_id::request,       message_id::answer,       message_id::heartbeat,    message_id::heartbeat_echo,
    message_id::scene_info,    message_id::goodbye,      message_id::move_refused, message_id::monsters_seen,
    message_id::monsters_gone, message_id::walk,         message_id::module_error, message_id::granted,
    message_id::inventory,     message_id::click_actions};

/// The name of an id ("broadcast"), or empty for an id scenert does not know.
[[nodiscard]] constexpr std::string_view name_of(message_id id) noexcept {
  switch (id) {
    case message_id::sync_pid:
      return "sync_pid";
    case message_id::talk:
      return "talk";
    case message_id::position:
      return "position";
    case message_id::broadcast:
      return "broadcast";
    case message_id::left_view:
      return "left_view";
    case message_id::sync_players:
      return "sync_players";
    case message_id::login:
      return "login";
    case message_id::login_ok:
      return "login_ok";
    case message_id::request:
      return "request";
    case message_id::answer:
      return "answer";
    case message_id::heartbeat:
      return "heartbeat";
    case message_id::heartbeat_echo:
      return "heartbeat_echo";
    case message_id::scene_info:
      return "scene_info";
    case message_id::goodbye:
      return "goodbye";
    case message_id::move_refused:
      return "move_refused";
    case message_id::monsters_seen:
      return "monsters_seen";
    case message_id::monsters_gone:
      return "monsters_gone";
    case message_id::walk:
      return "walk";
    case message_id::module_error:
      return "module_error";
    case message_id::granted:
      return "granted";
    case message_id::inventory:
      return "inventory";
    case message_id::click_actions:
      return "click_actions";
  }
  return {};
}

/// The index of an id in all_message_ids, or -1.
[[nodiscard]] constexpr int index_of(message_id id) noexcept {
  int i = 0;
  for (message_id m : all_message_ids) {
    if (m == id) return i;
    ++i;
  }
  return -1;
}

}  // namespace scenert::net
