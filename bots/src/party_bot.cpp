// One bot of `scenert bots --play`: connection, logins, the party's entry, its view and its walk.
#include "party_bot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace scenert::bots::play {

namespace {

std::string items_text(const std::map<std::uint32_t, std::int64_t>& items) {
  std::string out = "{";
  for (const auto& [item, count] : items)
    out += fmt::format("{}{}: {}", out.size() > 1 ? ", " : "", item, count);
  return out + "}";
}

}  // namespace

void play_shared::error(const std::string& what) {
  ++report.errors;
  if (report.error_examples.size() < 10) report.error_examples.push_back(what);
}

void play_shared::fail(party_state& p, const std::string& why) {
  error(fmt::format("party {}: {}", p.index, why));
  if (std::exchange(p.failed, true)) return;
  ++report.parties_failed;
}

party_bot::party_bot(asio::io_context& io, play_shared& s, party_state& party, std::uint32_t member)
    : io_(io),
      shared_(s),
      party_(party),
      member_(member),
      name_(fmt::format("{}-{}-{}-{}", s.opt.script_name, s.opt.seed, party.index, member)) {}

void party_bot::start() { connect(); }

void party_bot::connect() {
  boost::system::error_code ec;
  const tcp::endpoint to(asio::ip::make_address(shared_.opt.target.host, ec), shared_.opt.target.port);
  if (ec) return fail(fmt::format("target {}: {}", shared_.opt.target.host, ec.message()));
  reader_ = net::frame_reader{1u << 20};
  out_.clear(), sending_.clear();
  writing_ = false, views_ = 0, has_position_ = false;
  entities_.clear();
  sock_.emplace(io_).async_connect(to, [this, c = ++connection_](boost::system::error_code e) {
    if (connection_ != c || at_ == stage::failed || at_ == stage::through) return;
    if (e) return fail(fmt::format("member {}: connect: {}", member_, e.message()));
    boost::system::error_code ignored;
    sock_->set_option(tcp::no_delay(true), ignored);
    if (at_ == stage::connecting) at_ = stage::logging_in;
    put(net::login{name_, {}, {}});
    read();
  });
}

void party_bot::read() {
  sock_->async_read_some(
      asio::buffer(buffer_), [this, c = connection_](boost::system::error_code ec, std::size_t n) {
        if (connection_ != c || at_ == stage::failed || at_ == stage::through) return;
        if (ec) return on_lost(ec == asio::error::eof ? "eof" : ec.message());
        auto fed = reader_.feed({buffer_.data(), n}, [&](std::uint32_t id, std::string_view payload) {
          if (connection_ == c) on_frame(id, payload);
        });
        if (!fed)
          return fail(fmt::format("member {}: the server's stream broke: {}", member_, fed.error().message));
        if (connection_ == c && at_ != stage::failed && at_ != stage::through) read();
      });
}

void party_bot::put(const net::client_message& m) {
  net::append_frame(out_, m);
  write();
}

void party_bot::write() {
  if (writing_ || out_.empty() || !sock_) return;
  writing_ = true;
  sending_.swap(out_);
  out_.clear();
  asio::async_write(*sock_, asio::buffer(sending_),
                    [this, c = connection_](boost::system::error_code ec, std::size_t) {
                      if (connection_ != c) return;
                      writing_ = false;
                      sending_.clear();
                      if (ec) return on_lost(ec.message());
                      write();
                    });
}

void party_bot::send(std::uint32_t opcode, std::string bytes) {
  if (at_ != stage::playing) return;
  ++shared_.report.module_messages;
  put(net::module_message{opcode, std::move(bytes)});
}

void party_bot::on_frame(std::uint32_t id, std::string_view payload) {
  auto m = net::decode_server(id, payload);
  if (!m)
    return shared_.error(
        fmt::format("party {} member {}: frame {}: {}", party_.index, member_, id, m.error().message));
  on(*m);
}

void party_bot::on(const net::server_message& m) {
  std::visit(
      [&](const auto& msg) {
        using T = std::decay_t<decltype(msg)>;
        if constexpr (std::is_same_v<T, net::login_ok>) {
          pid_ = msg.pid;
        } else if constexpr (std::is_same_v<T, net::inventory>) {
          on_inventory(msg);
        } else if constexpr (std::is_same_v<T, net::scene_info>) {
          on_scene(msg);
        } else if constexpr (std::is_same_v<T, net::players_in_view>) {
          on_view(msg);
        } else if constexpr (std::is_same_v<T, net::broadcast>) {
          if (msg.pid == pid_ && msg.type != net::broadcast_type::chat &&
              msg.type != net::broadcast_type::action)
            x_ = msg.p.x, z_ = msg.p.z, has_position_ = true;
        } else if constexpr (std::is_same_v<T, net::answer>) {
          on_answer(msg);
        } else if constexpr (std::is_same_v<T, net::monsters_seen>) {
          if (msg.all) entities_.clear();
          for (const auto& s : msg.monsters) entities_[s.id] = {s.id, s.x, s.z, s.kind, s.state, s.health};
        } else if constexpr (std::is_same_v<T, net::monsters_gone>) {
          for (const auto id : msg.ids) entities_.erase(id);
        } else if constexpr (std::is_same_v<T, net::module_error>) {
          ++shared_.report.refused[msg.code];
          if (script_ && at_ == stage::playing) script_->on_refused(*this, msg.opcode, msg.code, msg.reason);
        } else if constexpr (std::is_same_v<T, net::granted>) {
          ++shared_.report.grants;
          shared_.report.items_granted += static_cast<std::uint64_t>(msg.count);
          granted_[msg.item] += msg.count;
          quiet_since_ = clock::now();
        } else if constexpr (std::is_same_v<T, net::module_frame_out>) {
          if (script_ && at_ == stage::playing) script_->on_frame(*this, msg.opcode, msg.bytes);
        } else if constexpr (std::is_same_v<T, net::goodbye>) {
          on_lost("goodbye: " + msg.reason);
        }
      },
      m);
}

// The first login's inventory is what the account held before; the second one's must add the loot.
void party_bot::on_inventory(const net::inventory& inv) {
  if (at_ == stage::relogging) return check_loot(inv);
  std::map<std::uint32_t, std::int64_t> held;
  for (const auto& i : inv.items) held[i.item] = i.count;
  before_ = std::move(held);
  enter_when_ready();
}

void party_bot::check_loot(const net::inventory& after) {
  std::map<std::uint32_t, std::int64_t> gained;
  for (const auto& i : after.items)
    gained[i.item] = i.count - (before_ && before_->count(i.item) ? before_->at(i.item) : 0);
  std::uint64_t missing = 0;
  for (const auto& [item, count] : granted_) {
    const std::int64_t found = std::clamp<std::int64_t>(gained[item], 0, count);
    shared_.report.items_found += static_cast<std::uint64_t>(found);
    missing += static_cast<std::uint64_t>(count - found);
  }
  shared_.report.items_missing += missing;
  if (missing != 0)
    return fail(fmt::format("member {} was granted {} but its account gained {} after logging in again",
                            member_, items_text(granted_), items_text(gained)));
  at_ = stage::through;
  ++party_.through;
  close();
}

void party_bot::on_answer(const net::answer& a) {
  if (at_ != stage::entering) return;
  if (a.code != "ok")
    return fail(
        fmt::format("member {}: entering scene {}: {} ({})", member_, shared_.opt.scene, a.code, a.message));
  if (!party_.entered) party_.entered = clock::now();
  at_ = stage::playing;
  script_ = (*shared_.opt.script)(member_);
}

void party_bot::on_scene(const net::scene_info& m) {
  ground_.width = m.width, ground_.height = m.height;
  ground_.cell_size = m.cell_size, ground_.origin_x = m.origin_x, ground_.origin_z = m.origin_z;
  auto bits = net::decode_blocks(static_cast<std::uint32_t>(m.width), static_cast<std::uint32_t>(m.height),
                                 m.block_rows, m.blocked);
  if (!bits)
    return fail(fmt::format("member {}: 1006 of scene {}: {}", member_, m.scene, bits.error().message));
  ground_.blocked = std::move(*bits);
  entities_.clear();
}

void party_bot::on_view(const net::players_in_view& v) {
  ++views_;
  for (const auto& p : v.players)
    if (p.pid == pid_) x_ = p.p.x, z_ = p.p.z, has_position_ = true;
  enter_when_ready();
}

// Standing in town with its account read (1014 and its 202 come in either order): the party goes
// in, each member with the party's id.
void party_bot::enter_when_ready() {
  if (at_ != stage::logging_in || !before_ || !has_position_) return;
  at_ = stage::entering;
  has_position_ = false;
  put(net::request{1, net::request_kind::enter_instance, shared_.opt.scene, 0, party_.wire_id, 0});
}

void party_bot::on_lost(const std::string& why) {
  if (at_ == stage::through || at_ == stage::failed) return;
  fail(fmt::format("member {}: the connection ended ({})", member_, why));
}

void party_bot::phase(std::uint32_t p) { party_.phases.heard(last_phase_, p); }

void party_bot::chest_opened(std::uint32_t entity) {
  if (party_.chests.insert(entity).second && party_.chests.size() == 1 && party_.entered)
    shared_.report.fight.record(clock::now() - *party_.entered);
}

void party_bot::done() {
  if (at_ != stage::playing) return;
  at_ = stage::looting;
  goal_.reset();
  done_at_ = quiet_since_ = clock::now();
}

void party_bot::fail(std::string reason) {
  if (at_ == stage::failed) return;
  at_ = stage::failed;
  shared_.fail(party_, reason);
  close();
}

void party_bot::close() {
  ++connection_;
  boost::system::error_code ignored;
  if (sock_) sock_->close(ignored);
}

void party_bot::stop() {
  if (at_ != stage::through && at_ != stage::failed) at_ = stage::failed;
  close();
}

void party_bot::tick(clock::time_point now) {
  if (at_ == stage::playing) {
    script_->on_tick(*this);
    if (at_ == stage::playing || at_ == stage::looting) step(now);
  } else if (at_ == stage::looting && loot_heard(now)) {
    at_ = stage::relogging;  // off, and in again by name: its account must hold its loot
    close();
    connect();
  }
}

// Its loot is all heard once a grant came and none for loot_quiet since (a module grants a member's
// rolls at once, and the store writes what queued up in one go), or, with none, after loot_wait.
bool party_bot::loot_heard(clock::time_point now) const {
  if (granted_.empty()) return now - done_at_ >= shared_.opt.loot_wait;
  return now - quiet_since_ >= shared_.opt.loot_quiet;
}

// ---- walking ----------------------------------------------------------------------------------

void party_bot::walk_toward(float x, float z, float within) { goal_ = goal{x, z, within}; }

bool party_bot::walkable(float wx, float wz) const {
  const auto& g = ground_;
  const double fx = (double{wx} - g.origin_x) / g.cell_size, fz = (double{wz} - g.origin_z) / g.cell_size;
  if (!(fx >= 0 && fz >= 0 && fx < g.width && fz < g.height)) return false;
  const auto bit =
      static_cast<std::size_t>(static_cast<std::int64_t>(fz) * g.width + static_cast<std::int64_t>(fx));
  return bit / 8 >= g.blocked.size() || ((g.blocked[bit / 8] >> (bit % 8)) & 1) == 0;
}

// A step toward its goal each move period: straight, or along one axis when straight is blocked.
void party_bot::step(clock::time_point now) {
  if (!goal_ || !has_position_ || now < next_move_) return;
  next_move_ = now + std::chrono::duration_cast<clock::duration>(
                         std::chrono::duration<double>(1.0 / std::max(shared_.opt.move_hz, 0.01)));
  const float dx = goal_->x - x_, dz = goal_->z - z_;
  const float apart = std::hypot(dx, dz);
  if (apart <= goal_->within) return;
  const float step = std::min(0.9f * ground_.cell_size, apart - goal_->within * 0.5f);
  const float ux = dx / apart * step, uz = dz / apart * step;
  const std::array<std::pair<float, float>, 3> tries{
      {{ux, uz}, {std::copysign(step, dx), 0.f}, {0.f, std::copysign(step, dz)}}};
  for (const auto& [sx, sz] : tries) {
    if (!walkable(x_ + sx, z_ + sz)) continue;
    x_ += sx, z_ += sz;
    return put(net::walk{{x_, 0, z_, 0, 0}, views_});
  }
}

}  // namespace scenert::bots::play
