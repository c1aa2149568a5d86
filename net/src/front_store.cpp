// The player store at login: a player logged in by name (or resumed) signs in as the account of its
// name and hears what that account holds (1014). The store answers on its own thread; the answer
// comes back to the shard's I/O thread by asio::post, like the world's.
#include "front_impl.hpp"

namespace scenert::net {

void login_desk::sign_in(const std::shared_ptr<session>& s) {
  player_store* store = shard_.opt.store;
  if (store == nullptr) return;
  const player_state& p = s->player();
  std::weak_ptr<session> weak = s;
  store->sign_in(p.pid, p.name, [this, io_alive = shard_.io, weak, pid = p.pid](holdings h) {
    asio::post(*io_alive, [this, weak, pid, h = std::move(h)] {
      auto alive = weak.lock();
      if (!alive || alive->closing() || alive->player().pid != pid || h.code != store_errc::ok) return;
      inventory held;
      held.items.reserve(h.items.size());
      for (const auto& i : h.items) held.items.push_back({i.item, i.count});
      alive->send(server_message{std::move(held)});
      shard_.flush();
    });
  });
}

}  // namespace scenert::net
