// A client's messages to its line's game module (ids from 2000 up): checked here for what the front
// can tell alone (the player stands on a line, the size, the rate), then posted straight to the line
// like a move (world_port::to_line), so that the line hears a player's moves and messages in the
// order sent. What the front, the world or the line refuses comes back as 1012, the connection stays.
#include "front_impl.hpp"

#include <fmt/format.h>

namespace scenert::net {

void play_desk::handle(const std::shared_ptr<session>& s, const module_message& m) {
  player_state& p = s->player();
  if (!allowed(*s, p.module_messages, shard_.opt.module_messages)) {
    if (s->closing()) return;
    return refuse_module_message(
        *s, m.opcode, module_errc::rate_limited,
        fmt::format("over {} module messages per second", shard_.opt.module_messages.per_second));
  }
  if (m.bytes.size() > shard_.opt.module_message_bytes)
    return refuse_module_message(*s, m.opcode, module_errc::too_large,
                                 fmt::format("{} bytes, over the {} a module message may carry",
                                             m.bytes.size(), shard_.opt.module_message_bytes));
  auto on = shard_.line_of.find(p.pid);
  if (!p.placed || on == shard_.line_of.end())
    return refuse_module_message(*s, m.opcode, module_errc::not_in_scene, "the player stands on no line");
  std::weak_ptr<session> weak = s;
  shard_.world().to_line(world_request::message(p.pid, on->second.line, m.opcode, m.bytes),
                         [this, io_alive = shard_.io, weak, opcode = m.opcode](world_result r) {
                           if (r) return;  // the line answers for itself, if it must
                           asio::post(*io_alive, [this, weak, opcode, why = r.error().message] {
                             auto alive = weak.lock();
                             if (!alive || alive->closing()) return;
                             refuse_module_message(*alive, opcode, module_errc::not_in_scene, why);
                             shard_.flush();
                           });
                         });
}

void play_desk::refuse_module_message(session& s, std::uint32_t opcode, module_errc code,
                                      std::string reason) {
  s.send(server_message{
      module_error{opcode, module_errc_names[static_cast<std::size_t>(code)], std::move(reason)}});
}

}  // namespace scenert::net
