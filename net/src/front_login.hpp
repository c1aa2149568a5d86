#pragma once
// login_desk: one shard's logins (a guest, an explicit login by name, a resume by token) and its
// players without a connection (waiting for their resume, or leaving the world).

#include "front_values.hpp"
#include "session.hpp"

#include <memory>
#include <optional>
#include <random>
#include <string>

#include <scenert/net/messages.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::net {

class front_shard;

// Thread-safety: its shard's I/O thread; the front's roll under its mutex.
class login_desk {
 public:
  explicit login_desk(front_shard& shard) : shard_(shard) {}

  /// A connection waiting for its login: a guest after guest_wait, unless it must log in.
  void greet(const std::shared_ptr<session>& s);
  /// Logs `s` in as a guest and places it on the landing scene.
  void log_in_guest(const std::shared_ptr<session>& s);
  /// A login (1000): by name, or a resume by token (held here, on another shard, or in the cluster).
  void log_in(const std::shared_ptr<session>& s, const login& l);
  /// The player goes on elsewhere (its client resumed on another front): its connection closes.
  void let_go(player_id pid);
  /// On the shard of a logged-in player whose token logged in again on shard `to`.
  void hand_over(player_id pid, std::size_t to, std::weak_ptr<session> asking, login l);
  /// The same player, on this connection: its place is kept, its view comes fresh (202).
  void resume(const std::shared_ptr<session>& s, player_id pid, waiting was);
  /// The player of a closing connection waits for its resume, or leaves the world.
  void drop_player(session& s, close_reason why);
  /// A player without a connection: it waits for its token when it may come back, else it leaves.
  void park(player_id pid, waiting was, bool may_come_back);
  /// The players whose resume wait ended by `now` leave the world.
  void expire_detached(clock::time_point now);

 private:
  void log_in_afresh(const std::shared_ptr<session>& s, const login& l);
  void welcome(const std::weak_ptr<session>& asking, player_id pid, std::string token, std::string name);
  /// True when `s` was refused (server_busy) for admission is closed (front_admission.cpp).
  bool refused_busy(const std::shared_ptr<session>& s);
  void claimed(const std::weak_ptr<session>& asking, const login& l, result<claimed_player, world_errc> r);
  void admit(const std::shared_ptr<session>& s, player_id pid, std::string name);
  void handed_off(player_id pid);
  void sign_in(const std::shared_ptr<session>& s);  // front_store.cpp
  void leave_home(player_id pid);
  [[nodiscard]] std::optional<player_id> take_pid();
  std::string new_token();

  front_shard& shard_;
  std::random_device entropy_;  // resume tokens: 128 bits each
};

}  // namespace scenert::net
