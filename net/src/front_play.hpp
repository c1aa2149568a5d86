#pragma once
// play_desk: a logged-in client's messages on one shard (chat, moves checked against the map, walks,
// requests to the world, heartbeats) and the world's answers to its requests.

#include "player_book.hpp"
#include "session.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <scenert/net/messages.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::net {

class front_shard;

// Thread-safety: its shard's I/O thread.
class play_desk {
 public:
  explicit play_desk(front_shard& shard) : shard_(shard) {}

  /// A frame from `s`, logged in or not (a first frame that is no login makes a guest).
  void on_frame(const std::shared_ptr<session>& s, std::uint32_t id, std::string_view payload);
  /// Sends a request to the world; the answer comes back on the I/O thread (`request_id` 0: a login's
  /// or a placement's, which closes the connection when it finds no place). `then_to`: once placed, a
  /// walk to that cell (a player placed again where it stood).
  void enter_world(const std::shared_ptr<session>& asking, const world_request& q, std::uint32_t request_id,
                   std::optional<grid::cell_point> then_to = std::nullopt);
  /// A player placed again after its node died (`then_to`: the cell it stood on). While its scene
  /// has no place for it (line_full, node_unavailable) it is asked for again every 250 ms, up to
  /// front_options::place_again_within; then the answer goes as a login's (no place: closed).
  void place_again(const std::shared_ptr<session>& s, scene_id scene,
                   std::optional<grid::cell_point> then_to);
  /// The player's moves count from where its line holds it again (no position asked).
  void forget_asked(session& s);
  /// A player placed again while its client was away, which has resumed since: it hears its scene.
  void placed_again(const std::shared_ptr<session>& s, world_result r) {
    answered(s, 0, false, std::move(r));
  }

 private:
  void bad_frame(const std::shared_ptr<session>& s, const std::string& why);
  /// Whether `s` may send one more message of the kind `b` meters; one over it is dropped and
  /// counted, and a client whose drops overrun front_options::flooding is cut.
  bool allowed(session& s, bucket& b, const front_options::rate& r);
  void handle(const std::shared_ptr<session>& s, const talk& t);
  void handle(const std::shared_ptr<session>& s, const move_to& m);
  void handle(const std::shared_ptr<session>& s, const walk& step);
  void handle(const std::shared_ptr<session>& s, const request& r);
  void handle(const std::shared_ptr<session>& s, const heartbeat& h);
  void handle(const std::shared_ptr<session>& s, const login& l);
  void handle(const std::shared_ptr<session>& s, const module_message& m);  // front_modules.cpp
  void refuse_module_message(session& s, std::uint32_t opcode, module_errc code, std::string reason);
  /// Why a move of `s` to `to` is refused (null: it is not), and the cell it goes to.
  const char* refusal(const session& s, const position& to, grid::cell_point& cell, clock::time_point now);
  void refuse_move(session& s, const char* why);
  void answered(const std::shared_ptr<session>& s, std::uint32_t request_id, bool leaving, world_result r);
  void place_again_until(const std::weak_ptr<session>& weak, scene_id scene,
                         std::optional<grid::cell_point> then_to, clock::time_point until);
  void chat_to_all(const std::string& frame);
  void ask(session& s, const asked_position& asked);

  front_shard& shard_;
};

}  // namespace scenert::net
