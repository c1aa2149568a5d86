#include <scenert/net/messages.hpp>

#include <type_traits>

#include "proto/scenert.pb.h"
#include "proto/seed002.pb.h"

namespace scenert::net {
namespace {

template <class>
inline constexpr bool always_false = false;

void to_pb(const position& p, pb::Position& out) {
  out.set_x(p.x);
  out.set_y(p.y);
  out.set_z(p.z);
  out.set_v(p.v);
  out.set_bloodvalue(p.blood);
}
position from_pb(const pb::Position& p) { return {p.x(), p.y(), p.z(), p.v(), p.bloodvalue()}; }

template <class Pb>
result<Pb, wire_errc> parse(std::uint32_t id, std::string_view payload) {
  Pb m;
  if (!m.ParseFromArray(payload.data(), static_cast<int>(payload.size())))
    return fail(wire_errc::bad_payload, "frame " + std::to_string(id) + ": " +
                                            std::to_string(payload.size()) + " bytes that do not parse as " +
                                            m.GetTypeName());
  return m;
}

// Serializes `m` as the payload of a frame with id `id`, straight into `out`.
void put(std::string& out, message_id id, const google::protobuf::MessageLite& m) {
  const std::size_t length = m.ByteSizeLong();
  append_header(out, static_cast<std::uint32_t>(id), static_cast<std::uint32_t>(length));
  const std::size_t at = out.size();
  out.resize(at + length);
  m.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(out.data() + at));
}

result<client_message, wire_errc> unknown(std::uint32_t id, std::string_view side) {
  return fail(wire_errc::unknown_id,
              "frame id " + std::to_string(id) + " is not a " + std::string(side) + " message");
}

}  // namespace

message_id id_of(const client_message& m) noexcept {
  constexpr message_id ids[] = {message_id::talk, message_id::position, message_id::login,
                                message_id::request, message_id::heartbeat};
  static_assert(std::size(ids) == std::variant_size_v<client_message>);
  return ids[m.index()];
}

message_id id_of(const server_message& m) noexcept {
  constexpr message_id ids[] = {message_id::sync_pid,       message_id::broadcast,  message_id::left_view,
                                message_id::sync_players,   message_id::login_ok,   message_id::answer,
                                message_id::heartbeat_echo, message_id::scene_info, message_id::goodbye,
                                message_id::move_refused};
  static_assert(std::size(ids) == std::variant_size_v<server_message>);
  return ids[m.index()];
}

result<client_message, wire_errc> decode_client(std::uint32_t id, std::string_view payload) {
  switch (static_cast<message_id>(id)) {
    case message_id::talk: {
      auto m = parse<pb::Talk>(id, payload);
      if (!m) return m.error();
      return client_message{talk{m.value().content()}};
    }
    case message_id::position: {
      auto m = parse<pb::Position>(id, payload);
      if (!m) return m.error();
      return client_message{move_to{from_pb(m.value())}};
    }
    case message_id::login: {
      auto m = parse<scenert::wire::Login>(id, payload);
      if (!m) return m.error();
      return client_message{login{m.value().name(), m.value().resume_token()}};
    }
    case message_id::request: {
      auto m = parse<scenert::wire::Request>(id, payload);
      if (!m) return m.error();
      const auto& r = m.value();
      if (r.kind() < 0 || r.kind() >= static_cast<int>(request_kind::count_))
        return fail(wire_errc::bad_payload, "request " + std::to_string(r.request_id()) + ": unknown kind " +
                                                std::to_string(r.kind()));
      return client_message{request{r.request_id(), static_cast<request_kind>(r.kind()), r.scene(), r.line(),
                                    r.party(), r.mate()}};
    }
    case message_id::heartbeat: {
      auto m = parse<scenert::wire::Heartbeat>(id, payload);
      if (!m) return m.error();
      return client_message{heartbeat{m.value().client_ns(), m.value().server_ns()}};
    }
    default:
      return unknown(id, "client");
  }
}

result<server_message, wire_errc> decode_server(std::uint32_t id, std::string_view payload) {
  switch (static_cast<message_id>(id)) {
    case message_id::sync_pid: {
      auto m = parse<pb::SyncPid>(id, payload);
      if (!m) return m.error();
      return server_message{you_are{m.value().pid(), m.value().username()}};
    }
    case message_id::broadcast: {
      auto m = parse<pb::BroadCast>(id, payload);
      if (!m) return m.error();
      const auto& b = m.value();
      broadcast out{b.pid(),       static_cast<broadcast_type>(b.tp()), b.username(), b.content(), {},
                    b.actiondata()};
      if (b.has_p()) out.p = from_pb(b.p());
      return server_message{std::move(out)};
    }
    case message_id::left_view: {
      auto m = parse<pb::SyncPid>(id, payload);
      if (!m) return m.error();
      return server_message{left_view{m.value().pid()}};
    }
    case message_id::sync_players: {
      auto m = parse<pb::SyncPlayers>(id, payload);
      if (!m) return m.error();
      players_in_view out;
      out.players.reserve(static_cast<std::size_t>(m.value().ps_size()));
      for (const auto& p : m.value().ps()) out.players.push_back({p.pid(), from_pb(p.p()), p.username()});
      return server_message{std::move(out)};
    }
    case message_id::login_ok: {
      auto m = parse<scenert::wire::LoginOk>(id, payload);
      if (!m) return m.error();
      const auto& l = m.value();
      return server_message{login_ok{l.pid(), l.name(), l.resume_token(), l.resumed()}};
    }
    case message_id::answer: {
      auto m = parse<scenert::wire::Answer>(id, payload);
      if (!m) return m.error();
      const auto& a = m.value();
      return server_message{answer{a.request_id(), a.code(), a.message(), a.scene(), a.line(), a.phase()}};
    }
    case message_id::heartbeat_echo: {
      auto m = parse<scenert::wire::Heartbeat>(id, payload);
      if (!m) return m.error();
      return server_message{heartbeat_echo{m.value().client_ns(), m.value().server_ns()}};
    }
    case message_id::scene_info: {
      auto m = parse<scenert::wire::SceneInfo>(id, payload);
      if (!m) return m.error();
      const auto& s = m.value();
      return server_message{scene_info{s.scene(), s.name(), s.kind(), s.line(), s.phase(), s.width(),
                                       s.height(), s.cell_size(), s.origin_x(), s.origin_z(), s.area_size(),
                                       s.blocked()}};
    }
    case message_id::goodbye: {
      auto m = parse<scenert::wire::Goodbye>(id, payload);
      if (!m) return m.error();
      return server_message{goodbye{m.value().reason()}};
    }
    case message_id::move_refused: {
      auto m = parse<scenert::wire::MoveRefused>(id, payload);
      if (!m) return m.error();
      return server_message{move_refused{m.value().reason()}};
    }
    default:
      return fail(wire_errc::unknown_id, "frame id " + std::to_string(id) + " is not a server message");
  }
}

void append_frame(std::string& out, const client_message& msg) {
  std::visit(
      [&](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, talk>) {
          pb::Talk t;
          t.set_content(m.content);
          put(out, message_id::talk, t);
        } else if constexpr (std::is_same_v<M, move_to>) {
          pb::Position p;
          to_pb(m.to, p);
          put(out, message_id::position, p);
        } else if constexpr (std::is_same_v<M, login>) {
          scenert::wire::Login l;
          l.set_name(m.name);
          l.set_resume_token(m.resume_token);
          put(out, message_id::login, l);
        } else if constexpr (std::is_same_v<M, request>) {
          scenert::wire::Request r;
          r.set_request_id(m.request_id);
          r.set_kind(static_cast<scenert::wire::Request::Kind>(m.kind));
          r.set_scene(m.scene);
          r.set_line(m.line);
          r.set_party(m.party);
          r.set_mate(m.mate);
          put(out, message_id::request, r);
        } else if constexpr (std::is_same_v<M, heartbeat>) {
          scenert::wire::Heartbeat h;
          h.set_client_ns(m.client_ns);
          h.set_server_ns(m.server_ns);
          put(out, message_id::heartbeat, h);
        } else {
          static_assert(always_false<M>, "append_frame: a client message without an encoder");
        }
      },
      msg);
}

void append_frame(std::string& out, const server_message& msg) {
  std::visit(
      [&](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, you_are>) {
          pb::SyncPid s;
          s.set_pid(m.pid);
          s.set_username(m.name);
          put(out, message_id::sync_pid, s);
        } else if constexpr (std::is_same_v<M, broadcast>) {
          pb::BroadCast b;
          b.set_pid(m.pid);
          b.set_tp(static_cast<std::int32_t>(m.type));
          b.set_username(m.name);
          switch (m.type) {
            case broadcast_type::chat:
              b.set_content(m.content);
              break;
            case broadcast_type::appeared:
            case broadcast_type::moved:
              to_pb(m.p, *b.mutable_p());
              break;
            case broadcast_type::action:
              b.set_actiondata(m.action);
              break;
          }
          put(out, message_id::broadcast, b);
        } else if constexpr (std::is_same_v<M, left_view>) {
          pb::SyncPid s;
          s.set_pid(m.pid);
          put(out, message_id::left_view, s);
        } else if constexpr (std::is_same_v<M, players_in_view>) {
          pb::SyncPlayers s;
          for (const auto& p : m.players) {
            auto* added = s.add_ps();
            added->set_pid(p.pid);
            added->set_username(p.name);
            to_pb(p.p, *added->mutable_p());
          }
          put(out, message_id::sync_players, s);
        } else if constexpr (std::is_same_v<M, login_ok>) {
          scenert::wire::LoginOk l;
          l.set_pid(m.pid);
          l.set_name(m.name);
          l.set_resume_token(m.resume_token);
          l.set_resumed(m.resumed);
          put(out, message_id::login_ok, l);
        } else if constexpr (std::is_same_v<M, answer>) {
          scenert::wire::Answer a;
          a.set_request_id(m.request_id);
          a.set_code(m.code);
          a.set_message(m.message);
          a.set_scene(m.scene);
          a.set_line(m.line);
          a.set_phase(m.phase);
          put(out, message_id::answer, a);
        } else if constexpr (std::is_same_v<M, heartbeat_echo>) {
          scenert::wire::Heartbeat h;
          h.set_client_ns(m.client_ns);
          h.set_server_ns(m.server_ns);
          put(out, message_id::heartbeat_echo, h);
        } else if constexpr (std::is_same_v<M, scene_info>) {
          scenert::wire::SceneInfo s;
          s.set_scene(m.scene);
          s.set_name(m.name);
          s.set_kind(m.kind);
          s.set_line(m.line);
          s.set_phase(m.phase);
          s.set_width(m.width);
          s.set_height(m.height);
          s.set_cell_size(m.cell_size);
          s.set_origin_x(m.origin_x);
          s.set_origin_z(m.origin_z);
          s.set_area_size(m.area_size);
          s.set_blocked(m.blocked);
          put(out, message_id::scene_info, s);
        } else if constexpr (std::is_same_v<M, goodbye>) {
          scenert::wire::Goodbye g;
          g.set_reason(m.reason);
          put(out, message_id::goodbye, g);
        } else if constexpr (std::is_same_v<M, move_refused>) {
          scenert::wire::MoveRefused r;
          r.set_reason(m.reason);
          put(out, message_id::move_refused, r);
        } else {
          static_assert(always_false<M>, "append_frame: a server message without an encoder");
        }
      },
      msg);
}

}  // namespace scenert::net
