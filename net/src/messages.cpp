#include <scenert/net/messages.hpp>

#include <array>
#include <type_traits>

#include <scenert/net/map_blocks.hpp>

#include <google/protobuf/arena.h>

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

// Parses the payload as a `Pb` and hands it to `make`, which builds the plain message (or an error).
template <class Pb, class Out, class Make>
result<Out, wire_errc> parse(std::uint32_t id, std::string_view payload, Make&& make) {
  Pb m;
  if (!m.ParseFromArray(payload.data(), static_cast<int>(payload.size())))
    return fail(wire_errc::bad_payload, "frame " + std::to_string(id) + ": " +
                                            std::to_string(payload.size()) + " bytes that do not parse as " +
                                            m.GetTypeName());
  if constexpr (std::is_same_v<decltype(make(m)), result<Out, wire_errc>>)
    return make(m);  // it may refuse what parsed
  else
    return Out{make(m)};
}

// Serializes `m` as the payload of a frame with id `id`, straight into `out`.
void put(std::string& out, message_id id, const google::protobuf::MessageLite& m) {
  const std::size_t length = m.ByteSizeLong();
  append_header(out, static_cast<std::uint32_t>(id), static_cast<std::uint32_t>(length));
  const std::size_t at = out.size();
  out.resize(at + length);
  m.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(out.data() + at));
}

// Encoders build their protobuf message on a per-thread arena whose first block is the thread's own
// and is kept across resets: a steady stream of frames allocates nothing.
google::protobuf::Arena& scratch() {
  thread_local std::array<char, 16 * 1024> block;
  thread_local google::protobuf::Arena arena([] {
    google::protobuf::ArenaOptions o;
    o.initial_block = block.data();
    o.initial_block_size = block.size();
    return o;
  }());
  return arena;
}
template <class Pb>
Pb& made() {
  return *google::protobuf::Arena::CreateMessage<Pb>(&scratch());
}
struct scratch_reset {
  ~scratch_reset() { scratch().Reset(); }
};

// A login's known maps are bounded and 8 bytes each: a longer list or another length is refused.
result<client_message, wire_errc> login_of(const scenert::wire::Login& m) {
  if (static_cast<std::size_t>(m.known_maps_size()) > max_known_maps)
    return fail(wire_errc::bad_payload, "login: " + std::to_string(m.known_maps_size()) +
                                            " known maps, at most " + std::to_string(max_known_maps));
  login out{m.name(), m.resume_token(), {}};
  out.known_maps.reserve(static_cast<std::size_t>(m.known_maps_size()));
  for (const auto& bytes : m.known_maps()) {
    auto digest = digest_of_bytes(bytes);
    if (!digest)
      return fail(wire_errc::bad_payload, "login: known map " + std::to_string(out.known_maps.size()) + ": " +
                                              digest.error().message);
    out.known_maps.push_back(*digest);
  }
  return client_message{std::move(out)};
}

// A 1006 as it came (its blocks stay in their wire form: map_blocks.hpp decodes them).
result<server_message, wire_errc> scene_info_of(const scenert::wire::SceneInfo& s) {
  auto digest = digest_of_bytes(s.map_digest());
  if (!digest) return fail(wire_errc::bad_payload, "scene_info: " + digest.error().message);
  scene_info i;
  i.scene = s.scene(), i.name = s.name(), i.kind = s.kind(), i.line = s.line(), i.phase = s.phase();
  i.width = s.width(), i.height = s.height(), i.area_size = s.area_size();
  i.cell_size = s.cell_size(), i.origin_x = s.origin_x(), i.origin_z = s.origin_z();
  i.eyesight_x = s.eyesight_x(), i.eyesight_z = s.eyesight_z();
  i.map_digest = *digest, i.blocks_omitted = s.blocks_omitted();
  i.block_rows.assign(s.block_rows().begin(), s.block_rows().end());
  i.blocked = s.blocked();
  return server_message{std::move(i)};
}

}  // namespace

message_id id_of(const client_message& m) noexcept {
  if (const auto* mm = std::get_if<module_message>(&m)) return static_cast<message_id>(mm->opcode);
  constexpr message_id ids[] = {message_id::talk,    message_id::position,  message_id::login,
                                message_id::request, message_id::heartbeat, message_id::walk,
                                message_id::walk /* module_message: above */};
  static_assert(std::size(ids) == std::variant_size_v<client_message>);
  return ids[m.index()];
}

message_id id_of(const server_message& m) noexcept {
  if (const auto* mf = std::get_if<module_frame_out>(&m)) return static_cast<message_id>(mf->opcode);
  constexpr message_id ids[] = {
      message_id::sync_pid,       message_id::broadcast,     message_id::left_view,
      message_id::sync_players,   message_id::login_ok,      message_id::answer,
      message_id::heartbeat_echo, message_id::scene_info,    message_id::goodbye,
      message_id::move_refused,   message_id::monsters_seen, message_id::monsters_gone,
      message_id::module_error,   message_id::granted,       message_id::inventory,
      message_id::click_actions,  message_id::module_error /* module_frame_out: above */};
  static_assert(std::size(ids) == std::variant_size_v<server_message>);
  return ids[m.index()];
}

result<client_message, wire_errc> decode_client(std::uint32_t id, std::string_view payload) {
  using R = result<client_message, wire_errc>;
  auto as = [&]<class Pb>(auto&& make) { return parse<Pb, client_message>(id, payload, make); };
  if (id >= first_module_id) return client_message{module_message{id, std::string(payload)}};
  switch (static_cast<message_id>(id)) {
    case message_id::talk:
      return as.operator()<pb::Talk>([](const pb::Talk& m) { return talk{m.content()}; });
    case message_id::position:
      return as.operator()<pb::Position>([](const pb::Position& m) { return move_to{from_pb(m)}; });
    case message_id::login:
      return as.operator()<scenert::wire::Login>(login_of);
    case message_id::request:
      return as.operator()<scenert::wire::Request>([](const scenert::wire::Request& r) -> R {
        if (r.kind() < 0 || r.kind() >= static_cast<int>(request_kind::count_))
          return fail(wire_errc::bad_payload, "request " + std::to_string(r.request_id()) +
                                                  ": unknown kind " + std::to_string(r.kind()));
        return client_message{request{r.request_id(), static_cast<request_kind>(r.kind()), r.scene(),
                                      r.line(), r.party(), r.mate()}};
      });
    case message_id::heartbeat:
      return as.operator()<scenert::wire::Heartbeat>([](const scenert::wire::Heartbeat& m) {
        return heartbeat{m.client_ns(), m.server_ns()};
      });
    case message_id::walk:
      return as.operator()<scenert::wire::Walk>([](const scenert::wire::Walk& m) {
        return walk{{m.x(), m.y(), m.z(), m.v(), 0}, m.view()};
      });
    default:
      return fail(wire_errc::unknown_id, "frame id " + std::to_string(id) + " is not a client message");
  }
}

monsters_seen monsters_seen_of(const scenert::wire::MonstersSeen& m) {
  monsters_seen out;
  out.all = m.all();
  out.monsters.reserve(static_cast<std::size_t>(m.monsters_size()));
  for (const auto& x : m.monsters())
    out.monsters.push_back({x.id(), x.x(), x.z(), x.kind(), x.state(), x.health()});
  return out;
}

players_in_view players_in_view_of(const pb::SyncPlayers& m) {
  players_in_view out;
  out.players.reserve(static_cast<std::size_t>(m.ps_size()));
  for (const auto& p : m.ps()) out.players.push_back({p.pid(), from_pb(p.p()), p.username()});
  return out;
}

inventory inventory_of(const scenert::wire::Inventory& m) {
  inventory out;
  for (const auto& i : m.items()) out.items.push_back({i.item(), i.count()});
  return out;
}

click_actions click_actions_of(const scenert::wire::ClickActions& m) {
  click_actions out{m.scene(), {}};
  for (const auto& a : m.actions()) out.actions.push_back({a.kind(), a.opcode(), a.range()});
  return out;
}

result<server_message, wire_errc> decode_server(std::uint32_t id, std::string_view payload) {
  auto as = [&]<class Pb>(auto&& make) { return parse<Pb, server_message>(id, payload, make); };
  using namespace scenert::wire;
  if (id >= first_module_id) return server_message{module_frame_out{id, std::string(payload)}};
  switch (static_cast<message_id>(id)) {
    case message_id::sync_pid:
      return as.operator()<pb::SyncPid>([](const pb::SyncPid& m) { return you_are{m.pid(), m.username()}; });
    case message_id::broadcast:
      return as.operator()<pb::BroadCast>([](const pb::BroadCast& b) {
        broadcast out{b.pid(),       static_cast<broadcast_type>(b.tp()), b.username(), b.content(), {},
                      b.actiondata()};
        if (b.has_p()) out.p = from_pb(b.p());
        return out;
      });
    case message_id::left_view:
      return as.operator()<pb::SyncPid>([](const pb::SyncPid& m) {
        return left_view{m.pid(), m.username()};
      });
    case message_id::sync_players:
      return as.operator()<pb::SyncPlayers>(players_in_view_of);
    case message_id::login_ok:
      return as.operator()<LoginOk>([](const LoginOk& l) {
        return login_ok{l.pid(), l.name(), l.resume_token(), l.resumed()};
      });
    case message_id::answer:
      return as.operator()<Answer>([](const Answer& a) {
        return answer{a.request_id(), a.code(), a.message(), a.scene(), a.line(), a.phase()};
      });
    case message_id::heartbeat_echo:
      return as.operator()<Heartbeat>([](const Heartbeat& m) {
        return heartbeat_echo{m.client_ns(), m.server_ns()};
      });
    case message_id::scene_info:
      return as.operator()<SceneInfo>(scene_info_of);
    case message_id::goodbye:
      return as.operator()<Goodbye>([](const Goodbye& m) { return goodbye{m.reason(), m.retry_after_ms()}; });
    case message_id::move_refused:
      return as.operator()<MoveRefused>([](const MoveRefused& m) { return move_refused{m.reason()}; });
    case message_id::monsters_seen:
      return as.operator()<MonstersSeen>(monsters_seen_of);
    case message_id::monsters_gone:
      return as.operator()<MonstersGone>([](const MonstersGone& m) {
        return monsters_gone{{m.ids().begin(), m.ids().end()}};
      });
    case message_id::module_error:
      return as.operator()<ModuleError>([](const ModuleError& m) {
        return module_error{m.opcode(), m.code(), m.reason()};
      });
    case message_id::granted:
      return as.operator()<Granted>([](const Granted& g) { return granted{g.id(), g.item(), g.count()}; });
    case message_id::inventory:
      return as.operator()<Inventory>(inventory_of);
    case message_id::click_actions:
      return as.operator()<ClickActions>(click_actions_of);
    default:
      return fail(wire_errc::unknown_id, "frame id " + std::to_string(id) + " is not a server message");
  }
}

void append_frame(std::string& out, const client_message& msg) {
  const scratch_reset reset;
  std::visit(
      [&](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, talk>) {
          auto& t = made<pb::Talk>();
          t.set_content(m.content);
          put(out, message_id::talk, t);
        } else if constexpr (std::is_same_v<M, move_to>) {
          auto& p = made<pb::Position>();
          to_pb(m.to, p);
          put(out, message_id::position, p);
        } else if constexpr (std::is_same_v<M, login>) {
          auto& l = made<scenert::wire::Login>();
          l.set_name(m.name);
          l.set_resume_token(m.resume_token);
          for (auto digest : m.known_maps) l.add_known_maps(digest_bytes(digest));
          put(out, message_id::login, l);
        } else if constexpr (std::is_same_v<M, request>) {
          auto& r = made<scenert::wire::Request>();
          r.set_request_id(m.request_id);
          r.set_kind(static_cast<scenert::wire::Request::Kind>(m.kind));
          r.set_scene(m.scene);
          r.set_line(m.line);
          r.set_party(m.party);
          r.set_mate(m.mate);
          put(out, message_id::request, r);
        } else if constexpr (std::is_same_v<M, heartbeat>) {
          auto& h = made<scenert::wire::Heartbeat>();
          h.set_client_ns(m.client_ns);
          h.set_server_ns(m.server_ns);
          put(out, message_id::heartbeat, h);
        } else if constexpr (std::is_same_v<M, walk>) {
          auto& w = made<scenert::wire::Walk>();
          w.set_x(m.to.x);
          w.set_y(m.to.y);
          w.set_z(m.to.z);
          w.set_v(m.to.v);
          w.set_view(m.view);
          put(out, message_id::walk, w);
        } else if constexpr (std::is_same_v<M, module_message>) {
          append_header(out, m.opcode, static_cast<std::uint32_t>(m.bytes.size()));
          out += m.bytes;
        } else {
          static_assert(always_false<M>, "append_frame: a client message without an encoder");
        }
      },
      msg);
}

// One encoder per server message: the protobuf message of its id, filled and framed.
namespace {

void encode(std::string& out, const you_are& m) {
  auto& s = made<pb::SyncPid>();
  s.set_pid(m.pid);
  s.set_username(m.name);
  put(out, message_id::sync_pid, s);
}

void encode(std::string& out, const broadcast& m) {
  auto& b = made<pb::BroadCast>();
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
}

void encode(std::string& out, const left_view& m) {
  auto& s = made<pb::SyncPid>();
  s.set_pid(m.pid);
  s.set_username(m.name);
  put(out, message_id::left_view, s);
}

void encode(std::string& out, const players_in_view& m) {
  auto& s = made<pb::SyncPlayers>();
  for (const auto& p : m.players) {
    auto* added = s.add_ps();
    added->set_pid(p.pid);
    added->set_username(p.name);
    to_pb(p.p, *added->mutable_p());
  }
  put(out, message_id::sync_players, s);
}

void encode(std::string& out, const login_ok& m) {
  auto& l = made<scenert::wire::LoginOk>();
  l.set_pid(m.pid);
  l.set_name(m.name);
  l.set_resume_token(m.resume_token);
  l.set_resumed(m.resumed);
  put(out, message_id::login_ok, l);
}

void encode(std::string& out, const answer& m) {
  auto& a = made<scenert::wire::Answer>();
  a.set_request_id(m.request_id);
  a.set_code(m.code);
  a.set_message(m.message);
  a.set_scene(m.scene);
  a.set_line(m.line);
  a.set_phase(m.phase);
  put(out, message_id::answer, a);
}

void encode(std::string& out, const heartbeat_echo& m) {
  auto& h = made<scenert::wire::Heartbeat>();
  h.set_client_ns(m.client_ns);
  h.set_server_ns(m.server_ns);
  put(out, message_id::heartbeat_echo, h);
}

void encode(std::string& out, const scene_info& m) {
  auto& s = made<scenert::wire::SceneInfo>();
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
  s.set_eyesight_x(m.eyesight_x);
  s.set_eyesight_z(m.eyesight_z);
  s.set_map_digest(digest_bytes(m.map_digest));
  s.mutable_block_rows()->Add(m.block_rows.begin(), m.block_rows.end());
  s.set_blocked(m.blocked);
  s.set_blocks_omitted(m.blocks_omitted);
  put(out, message_id::scene_info, s);
}

void encode(std::string& out, const goodbye& m) {
  auto& g = made<scenert::wire::Goodbye>();
  g.set_reason(m.reason);
  g.set_retry_after_ms(m.retry_after_ms);
  put(out, message_id::goodbye, g);
}

void encode(std::string& out, const move_refused& m) {
  auto& r = made<scenert::wire::MoveRefused>();
  r.set_reason(m.reason);
  put(out, message_id::move_refused, r);
}

void encode(std::string& out, const monsters_seen& m) {
  auto& seen = made<scenert::wire::MonstersSeen>();
  seen.set_all(m.all);
  for (const auto& x : m.monsters) {
    auto* one = seen.add_monsters();
    one->set_id(x.id);
    one->set_x(x.x);
    one->set_z(x.z);
    one->set_kind(x.kind);
    one->set_state(x.state);
    one->set_health(x.health);
  }
  put(out, message_id::monsters_seen, seen);
}

void encode(std::string& out, const module_error& m) {
  auto& e = made<scenert::wire::ModuleError>();
  e.set_opcode(m.opcode);
  e.set_code(m.code);
  e.set_reason(m.reason);
  put(out, message_id::module_error, e);
}

void encode(std::string& out, const granted& m) {
  auto& g = made<scenert::wire::Granted>();
  g.set_id(m.id);
  g.set_item(m.item);
  g.set_count(m.count);
  put(out, message_id::granted, g);
}

void encode(std::string& out, const inventory& m) {
  auto& inv = made<scenert::wire::Inventory>();
  for (const auto& i : m.items) {
    auto* one = inv.add_items();
    one->set_item(i.item);
    one->set_count(i.count);
  }
  put(out, message_id::inventory, inv);
}

void encode(std::string& out, const click_actions& m) {
  auto& c = made<scenert::wire::ClickActions>();
  c.set_scene(m.scene);
  for (const auto& a : m.actions) {
    auto* one = c.add_actions();
    one->set_kind(a.kind);
    one->set_opcode(a.opcode);
    one->set_range(a.range);
  }
  put(out, message_id::click_actions, c);
}

// A module's bytes go as they are: no protobuf of scenert's around them.
void encode(std::string& out, const module_frame_out& m) {
  append_header(out, m.opcode, static_cast<std::uint32_t>(m.bytes.size()));
  out += m.bytes;
}

void encode(std::string& out, const monsters_gone& m) {
  auto& gone = made<scenert::wire::MonstersGone>();
  for (auto id : m.ids) gone.add_ids(id);
  put(out, message_id::monsters_gone, gone);
}

}  // namespace

void append_frame(std::string& out, const server_message& msg) {
  const scratch_reset reset;
  std::visit([&](const auto& m) { encode(out, m); }, msg);
}

}  // namespace scenert::net
