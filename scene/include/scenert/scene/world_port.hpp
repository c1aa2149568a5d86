#pragma once
/// world_port: what a network front needs of a world, requests in and answers out. In one process
/// it is the world itself; in a cluster's gateway, the scene nodes behind NATS.

#include <scenert/runtime/result.hpp>
#include <scenert/runtime/unique_function.hpp>
#include <scenert/scene/fwd.hpp>

namespace scenert {

struct world_request;
struct placement;
using world_reply = unique_function<void(result<placement, world_errc>)>;

class world_port {
 public:
  virtual ~world_port() = default;
  /// Queues a request from any thread; `reply` (may be empty) is called once with the answer, on a
  /// thread of the port's: keep it short, post elsewhere for work.
  virtual void submit(const world_request& request, world_reply reply) = 0;
};

}  // namespace scenert
