#pragma once
// The world's insides: its inbox, its line hosting (objects, groups, idle grace) and its request
// handling. Everything but the inbox and the published snapshot is touched by the world's thread only.

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include <scenert/runtime/inbox.hpp>

#include <scenert/scene/scene.hpp>
#include <scenert/scene/scene_group.hpp>
#include <scenert/scene/world.hpp>

namespace scenert {

/// "scene 3 line 2 (generation 5)", for the world's messages.
[[nodiscard]] std::string where(line_handle l);

struct world_event {
  enum class type : std::uint8_t {
    request,
    scene_empty,
    player_left,
    quarantined,
    line_closed,
    group_removed,
    phase_answer,  // req.player, req.line, req.what (enter_phase or leave_phase); index: the phase
    phase_closed,  // req.line; index: the phase; payload: its players, back on the town line
    shutdown,
    query
  };
  using directory_fn = unique_function<void(const line_directory&)>;
  // What a rare event carries: query and shutdown a function, a refused phase request its error,
  // a failed phase its players.
  using payload = std::variant<directory_fn, error<world_errc>, std::vector<player_id>>;
  world_event() = default;
  world_event(const world_request& r, world_reply answer) : req(r), reply(std::move(answer)) {}

  // 160 bytes (a module message's bytes ride out of line): the inbox streams millions of these per second, so
  // the rare parts stay out of line.
  type what = type::request;
  std::uint32_t index = 0;           // group_removed: the group; phase events: the phase
  world_request req{};               // request; the notices use req.line and req.player
  std::unique_ptr<payload> carried;  // see payload
  world_reply reply;                 // request
};

struct world::impl final : scene_host {
  // Hosting side of one scene definition's lines (the bookkeeping is in the directory).
  // How one live line is hosted (its counts and players are the directory's).
  struct hosted_line {
    std::shared_ptr<scene> object;
    std::int64_t empty_since = -1;  // ns on the pool clock; -1: not waiting to close
    std::uint32_t group = 0;        // grouped scenes: index in groups
  };
  struct container {
    const scene_def* def = nullptr;
    std::shared_ptr<const grid::map_data> map;
    std::shared_ptr<const nav::nav_map> nav;    // the map's, shared by every line of it
    std::vector<hosted_line> lines;             // by line index; grows to the peak of live lines
    std::vector<std::shared_ptr<scene>> spare;  // closed line objects kept for reuse
    std::uint64_t line_full = 0, line_full_at_max = 0, quarantined = 0, evicted = 0;
    std::uint32_t max_players = 0;
  };
  struct group_entry {
    std::shared_ptr<scene_group> g;
    std::uint32_t hz = 0;
    std::uint32_t weight = 0;  // capacity of its members
    std::uint32_t members = 0;
    bool in_pool = false, removing = false, in_room = false;
  };
  // A player's part in a party's private instances: its owner id and where it came from.
  struct party_ticket {
    party_id owner = 0;      // the party, or a solo player's own owner id
    scene_id return_to = 0;  // the scene it entered the instance from (0: from nowhere)
  };
  struct instance_key {
    party_id owner = 0;
    scene_id scene = 0;
    friend bool operator==(instance_key, instance_key) = default;
  };
  struct instance_hash {
    std::size_t operator()(instance_key k) const noexcept {
      return std::hash<party_id>{}(k.owner * 0x9E3779B97F4A7C15u ^ k.scene);
    }
  };
  struct grace_entry {
    line_handle line;
    std::int64_t since;
    std::int64_t deadline;
  };

  impl(world& w, const scene_table& t, processor_pool& p, world_options o);

  // scene_host: called from scene threads, lands in the inbox.
  void scene_empty(line_handle line) override;
  void player_left(line_handle line, player_id player) override;
  void scene_quarantined(line_handle line) override;
  void phase_closed(line_handle line, phase_id phase, std::vector<player_id> players) override;
  void phase_answered(line_handle line, player_id player, result<phase_id, world_errc> answer,
                      bool entering) override;
  void dropped_stale(player_id) override { stale_posts.fetch_add(1, std::memory_order_relaxed); }
  bool wants_line_events() const override { return static_cast<bool>(opt.on_line_events); }
  void line_events(line_handle line, phase_id phase, std::span<const line_event> batch) override {
    opt.on_line_events(line, phase, batch);
  }
  void module_frames(line_handle line, std::span<const module_frame> frames) override {
    if (opt.on_module_frames) opt.on_module_frames(line, frames);
  }

  void push(world_event e);
  void notice(world_event::type what, line_handle line, player_id player = 0);
  void drain();
  void handle(world_event& e);
  std::int64_t now_ns() const;

  // requests (world_requests.cpp)
  std::optional<world_result> apply(const world_request& r, world_reply& reply);
  std::optional<world_result> do_enter(const world_request& r);
  std::optional<world_result> do_enter_line(const world_request& r);
  std::optional<world_result> do_leave(const world_request& r);
  std::optional<world_result> do_transfer(const world_request& r, line_handle target, world_reply& reply);
  std::optional<world_result> do_join_team(const world_request& r, world_reply& reply);
  std::optional<world_result> do_move(const world_request& r);
  std::optional<world_result> do_message(const world_request& r);
  result<line_handle, world_errc> allocate(container& c, player_id p);
  result<line_handle, world_errc> named_line(line_handle line, std::uint32_t below, player_id p,
                                             party_id member_of);
  party_id party_of(player_id p) const;
  world_result place_on(player_id p, line_handle line);  // a player from nowhere onto a line
  std::optional<world_result> start_switch(player_id p, line_handle from, line_handle to, world_reply& reply);
  void on_player_left(line_handle line, player_id p);

  // party instances (world_instances.cpp)
  std::optional<world_result> do_enter_instance(const world_request& r, world_reply& reply);
  std::optional<world_result> do_leave_party(const world_request& r, world_reply& reply);
  result<line_handle, world_errc> instance_for(container& c, party_id owner, player_id p);
  void forget_instance(line_handle line, party_id owner);
  void on_quarantined(line_handle line);

  // phases (world_phases.cpp)
  std::optional<world_result> do_enter_phase(const world_request& r, world_reply& reply);
  std::optional<world_result> do_leave_phase(const world_request& r, world_reply& reply);
  std::optional<world_result> phase_request(const location& loc, const world_request& r, scene_id space,
                                            world_reply& reply);
  void on_phase_answer(world_event& e);
  void on_phase_closed(line_handle line, phase_id phase, const std::vector<player_id>& players);
  std::optional<world_result> phase_busy(const location& loc, player_id p, const char* what);
  void refuse_phase_request(player_id p, world_errc code, const std::string& why);
  void answer_phase_requests_at_shutdown();
  void evacuate(player_id p, line_handle from);
  result<line_handle, world_errc> replacement(line_handle failed, player_id p);
  void land(player_id p);  // a switching player lands on its target: directory, scene, reply

  // straight to a line (world_lines.cpp)
  bool post_to_line(const world_request& r);
  void show_line(line_handle line, scene* object);  // live: to_line may post to it
  void hide_line(line_handle line);                 // closing: nothing more reaches it that way

  // lines (world_lines.cpp)
  container* find(scene_id id);
  container& get(scene_id id);  // a scene known to be hosted
  hosted_line& hosted(line_handle line);
  scene& object(line_handle line);
  void send(line_handle line, const roster_change& change);  // staged until flush_roster
  void flush_roster();  // at the end of each tick, and before a line closes
  void filled(line_handle line);
  std::optional<line_handle> open_line(container& c, party_id owner = 0);
  void close_line(line_handle line);
  void maybe_close_quarantined(line_handle line);
  void on_line_closed(line_handle line);
  std::uint32_t assign_group(const std::shared_ptr<scene>& s);
  void release_group(std::uint32_t gi, std::uint32_t weight);
  void offer_room(std::uint32_t gi);
  std::uint32_t weight_of(const scene_def& def) const;
  void on_scene_empty(line_handle line);
  void run_grace();
  void ensure_min_lines();
  void begin_shutdown(unique_function<void(const line_directory&)> done);
  void check_shut_down();
  void publish(bool force);

  world& self;
  const scene_table& table;
  processor_pool& pool;
  world_options opt;
  std::shared_ptr<line_directory> dir;
  const clock* time;
  steady_clock_source steady;

  inbox<world_event> events{4096};  // requests and notices; drained whole at the start of each tick
  // Roster changes of this tick, in order, and their lines: flush_roster posts each run at once.
  std::vector<scene*> staged_to;
  std::vector<roster_change> staged;

  std::unordered_map<scene_id, container> containers;
  std::vector<container*> ordered;
  container* last_found = nullptr;
  std::vector<group_entry> groups;
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> room;  // hz -> groups with room
  std::size_t groups_in_pool = 0;
  std::deque<grace_entry> grace;
  std::unordered_map<player_id, world_reply> pending;        // replies of switching players
  std::unordered_map<player_id, world_reply> phase_pending;  // replies of phase requests under way
  std::unordered_map<instance_key, line_handle, instance_hash> instances;  // open private instances
  std::unordered_map<player_id, party_ticket> tickets;  // players who entered a private instance

  bool shutting_down = false, shut_down = false;
  unique_function<void(const line_directory&)> shutdown_done;
  std::uint64_t requests = 0, errors = 0, busy_ns = 0;

  // The live openings of lines by (scene, line), for a client's moves and messages that go straight
  // to their line (to_line) from other threads. Written by the world's thread when a line opens and
  // when it closes; a poster holds the shared lock while it posts, so an object is never let go (or
  // given to another line) under a post. A writer waits for a few posts at most.
  struct live_line {
    scene* object = nullptr;
    std::uint32_t generation = 0;
  };
  mutable std::shared_mutex live_m;
  std::unordered_map<std::uint64_t, live_line> live_lines;
  std::atomic<std::uint64_t> stale_posts{0};  // to_line: dropped here or by the line

  mutable std::mutex snap_mutex;
  std::shared_ptr<const world_snapshot> snap;
  std::int64_t last_publish = 0;
};

}  // namespace scenert
