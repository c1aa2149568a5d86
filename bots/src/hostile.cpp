// Hostile bots: which bots misbehave, and the crew that plays them on a thread of its own.
#include "hostile_crew.hpp"

#include "worker_detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace scenert::bots {

using namespace detail;

std::vector<std::optional<hostile_kind>> pick_hostile(const bots_plan& plan, double percent) {
  const std::size_t n = plan.bots.size();
  std::vector<std::optional<hostile_kind>> picks(n);
  const auto count =
      static_cast<std::size_t>(std::llround(static_cast<double>(n) * std::clamp(percent, 0.0, 100.0) / 100));
  if (count == 0) return picks;
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0U);
  std::mt19937_64 rng(plan.digest ^ 0x686f7374696c65ULL);  // "hostile": apart from the plan's own draws
  std::shuffle(order.begin(), order.end(), rng);
  const std::size_t first = rng() % hostile_kind_count;
  for (std::size_t i = 0; i < count; ++i)
    picks[order[i]] = static_cast<hostile_kind>((first + i) % hostile_kind_count);
  return picks;
}

namespace {

constexpr auto act_period = std::chrono::milliseconds(10);

bool logs_in_at_once(hostile_kind k) {
  return k == hostile_kind::half_frame || k == hostile_kind::flood || k == hostile_kind::never_reading ||
         k == hostile_kind::guessed_token || k == hostile_kind::module_junk;
}

// Kinds the server must cut: one still open when the run ends was served when it should not be.
bool must_be_cut(hostile_kind k) {
  return k == hostile_kind::garbage || k == hostile_kind::oversize || k == hostile_kind::lying_length ||
         k == hostile_kind::flood;
}

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

std::string frame_of(const net::client_message& m) {
  std::string f;
  net::append_frame(f, m);
  return f;
}

}  // namespace

hostile_crew::hostile_crew(shared_state& shared, const std::vector<std::optional<hostile_kind>>& picks,
                           double percent)
    : shared_(shared) {
  report_.percent = percent;
  for (std::uint32_t i = 0; i < picks.size(); ++i) {
    if (!picks[i]) continue;
    auto b = std::make_unique<hostile_bot>();
    b->index = i;
    b->kind = *picks[i];
    b->plan = &shared.plan.bots[i];
    b->rng.seed(b->plan->seed);
    bots_.push_back(std::move(b));
  }
  report_.bots = bots_.size();
}

hostile_crew::~hostile_crew() {
  if (thread_.joinable()) (void)finish();
}

void hostile_crew::start() {
  if (bots_.empty()) return;
  tick();
  thread_ = std::thread([this] { io_.run(); });
}

hostile_report hostile_crew::finish() {
  auto end_all = [this] {
    stopping_ = true;
    timer_.cancel();
    for (auto& owned : bots_) {
      hostile_bot& b = *owned;
      if (b.at == hostile_bot::stage::waiting) {
        b.at = hostile_bot::stage::done;
        count(b, "not started", "none");
      } else if (b.at != hostile_bot::stage::done) {
        drain_at_end(b);
      }
    }
    io_.stop();
  };
  if (thread_.joinable()) {
    asio::post(io_, end_all);
    thread_.join();
  } else {
    end_all();
  }
  return std::move(report_);
}

void hostile_crew::tick() {
  if (stopping_) return;
  const auto now = clock::now();
  const bool paused = shared_.paused.load(std::memory_order_relaxed);
  for (auto& owned : bots_) {
    hostile_bot& b = *owned;
    if (b.at == hostile_bot::stage::waiting && !paused && now - shared_.start >= b.plan->arrive) connect(b);
    if (b.at == hostile_bot::stage::on && !paused && now >= b.next_act) act(b, now);
  }
  timer_.expires_at(now + act_period);
  timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) tick();
  });
}

// ---- connections ------------------------------------------------------------------------------

void hostile_crew::connect(hostile_bot& b) {
  b.at = hostile_bot::stage::connecting;
  const auto& target = shared_.targets[b.index % shared_.targets.size()];
  b.sock.emplace(io_);
  boost::system::error_code ignored;
  b.sock->open(target.protocol(), ignored);
  // A reader that never reads: a small window, so that the server's queue for it grows at once.
  if (b.kind == hostile_kind::never_reading)
    b.sock->set_option(asio::socket_base::receive_buffer_size(4096), ignored);
  b.sock->async_connect(target, [this, &b](boost::system::error_code ec) {
    if (b.at != hostile_bot::stage::connecting) return;
    if (ec) return ended(b, "connect: " + ec.message());
    boost::system::error_code ignored2;
    b.sock->set_option(tcp::no_delay(true), ignored2);
    b.sock->non_blocking(true, ignored2);
    if (shared_.opt.ws) return upgrade(b);
    b.at = hostile_bot::stage::on;
    if (b.kind != hostile_kind::never_reading) read(b);
  });
}

// WebSocket: the upgrade (asking for scenert's subprotocol), then the misdeeds inside its messages.
void hostile_crew::upgrade(hostile_bot& b) {
  b.at = hostile_bot::stage::upgrading;
  const auto& target = shared_.opt.targets[b.index % shared_.opt.targets.size()];
  send_frames(b, ws_upgrade_request(fmt::format("{}:{}", target.host, target.port), "/", "scenert",
                                    ws_key(masks_(), masks_())));
  read(b);
}

void hostile_crew::read(hostile_bot& b) {
  b.sock->async_wait(tcp::socket::wait_read, [this, &b](boost::system::error_code ec) {
    if (b.at == hostile_bot::stage::done) return;
    if (ec) return ended(b, ec.message());
    for (;;) {
      boost::system::error_code e;
      const std::size_t n = b.sock->read_some(asio::buffer(buffer_), e);
      if (e == asio::error::would_block) break;
      if (e) return ended(b, e == asio::error::eof ? "eof" : e.message());
      take(b, {buffer_.data(), n});
      if (b.at == hostile_bot::stage::done) return;
      if (n < buffer_.size()) break;
    }
    // A never-reading bot reads its upgrade's answer, and then nothing.
    if (b.kind != hostile_kind::never_reading || b.at == hostile_bot::stage::upgrading) read(b);
  });
}

void hostile_crew::take(hostile_bot& b, std::string_view bytes) {
  if (b.at == hostile_bot::stage::upgrading) {
    b.upgrade.append(bytes);
    auto answer = ws_upgrade_answer(b.upgrade);
    if (!answer) return ended(b, "upgrade refused");
    if (*answer == 0) return;
    const std::string first = b.upgrade.substr(*answer);
    std::string().swap(b.upgrade);
    b.at = hostile_bot::stage::on;
    if (!first.empty()) take(b, first);
    return;
  }
  if (!shared_.opt.ws) return frames(b, bytes);
  auto fed = b.unframer.feed(
      bytes, [&](std::string_view data) { frames(b, data); },
      [&](std::uint8_t opcode, std::string_view) {
        if (opcode == ws_unframer::close) ended(b, "eof");
      });
  if (!fed) ended(b, "the server's WebSocket stream broke");
}

void hostile_crew::frames(hostile_bot& b, std::string_view bytes) {
  if (b.at == hostile_bot::stage::done) return;
  auto fed = b.reader.feed(bytes, [&](std::uint32_t id, std::string_view payload) {
    if (b.at != hostile_bot::stage::done) on_frame(b, id, payload);
  });
  if (!fed) ended(b, "the server's stream broke");
}

// What a hostile bot makes of the server's frames: its goodbye, its login's answer, 1012s.
void hostile_crew::on_frame(hostile_bot& b, std::uint32_t id, std::string_view payload) {
  auto m = net::decode_server(id, payload);
  if (!m) return;
  if (const auto* g = std::get_if<net::goodbye>(&m.value())) {
    b.goodbye = g->reason.empty() ? "goodbye" : g->reason.substr(0, g->reason.find(':'));
  } else if (const auto* ok = std::get_if<net::login_ok>(&m.value())) {
    b.logged_in = true;
    if (b.kind == hostile_kind::guessed_token)
      ++b.answered[ok->resumed ? "login_ok resumed a player" : "login_ok afresh"];
    if (b.kind == hostile_kind::slow_login) ++b.answered["login_ok"];
  } else if (std::holds_alternative<net::you_are>(m.value())) {
    b.logged_in = true;
  } else if (const auto* e = std::get_if<net::module_error>(&m.value())) {
    ++b.answered["1012 " + e->code];
  }
}

// ---- misdeeds -----------------------------------------------------------------------------------

void hostile_crew::act(hostile_bot& b, clock::time_point now) {
  b.next_act = now + act_period;
  if (logs_in_at_once(b.kind) && !b.login_sent) {
    const std::string token = b.kind == hostile_kind::guessed_token
                                  ? fmt::format("{:016x}{:016x}", b.rng(), b.rng())
                                  : std::string{};
    send(b, net::login{fmt::format("hostile-{}", b.index), token, {}});
    b.login_sent = true;
    return;
  }
  switch (b.kind) {
    case hostile_kind::garbage:
      return send_frames(b, random_bytes(b.rng, 256));
    case hostile_kind::oversize:
      if (std::exchange(b.did_once, true)) return;
      {
        std::string head;
        net::append_header(head, static_cast<std::uint32_t>(net::message_id::login), 0x7ffffff0U);
        return send_frames(b, head + random_bytes(b.rng, 64));
      }
    case hostile_kind::lying_length: {  // a request's header that says 2 bytes: a varint cut in half
      std::string lie;
      net::append_header(lie, static_cast<std::uint32_t>(net::message_id::request), 2);
      b.next_act = now + std::chrono::milliseconds(20);
      return send_frames(b, lie + "\x08\x80");
    }
    case hostile_kind::slow_login: {
      if (b.login_bytes.empty()) {
        const std::string f = frame_of(net::login{fmt::format("hostile-{}", b.index), "", {}});
        if (shared_.opt.ws)
          ws_append_masked(b.login_bytes, f, static_cast<std::uint32_t>(masks_()));
        else
          b.login_bytes = f;
      }
      if (b.trickled < b.login_bytes.size()) b.out.push_back(b.login_bytes[b.trickled++]);
      b.next_act = now + std::chrono::milliseconds(40);
      return write(b);
    }
    default:
      return act_logged_in(b, now);
  }
}

// The misdeeds of a bot that logged in first.
void hostile_crew::act_logged_in(hostile_bot& b, clock::time_point now) {
  switch (b.kind) {
    case hostile_kind::half_frame:
      if (!b.logged_in || std::exchange(b.did_once, true)) return;
      {
        std::string half;
        net::append_header(half, static_cast<std::uint32_t>(net::message_id::talk), 100);
        return send_frames(b, half + random_bytes(b.rng, 10));
      }
    case hostile_kind::flood:
      if (b.logged_in) flood(b);
      return;
    case hostile_kind::never_reading:  // a heartbeat a second keeps it from idling; the others' moves pile up
      b.next_act = now + std::chrono::seconds(1);
      return send(b, net::heartbeat{static_cast<std::uint64_t>(ns_of(now)), 0});
    case hostile_kind::module_junk:
      if (!b.logged_in) return;
      b.next_act = now + std::chrono::milliseconds(100);
      return send_module_junk(b);
    default:
      return;
  }
}

// Two hundred messages a tick (20,000 a second) of every metered kind.
void hostile_crew::flood(hostile_bot& b) {
  if (b.out.size() > (1u << 20)) return;  // the socket is full: it floods as fast as it can write
  std::string burst;
  for (std::uint32_t i = 0; i < 200; ++i) {
    const float x = static_cast<float>(b.rng() % 500), z = static_cast<float>(b.rng() % 500);
    switch (i % 4) {
      case 0:
        net::append_frame(burst, net::client_message{net::move_to{{x, 0, z}}});
        break;
      case 1:
        net::append_frame(burst, net::client_message{net::talk{"flood"}});
        break;
      case 2:
        net::append_frame(burst, net::client_message{net::heartbeat{1, 0}});
        break;
      default:
        net::append_frame(burst, net::client_message{net::request{i, net::request_kind::enter, 1, 0, 0, 0}});
    }
  }
  send_frames(b, burst);
}

// Alternately an id no module has and a payload over the front's limit.
void hostile_crew::send_module_junk(hostile_bot& b) {
  const bool big = (b.rng() & 1) != 0;
  const auto opcode = static_cast<std::uint32_t>(net::first_module_id + 500 + b.rng() % 3000);
  send(b, net::module_message{opcode, random_bytes(b.rng, big ? 5000 : 16)});
}

void hostile_crew::send(hostile_bot& b, const net::client_message& m) { send_frames(b, frame_of(m)); }

// Whole frames (or whatever bytes a misdeed makes) as they go: a masked message on WebSocket.
void hostile_crew::send_frames(hostile_bot& b, const std::string& frames) {
  if (b.at == hostile_bot::stage::done) return;
  if (shared_.opt.ws && b.at == hostile_bot::stage::on)
    ws_append_masked(b.out, frames, static_cast<std::uint32_t>(masks_()));
  else
    b.out += frames;
  write(b);
}

void hostile_crew::write(hostile_bot& b) {
  if (b.writing || b.out.empty() || b.at == hostile_bot::stage::done) return;
  b.writing = true;
  b.sending.clear();
  std::swap(b.out, b.sending);
  asio::async_write(*b.sock, asio::buffer(b.sending), [this, &b](boost::system::error_code ec, std::size_t) {
    b.writing = false;
    if (b.at == hostile_bot::stage::done) return;
    if (ec) return ended(b, ec.message());
    write(b);
  });
}

// ---- endings ------------------------------------------------------------------------------------

// The server closed it (or the network failed): cut, with the goodbye's reason if it said one.
void hostile_crew::ended(hostile_bot& b, const std::string& why) {
  if (b.at == hostile_bot::stage::done) return;
  b.at = hostile_bot::stage::done;
  boost::system::error_code ignored;
  if (b.sock) b.sock->close(ignored);
  (void)why;  // the bot cannot tell a reset from a close: "no goodbye" says both
  count(b, "cut", b.goodbye.empty() ? "no goodbye" : b.goodbye);
}

// The run is over: a never-reading bot reads what came, to learn whether it was cut; the others
// still open were answered, or just open.
void hostile_crew::drain_at_end(hostile_bot& b) {
  if (b.kind == hostile_kind::never_reading && b.at == hostile_bot::stage::on) {
    for (std::size_t got = 0; got < (64u << 20);) {
      boost::system::error_code e;
      const std::size_t n = b.sock->read_some(asio::buffer(buffer_), e);
      if (e == asio::error::would_block) break;
      if (e) return ended(b, e.message());
      take(b, {buffer_.data(), n});
      if (b.at == hostile_bot::stage::done) return;
      got += n;
    }
  }
  b.at = hostile_bot::stage::done;
  boost::system::error_code ignored;
  if (b.sock) b.sock->close(ignored);
  if (b.answered.empty()) return count(b, "open at the end", "none");
  hostile_outcomes& o = report_.by_kind[std::string(hostile_kind_names[static_cast<std::size_t>(b.kind)])];
  ++o.bots;
  ++o.endings["answered"];
  for (const auto& [what, n] : b.answered) ++o.reasons[what];
  if (b.answered.contains("login_ok resumed a player")) {
    ++o.unexpected;
    if (report_.unexpected_examples.size() < max_examples)
      report_.unexpected_examples.push_back(
          fmt::format("hostile bot {}: its made-up token resumed a player", b.index));
  }
}

void hostile_crew::count(const hostile_bot& b, const std::string& ending, const std::string& reason) {
  const auto kind = std::string(hostile_kind_names[static_cast<std::size_t>(b.kind)]);
  hostile_outcomes& o = report_.by_kind[kind];
  ++o.bots;
  ++o.endings[ending];
  ++o.reasons[reason];
  if (ending == "open at the end" && must_be_cut(b.kind)) {
    ++o.unexpected;
    if (report_.unexpected_examples.size() < max_examples)
      report_.unexpected_examples.push_back(
          fmt::format("hostile bot {} ({}): served to the run's end, never cut", b.index, kind));
  }
}

}  // namespace scenert::bots
