#pragma once
/// world_port: what a network front needs of a world, requests in and answers out. In one process
/// it is the world itself; in a cluster's gateway, the scene nodes behind NATS.

#include <string>
#include <string_view>
#include <utility>

#include <scenert/runtime/result.hpp>
#include <scenert/runtime/unique_function.hpp>
#include <scenert/scene/fwd.hpp>

namespace scenert {

struct world_request;
struct placement;
using world_reply = unique_function<void(result<placement, world_errc>)>;

/// A player that a client resumes by token on another front than the one it logged in on.
struct claimed_player {
  player_id player = 0;
  std::string name;
  line_handle line{};
  scene_id space = 0;
  phase_id phase = 0;
};
using claim_reply = unique_function<void(result<claimed_player, world_errc>)>;

class world_port {
 public:
  virtual ~world_port() = default;
  /// Queues a request from any thread; `reply` (may be empty) is called once with the answer, on a
  /// thread of the port's: keep it short, post elsewhere for work.
  virtual void submit(const world_request& request, world_reply reply) = 0;
  /// A client's move (`world_request::move_on`) or module message (`world_request::message`) for the
  /// line it stands on as far as the front was told, from any thread. A world that hosts the line
  /// posts it straight to the line's roster inbox (applied at the line's next tick, no world tick on
  /// the way; the line drops it when the player stands elsewhere by then); `reply` (may be empty) is
  /// called at once on the caller's thread: ok (posted) or stale_line (no such opening of the line is
  /// live). Otherwise (default: a cluster's gateway) it is a request like any other.
  virtual void to_line(const world_request& request, world_reply reply);

  // Resume tokens beyond one front (a cluster's gateways). One process has one front: a token it
  // does not know is nobody's, and these do nothing.

  /// A player logged in with this resume token: it may resume on another front. `shared` (may be
  /// empty) is called once, on any thread, when the other fronts can find the token (or it could not
  /// be shared): the client hears its token only then.
  virtual void remember(std::string_view token, player_id player, std::string_view name,
                        unique_function<void()> shared) {
    (void)token, (void)player, (void)name;
    if (shared) shared();
  }
  /// The player left the world: its token is void.
  virtual void forget(std::string_view token) { (void)token; }
  /// Takes over the player of a token that this front does not hold (its front died, or its client
  /// moved on): who it is and where it stands, or not_in_scene. The front that held it lets it go.
  virtual void claim(std::string_view token, claim_reply reply) {
    (void)token;
    reply(fail(world_errc::not_in_scene, "no other front holds players here"));
  }
};

}  // namespace scenert
