// The front's I/O side: one io_context on one thread owns every session, the view mirrors and the
// outgoing buffers. Scenes and the world only post to it.
#include <scenert/net/front.hpp>

#include <utility>  // before Asio (see README: Boost 1.74 with g++ 12)

#include <boost/asio.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>
#include <unordered_map>
#include <vector>

#include <scenert/net/messages.hpp>
#include <scenert/net/view_mirror.hpp>
#include <scenert/runtime/inbox.hpp>
#include <scenert/scene/scene.hpp>

namespace scenert::net {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

struct line_batch {
  line_handle line;
  std::vector<line_event> events;
};

std::uint64_t key_of(line_handle l) { return (std::uint64_t{l.scene} << 32) | l.line; }

// The landing scene: the table's first town, else its first field.
const scene_def* landing_scene(const scene_table& t) {
  for (scene_kind k : {scene_kind::town, scene_kind::field})
    for (const auto& s : t.scenes)
      if (s.kind == k) return &s;
  return nullptr;
}

}  // namespace

// What the lines' threads share with the I/O thread: the batches' inbox and the wake-up.
struct line_feed {
  std::shared_ptr<asio::io_context> io;
  inbox<line_batch> batches{1024};
  std::atomic<bool> wake_pending{false};
  std::function<void()> on_wake;  // set before the first post, run on the I/O thread
  void post(line_handle line, std::span<const line_event> events) {
    if (!batches.post({line, {events.begin(), events.end()}})) return;  // closed: the front stopped
    if (!wake_pending.exchange(true, std::memory_order_acq_rel))
      asio::post(*io, [this] {
        wake_pending.store(false, std::memory_order_release);
        on_wake();
      });
  }
};

using clock = std::chrono::steady_clock;

// A token bucket: `per_second` tokens flow in up to `burst`; each message takes one.
struct bucket {
  double tokens = 0;
  clock::time_point at{};
  bool take(const front_options::rate& r, clock::time_point now) {
    if (at == clock::time_point{})
      tokens = r.burst;
    else
      tokens = std::min(r.burst, tokens + r.per_second * std::chrono::duration<double>(now - at).count());
    at = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  }
};

struct session : std::enable_shared_from_this<session> {
  explicit session(tcp::socket s, std::uint32_t max_payload) : sock(std::move(s)), reader(max_payload) {}
  tcp::socket sock;
  player_id pid = 0;
  std::string name;
  std::array<char, 16 * 1024> rbuf{};
  frame_reader reader;
  std::string out, sending;  // frames waiting; frames on the wire
  bool writing = false, closing = false, dirty = false;
  bool placed = false;          // the world placed the player (its line's events concern it)
  bool speaks_scenert = false;  // sent an id of scenert's own: it gets scenert's frames too
  placement place;              // where the world put it last
  std::uint32_t bad = 0;
  clock::time_point last_rx = clock::now();  // the last bytes read
  clock::time_point partial_since{};         // a partial frame held since (when mid_frame)
  bucket moves, chat, requests;
  clock::time_point moved_at{};  // placed, or its last move accepted (for max_speed)
  position claimed;              // the position the client last asked for, carried to its viewers
  grid::cell_point claimed_cell{};
  bool has_claim = false;
};

struct front::impl {
  impl(const scene_table& t, front_options o)
      : table(t),
        opt(std::move(o)),
        io(std::make_shared<asio::io_context>(1)),
        acceptor(*io),
        feed(std::make_shared<line_feed>()) {
    feed->io = io;
    feed->on_wake = [this] { drain_lines(); };
  }

  const scene_table& table;
  front_options opt;
  std::shared_ptr<asio::io_context> io;
  tcp::acceptor acceptor;
  std::shared_ptr<line_feed> feed;
  std::thread thread;
  world* w = nullptr;
  const scene_def* landing = nullptr;
  std::uint16_t port = 0;

  // I/O thread only.
  std::int32_t next_pid = 1;
  std::unordered_map<player_id, std::shared_ptr<session>> sessions;
  std::unordered_map<player_id, std::string> names;  // players the mirrors may still hold
  std::unordered_map<std::uint64_t, view_mirror> mirrors;
  std::map<map_id, std::shared_ptr<const grid::map_data>> maps;
  std::vector<std::shared_ptr<session>> dirty;
  std::size_t open_sockets = 0;
  bool stopping = false;
  asio::steady_timer stop_timer{*io};

  void close_socket(session& s) {
    if (!s.sock.is_open()) return;
    boost::system::error_code ignored;
    s.sock.shutdown(tcp::socket::shutdown_both, ignored);
    s.sock.close(ignored);
    --open_sockets;
    stop_when_quiet();
  }
  void stop_when_quiet() {
    if (stopping && open_sockets == 0) io->stop();
  }

  struct counters {
    std::atomic<std::uint64_t> accepted{0}, refused{0}, closed{0}, connections{0}, frames_in{0},
        frames_out{0}, bytes_in{0}, bytes_out{0}, writes{0}, bad_frames{0}, oversize{0}, cut_slow{0},
        moves_refused{0}, rate_limited{0}, timed_out{0};
  } n;
  static void add(std::atomic<std::uint64_t>& c, std::uint64_t v = 1) {
    c.fetch_add(v, std::memory_order_relaxed);
  }

  const scene_def* def_of(scene_id id) const {
    for (const auto& s : table.scenes)
      if (s.id == id) return &s;
    return nullptr;
  }
  const std::shared_ptr<const grid::map_data>& map_of(const scene_def& s) {
    auto& m = maps[s.map];
    if (!m)
      for (const auto& md : table.maps)
        if (md.id == s.map) m = make_map_data(md);
    return m;
  }

  // ---- connections ---------------------------------------------------------------------------

  // Every quarter second: connections idle past idle_timeout, or holding half a frame past
  // read_timeout, are closed with the reason.
  asio::steady_timer sweep_timer{*io};
  void sweep() {
    sweep_timer.expires_after(std::chrono::milliseconds(250));
    sweep_timer.async_wait([this](boost::system::error_code ec) {
      if (ec || stopping) return;
      const auto now = clock::now();
      std::vector<std::pair<std::shared_ptr<session>, std::string>> late;
      for (auto& [pid, s] : sessions) {
        if (now - s->last_rx > opt.idle_timeout)
          late.emplace_back(s, "idle for " + std::to_string(opt.idle_timeout.count()) + " ms");
        else if (s->reader.mid_frame() && now - s->partial_since > opt.read_timeout)
          late.emplace_back(s, "half a frame held for " + std::to_string(opt.read_timeout.count()) + " ms");
      }
      for (auto& [s, why] : late) {
        add(n.timed_out);
        close(s, why);
      }
      flush();
      end_lingering(now);
      sweep();
    });
  }

  void accept() {
    acceptor.async_accept([this](boost::system::error_code ec, tcp::socket sock) {
      if (ec) {
        if (ec != asio::error::operation_aborted) accept();
        return;
      }
      on_accepted(std::move(sock));
      accept();
    });
  }

  void on_accepted(tcp::socket sock) {
    boost::system::error_code ignored;
    sock.set_option(tcp::no_delay(true), ignored);
    auto s = std::make_shared<session>(std::move(sock), opt.max_payload);
    ++open_sockets;
    if (sessions.size() >= opt.max_connections) {
      add(n.refused);
      append_frame(s->out, server_message{goodbye{"server full: " + std::to_string(opt.max_connections) +
                                                  " connections"}});
      s->closing = true;
      write(s);
      lingering.emplace_back(s, clock::now() + linger);
      return;
    }
    add(n.accepted);
    add(n.connections);
    s->pid = static_cast<player_id>(next_pid++);
    s->name = "guest-" + std::to_string(s->pid);
    sessions.emplace(s->pid, s);
    names[s->pid] = s->name;
    send(*s, server_message{you_are{static_cast<std::int32_t>(s->pid), s->name}});
    enter_world(s, world_request::enter(s->pid, landing->id), 0);
    read(s);
    flush();
  }

  void read(const std::shared_ptr<session>& s) {
    s->sock.async_read_some(asio::buffer(s->rbuf), [this, s](boost::system::error_code ec, std::size_t got) {
      if (ec) return close(s, "");
      add(n.bytes_in, got);
      s->last_rx = clock::now();
      const bool was_partial = s->reader.mid_frame();
      bool whole = false;  // a frame ended in this read: a partial one after it is a new one
      auto fed =
          s->reader.feed(std::string_view(s->rbuf.data(), got), [&](std::uint32_t id, std::string_view p) {
            whole = true;
            on_frame(s, id, p);
          });
      if (!fed) {
        add(n.oversize);
        return close(s, fed.error().message);
      }
      if (s->reader.mid_frame() && (!was_partial || whole)) s->partial_since = s->last_rx;
      flush();
      if (!s->closing) read(s);
    });
  }

  // Says why (when there is a reason) and closes once the goodbye is written.
  void close(const std::shared_ptr<session>& s, const std::string& reason) {
    if (s->pid != 0 && sessions.erase(s->pid) != 0) {
      add(n.closed);
      n.connections.fetch_sub(1, std::memory_order_relaxed);
      w->submit(world_request::leave(s->pid), {});  // its viewers hear it from its line
    }
    if (s->closing) {
      if (reason.empty()) close_socket(*s);  // the socket failed while the goodbye was on its way
      return;
    }
    s->closing = true;
    if (reason.empty()) return close_socket(*s);
    append_frame(s->out, server_message{goodbye{reason}});
    write(s);
    lingering.emplace_back(s, clock::now() + linger);  // a client that does not read it is closed anyway
  }

  // Connections closing behind a goodbye their client may never read: closed for good after `linger`.
  static constexpr std::chrono::seconds linger{2};
  std::vector<std::pair<std::shared_ptr<session>, clock::time_point>> lingering;
  void end_lingering(clock::time_point now) {
    std::erase_if(lingering, [&](auto& l) {
      if (l.first->sock.is_open() && now < l.second) return false;
      close_socket(*l.first);
      return true;
    });
  }

  // ---- frames in -----------------------------------------------------------------------------

  void on_frame(const std::shared_ptr<session>& s, std::uint32_t id, std::string_view payload) {
    if (s->closing) return;
    add(n.frames_in);
    // Seed 002's clients know ids 1-202 only: scenert's own frames go to clients that speak them.
    if (id >= 1000 && !s->speaks_scenert) {
      s->speaks_scenert = true;
      if (s->placed)
        if (const scene_def* def = def_of(s->place.line.scene)) send(*s, info_of(*def, s->place));
    }
    auto m = decode_client(id, payload);
    if (!m) {
      add(n.bad_frames);
      if (++s->bad > opt.bad_frames_allowed) close(s, "too many bad frames; the last: " + m.error().message);
      return;
    }
    std::visit([&](auto& msg) { handle(s, msg); }, m.value());
  }

  bool allowed(bucket& b, const front_options::rate& r) {
    if (b.take(r, clock::now())) return true;
    add(n.rate_limited);
    return false;
  }

  void handle(const std::shared_ptr<session>& s, const talk& t) {
    if (!allowed(s->chat, opt.chat)) return;
    std::string frame;
    append_frame(frame,
                 server_message{broadcast{
                     static_cast<std::int32_t>(s->pid), broadcast_type::chat, s->name, t.content, {}, 0}});
    for (auto& [pid, other] : sessions) push(other, frame);
  }

  void handle(const std::shared_ptr<session>& s, const move_to& m) {
    if (!allowed(s->moves, opt.moves)) return;
    const auto at = where(s->pid);
    const scene_def* def = at ? def_of(at->scene) : nullptr;
    const auto now = clock::now();
    grid::cell_point cell{};
    const char* why = nullptr;
    if (!s->placed || def == nullptr) {
      why = "not in a scene";
    } else {
      const map_def& units = units_of(*def);
      const auto& map = map_of(*def);
      const double fx = (double{m.to.x} - units.origin_x) / units.cell_size;
      const double fz = (double{m.to.z} - units.origin_z) / units.cell_size;
      if (!std::isfinite(fx) || !std::isfinite(fz) || fx < 0 || fz < 0 || fx >= map->width() ||
          fz >= map->height()) {
        why = "off the map";
      } else {
        cell = {static_cast<std::uint32_t>(fx), static_cast<std::uint32_t>(fz)};
        if (map->is_block(cell)) {
          why = "blocked";
        } else if (def->max_speed > 0) {
          // From where it stands, as far as max_speed allows since its last accepted move, with a
          // cell of slack for rounding.
          const position from = position_of(*s, at->cell, units);
          const double dist = std::hypot(double{m.to.x} - from.x, double{m.to.z} - from.z);
          const double seconds = std::chrono::duration<double>(now - s->moved_at).count();
          if (dist > def->max_speed * seconds + units.cell_size) why = "too fast";
        }
      }
    }
    if (why != nullptr) {
      add(n.moves_refused);
      if (s->speaks_scenert) send(*s, server_message{move_refused{why}});
      if (at)
        send(*s, server_message{broadcast{static_cast<std::int32_t>(s->pid), broadcast_type::moved, s->name,
                                          "", position_of(*s, at->cell, units_of(*def)), 0}});
      return;
    }
    s->moved_at = now;
    s->claimed = m.to;
    s->claimed_cell = cell;
    s->has_claim = true;
    w->submit(world_request::move(s->pid, cell), {});
  }

  void handle(const std::shared_ptr<session>& s, const request& r) {
    if (!allowed(s->requests, opt.requests)) {
      send(*s, server_message{
                   answer{r.request_id, "rate_limited", "too many requests per second", r.scene, 0, 0}});
      return;
    }
    const auto pid = s->pid;
    world_request q;
    switch (r.kind) {
      case request_kind::enter:
        q = world_request::enter(pid, r.scene);
        break;
      case request_kind::enter_instance:
        q = world_request::enter_instance(pid, r.scene, r.party);
        break;
      case request_kind::join_team:
        q = world_request::join_team(pid, static_cast<player_id>(r.mate));
        break;
      case request_kind::transfer:
        q = world_request::transfer(pid, r.scene);
        break;
      case request_kind::enter_phase:
        q = world_request::enter_phase(pid, r.scene);
        break;
      case request_kind::leave_phase:
        q = world_request::leave_phase(pid);
        break;
      case request_kind::leave:
        q = world_request::leave(pid);
        break;
      case request_kind::leave_party:
        q = world_request::leave_party(pid);
        break;
      case request_kind::count_:
        break;
    }
    if (r.line != 0) {
      send(*s, server_message{answer{r.request_id, "unsupported",
                                     "a given line is not supported yet: send line 0", r.scene, r.line, 0}});
      return;
    }
    enter_world(s, q, r.request_id);
  }

  void handle(const std::shared_ptr<session>& s, const heartbeat& h) {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    send(*s, server_message{heartbeat_echo{
                 h.client_ns, static_cast<std::uint64_t>(std::chrono::nanoseconds(now).count())}});
  }

  void handle(const std::shared_ptr<session>& s, const login&) {
    add(n.bad_frames);  // guests only so far: a login after connect is not allowed
    if (++s->bad > opt.bad_frames_allowed) close(s, "too many bad frames; the last: login after connect");
  }

  // Sends a request to the world; the answer comes back on the I/O thread.
  void enter_world(const std::shared_ptr<session>& asking, const world_request& q, std::uint32_t request_id) {
    std::weak_ptr<session> weak = asking;
    const bool leaving = q.what == world_request::kind::leave;
    w->submit(q, [this, io_alive = io, weak, request_id, leaving](world_result r) {
      asio::post(*io_alive, [this, weak, request_id, leaving, r = std::move(r)]() mutable {
        auto s = weak.lock();
        if (!s || s->closing) return;
        // The answer first, then the geometry of the line it put the player on.
        answer a{request_id, to_string(r.code()), r ? "" : r.error().message, 0, 0, 0};
        if (r) a.scene = r->line.scene, a.line = r->line.line, a.phase = r->phase;
        if (!r && request_id == 0) {  // a guest that found no place: seed 002 has no error frame
          close(s, "no place to land: " + r.error().message);
          return flush();
        }
        if (request_id != 0) send(*s, server_message{std::move(a)});
        if (r) {
          s->placed = !leaving;
          s->place = *r;
          s->moved_at = clock::now();
          s->has_claim = false;  // a new line: the server's cell centre until the client moves
          const scene_def* def = def_of(r->line.scene);
          if (!leaving && def != nullptr && s->speaks_scenert) send(*s, info_of(*def, *r));
        }
        flush();
      });
    });
  }

  server_message info_of(const scene_def& def, const placement& p) {
    const auto& map = *map_of(def);
    scene_info i;
    i.scene = def.id, i.name = def.name,
    i.kind = std::string(scene_kind_names[static_cast<std::size_t>(def.kind)]);
    i.line = p.line.line, i.phase = p.phase;
    i.width = static_cast<std::int32_t>(map.width()), i.height = static_cast<std::int32_t>(map.height());
    i.area_size = static_cast<std::int32_t>(map.area_width());
    const map_def& u = units_of(def);
    i.cell_size = static_cast<float>(u.cell_size), i.origin_x = static_cast<float>(u.origin_x),
    i.origin_z = static_cast<float>(u.origin_z);
    i.blocked.assign((map.cell_count() + 7) / 8, '\0');
    for (std::uint32_t y = 0; y < map.height(); ++y)
      for (std::uint32_t x = 0; x < map.width(); ++x)
        if (map.is_block({x, y})) {
          const std::uint32_t bit = map.cell_index({x, y});
          i.blocked[bit / 8] = static_cast<char>(i.blocked[bit / 8] | (1 << (bit % 8)));
        }
    return server_message{std::move(i)};
  }

  // ---- line events out -----------------------------------------------------------------------

  // The line each player stands on, as its line's events said (a move asks for it).
  std::unordered_map<player_id, std::uint64_t> line_of;
  struct standing_at {
    scene_id scene;
    grid::cell_point cell;
  };
  std::optional<standing_at> where(player_id p) const {
    auto l = line_of.find(p);
    if (l == line_of.end()) return std::nullopt;
    auto m = mirrors.find(l->second);
    if (m == mirrors.end()) return std::nullopt;
    if (auto c = m->second.where(p)) return standing_at{static_cast<scene_id>(l->second >> 32), *c};
    return std::nullopt;
  }

  const map_def& units_of(const scene_def& d) const {
    for (const auto& m : table.maps)
      if (m.id == d.map) return m;
    static const map_def unit{};  // the loader guarantees every scene's map exists
    return unit;
  }
  // The centre of a cell, in world units.
  static position centre(grid::cell_point c, const map_def& u) {
    return {static_cast<float>(u.origin_x + (c.x + 0.5) * u.cell_size), 0,
            static_cast<float>(u.origin_z + (c.y + 0.5) * u.cell_size), 0, 0};
  }
  // Where a player stands: the position its client asked for when the server put it in that cell.
  static position position_of(const session& s, grid::cell_point c, const map_def& u) {
    if (s.has_claim && s.claimed_cell == c) return s.claimed;
    return centre(c, u);
  }
  position position_of(player_id p, grid::cell_point c, const map_def& u) const {
    auto it = sessions.find(p);
    return it != sessions.end() ? position_of(*it->second, c, u) : centre(c, u);
  }
  const std::string& name_of(player_id p) { return names[p]; }

  // Turns a mirror's verdicts into frames; each event's frame is encoded once for all its viewers.
  struct fan_out {
    impl& f;
    view_mirror& mirror;
    const map_def& units;
    std::string frame;
    player_id frame_who = 0;
    int frame_kind = -1;
    const std::string& encoded(int kind, player_id who) {
      if (kind == frame_kind && who == frame_who) return frame;
      frame.clear();
      frame_kind = kind, frame_who = who;
      const auto pid = static_cast<std::int32_t>(who);
      if (kind == 201) {
        append_frame(frame, server_message{left_view{pid}});
      } else {
        const auto at = mirror.where(who);
        append_frame(frame, server_message{broadcast{
                                pid, kind == 2 ? broadcast_type::appeared : broadcast_type::moved,
                                f.name_of(who), "", at ? f.position_of(who, *at, units) : position{}, 0}});
      }
      return frame;
    }
    void to(player_id viewer, int kind, player_id who) {
      auto it = f.sessions.find(viewer);
      if (it != f.sessions.end()) f.push(it->second, encoded(kind, who));
    }
    void appeared(player_id viewer, player_id who) { to(viewer, 2, who); }
    void moved(player_id viewer, player_id who) { to(viewer, 4, who); }
    void vanished(player_id viewer, player_id who) { to(viewer, 201, who); }
    void view(player_id p, std::span<const player_id> all) {
      auto it = f.sessions.find(p);
      if (it == f.sessions.end()) return;
      session& s = *it->second;
      const auto at = mirror.where(p);
      f.send(s, server_message{broadcast{static_cast<std::int32_t>(p), broadcast_type::appeared, s.name, "",
                                         at ? f.position_of(s, *at, units) : position{}, 0}});
      players_in_view v;
      v.players.reserve(all.size());
      for (player_id q : all) {
        const auto qa = mirror.where(q);
        v.players.push_back(
            {static_cast<std::int32_t>(q), qa ? f.position_of(q, *qa, units) : position{}, f.name_of(q)});
      }
      f.send(s, server_message{std::move(v)});
    }
  };

  void drain_lines() {
    (void)feed->batches.drain([this](line_batch& b) {
      const scene_def* def = def_of(b.line.scene);
      if (def == nullptr) return;
      auto [it, fresh] = mirrors.try_emplace(key_of(b.line), map_of(*def));
      fan_out out{*this, it->second, units_of(*def), {}, 0, -1};
      for (const auto& e : b.events) {
        out.frame_kind = -1;  // a new event: its frames are new
        if (!it->second.apply(e, out)) continue;
        if (e.what == line_event::kind::entered) line_of[e.player] = key_of(b.line);
        if (e.what == line_event::kind::left) {
          if (auto l = line_of.find(e.player); l != line_of.end() && l->second == key_of(b.line))
            line_of.erase(l);
          if (!sessions.count(e.player)) names.erase(e.player);
        }
      }
    });
    flush();
  }

  // ---- frames out ----------------------------------------------------------------------------

  void send(session& s, const server_message& m) {
    append_frame(s.out, m);
    mark(s);
  }
  void push(const std::shared_ptr<session>& s, std::string_view frame) {
    if (s->closing) return;
    s->out.append(frame);
    mark(*s);
  }
  void mark(session& s) {
    add(n.frames_out);
    if (!s.dirty) {
      s.dirty = true;
      dirty.push_back(s.shared_from_this());
    }
  }

  // One write per connection per batch: everything queued for it goes in one gathered send.
  void flush() {
    for (auto& s : dirty) {
      s->dirty = false;
      if (s->closing) continue;
      if (s->out.size() + s->sending.size() > opt.max_outbound_bytes) {
        add(n.cut_slow);  // it does not read: no goodbye would reach it
        s->out.clear();
        close(s, "");
        continue;
      }
      write(s);
    }
    dirty.clear();
  }

  void write(const std::shared_ptr<session>& s) {
    if (s->writing || s->out.empty()) return;
    s->writing = true;
    s->sending.swap(s->out);
    add(n.writes);
    add(n.bytes_out, s->sending.size());
    asio::async_write(s->sock, asio::buffer(s->sending),
                      [this, s](boost::system::error_code ec, std::size_t) {
                        s->writing = false;
                        s->sending.clear();
                        if (ec) return close(s, "");
                        if (!s->out.empty()) return write(s);
                        if (s->closing) close_socket(*s);
                      });
  }
};

front::front(std::unique_ptr<impl> i) : impl_(std::move(i)) {}
front::~front() { stop(); }

std::unique_ptr<front> front::create(const scene_table& table, front_options options) {
  return std::unique_ptr<front>(new front(std::make_unique<impl>(table, std::move(options))));
}

std::function<void(line_handle, std::span<const line_event>)> front::on_line_events() {
  return [feed = impl_->feed](line_handle line, std::span<const line_event> events) {
    feed->post(line, events);
  };
}

result<void, front_errc> front::start(world& w) {
  impl& f = *impl_;
  f.w = &w;
  f.landing = landing_scene(f.table);
  if (f.landing == nullptr)
    return fail(front_errc::no_landing_scene, "the table has no town and no field to land on");
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(f.opt.tcp_host, ec);
  if (ec) return fail(front_errc::bind_failed, "--tcp " + f.opt.tcp_host + ": " + ec.message());
  const tcp::endpoint at(address, f.opt.tcp_port);
  f.acceptor.open(at.protocol(), ec);
  if (!ec) f.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) f.acceptor.bind(at, ec);
  if (!ec) f.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return fail(front_errc::bind_failed,
                "--tcp " + f.opt.tcp_host + ":" + std::to_string(f.opt.tcp_port) + ": " + ec.message());
  f.port = f.acceptor.local_endpoint().port();
  f.accept();
  f.sweep();
  f.thread = std::thread([&f] { f.io->run(); });
  return {};
}

void front::stop() {
  impl& f = *impl_;
  if (!f.thread.joinable()) return;
  asio::post(*f.io, [&f] {
    f.stopping = true;
    boost::system::error_code ignored;
    f.acceptor.close(ignored);
    f.sweep_timer.cancel();
    auto all = f.sessions;
    for (auto& [pid, s] : all) f.close(s, "server shutting down");
    f.flush();
    f.stop_when_quiet();
    // A client that does not read its goodbye holds its socket open: the loop ends anyway.
    f.stop_timer.expires_after(std::chrono::seconds(2));
    f.stop_timer.async_wait([&f](boost::system::error_code) { f.io->stop(); });
  });
  f.thread.join();
  f.feed->batches.close();
}

std::uint16_t front::tcp_port() const noexcept { return impl_->port; }

front_stats front::stats() const noexcept {
  const auto& c = impl_->n;
  auto g = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  return {g(c.accepted),   g(c.refused),  g(c.closed),        g(c.connections),  g(c.frames_in),
          g(c.frames_out), g(c.bytes_in), g(c.bytes_out),     g(c.writes),       g(c.bad_frames),
          g(c.oversize),   g(c.cut_slow), g(c.moves_refused), g(c.rate_limited), g(c.timed_out)};
}

}  // namespace scenert::net
