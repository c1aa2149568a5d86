// The bots' worker: connections, WebSocket upgrades, reads, writes, losses and reconnects.

#include "worker_detail.hpp"

#include <fmt/format.h>

#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <numbers>

namespace scenert::bots {

using namespace detail;

void worker::connect(bot& b) {
  b.at = bot::stage::connecting;
  b.connect_started = clock::now();
  if (!b.busy_retry) b.login_started = b.connect_started;
  b.busy_retry = false;
  b.ws = shared_.opt.ws;
  const std::size_t t = (b.index + b.shift) % shared_.targets.size();
  const auto& target = shared_.opt.targets[t];
  b.sock.emplace(io_).async_connect(shared_.targets[t], [this, &b, &target,
                                                         c = ++b.connection](boost::system::error_code ec) {
    if (b.at != bot::stage::connecting || b.connection != c) return;
    if (ec && b.resuming) {  // that one is down too: the next
      b.last_loss = "connect: " + ec.message();
      return reconnect(b, clock::now());
    }
    if (ec) {
      ++stats_.connect_failed;
      error(b, fmt::format("bot {}: connect to {}:{}: {}", b.index, target.host, target.port, ec.message()));
      return close(b, "connect_failed");
    }
    boost::system::error_code ignored;
    b.sock->set_option(tcp::no_delay(true), ignored);
    b.sock->non_blocking(true, ignored);
    const int on = 1;  // each read says when the kernel took its newest bytes: the bots' own lag
    (void)::setsockopt(b.sock->native_handle(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    if (b.ws) return upgrade(b);
    connected(b);
  });
}

// WebSocket: the upgrade request, then its answer (the bytes after it are the first messages).
void worker::upgrade(bot& b) {
  const auto key = ws_key(masks_(), masks_());
  const auto& target = shared_.opt.targets[(b.index + b.shift) % shared_.opt.targets.size()];
  b.upgrade = ws_upgrade_request(fmt::format("{}:{}", target.host, target.port), "/",
                                 shared_.opt.protocol == bots_protocol::scenert ? "scenert" : "", key);
  asio::async_write(*b.sock, asio::buffer(b.upgrade),
                    [this, &b, c = b.connection](boost::system::error_code ec, std::size_t) {
                      if (b.at != bot::stage::connecting || b.connection != c) return;
                      if (ec) return upgrade_failed(b, ec.message());
                      b.upgrade.clear();
                      read_upgrade(b);
                    });
}

void worker::read_upgrade(bot& b) {
  b.sock->async_wait(tcp::socket::wait_read, [this, &b, c = b.connection](boost::system::error_code ec) {
    if (b.at != bot::stage::connecting || b.connection != c) return;
    if (ec) return upgrade_failed(b, ec.message());
    boost::system::error_code e;
    const std::size_t n = b.sock->read_some(asio::buffer(buffer_), e);
    if (e && e != asio::error::would_block)
      return upgrade_failed(b, e == asio::error::eof ? "the server closed the connection" : e.message());
    b.upgrade.append(buffer_.data(), n);
    auto answer = ws_upgrade_answer(b.upgrade);
    if (!answer) return upgrade_failed(b, answer.error().message);
    if (*answer == 0) return read_upgrade(b);
    const std::string first = b.upgrade.substr(*answer);
    std::string().swap(b.upgrade);
    connected(b);
    if (!first.empty() && b.at != bot::stage::done) take(b, first);
  });
}

void worker::upgrade_failed(bot& b, const std::string& why) {
  ++stats_.connect_failed;
  error(b, fmt::format("bot {}: WebSocket upgrade: {}", b.index, why));
  close(b, "connect_failed");
}

void worker::connected(bot& b) {
  stats_.connect.record(clock::now() - b.connect_started);
  ++stats_.connected;
  b.at = bot::stage::logging_in;
  if (shared_.opt.protocol == bots_protocol::scenert)
    send(b, net::login{fmt::format("bot-{}", b.index), b.token, maps_held()});
  read(b);
  flush();
}

// Waits until readable, then drains through the thread's one buffer (no buffer per bot).
void worker::read(bot& b) {
  b.sock->async_wait(tcp::socket::wait_read, [this, &b, c = b.connection](boost::system::error_code ec) {
    if (b.at == bot::stage::done || b.connection != c) return;
    if (ec) return lost(b, ec.message());
    for (;;) {
      boost::system::error_code e;
      const std::size_t n = receive(b, e);
      if (e == asio::error::would_block) break;
      if (e) return lost(b, e == asio::error::eof ? "eof" : e.message());
      take(b, {buffer_.data(), n});
      read_lag_ns_ = -1;
      if (b.at == bot::stage::done || b.connection != c) return;
      if (n < buffer_.size()) break;
    }
    read(b);
  });
}

std::size_t worker::receive(bot& b, boost::system::error_code& e) {
  iovec part{buffer_.data(), buffer_.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = &part, msg.msg_iovlen = 1;
  msg.msg_control = control, msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(b.sock->native_handle(), &msg, 0);
  if (n <= 0) {
    const bool again = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
    e = n == 0  ? asio::error::make_error_code(asio::error::eof)
        : again ? asio::error::make_error_code(asio::error::would_block)
                : boost::system::error_code(errno, boost::system::system_category());
    return 0;
  }
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    timespec taken{}, now{};
    std::memcpy(&taken, CMSG_DATA(c), sizeof taken);
    ::clock_gettime(CLOCK_REALTIME, &now);
    read_lag_ns_ = std::max<std::int64_t>(
        0, (now.tv_sec - taken.tv_sec) * 1'000'000'000LL + (now.tv_nsec - taken.tv_nsec));
  }
  return static_cast<std::size_t>(n);
}

void worker::take(bot& b, std::string_view bytes) {
  if (!b.ws) {
    frames(b, bytes);
  } else {
    auto fed = b.unframer.feed(
        bytes, [&](std::string_view data) { frames(b, data); },
        [&](std::uint8_t opcode, std::string_view payload) { on_control(b, opcode, payload); });
    if (!fed && b.at != bot::stage::done) {
      error(b, fmt::format("bot {}: the server's WebSocket stream broke: {}", b.index, fed.error().message));
      close(b, "bad_frame");
    }
  }
  flush();
}

void worker::frames(bot& b, std::string_view bytes) {
  if (b.at == bot::stage::done) return;
  auto fed = b.reader.feed(bytes, [&](std::uint32_t id, std::string_view payload) {
    if (b.at == bot::stage::done) return;
    if (read_lag_ns_ >= 0) stats_.own.read_lag.record(read_lag_ns_);
    on_frame(b, id, payload);
  });
  if (!fed) {
    error(b, fmt::format("bot {}: the server's stream broke: {}", b.index, fed.error().message));
    close(b, "bad_frame");
  }
}

// A ping is answered with its payload; the server's close ends the connection (its goodbye, if it
// sent one, came before).
void worker::on_control(bot& b, std::uint8_t opcode, std::string_view payload) {
  if (b.at == bot::stage::done) return;
  if (opcode == ws_unframer::close) return lost(b, "eof");
  if (opcode != ws_unframer::ping) return;
  ws_append_masked(b.pongs, payload, static_cast<std::uint32_t>(masks_()), ws_unframer::pong);
  if (!b.writing && !b.dirty) {
    b.dirty = true;
    dirty_.push_back(&b);
  }
}

// The server closed (or the network failed): its goodbye, if it sent one, says why. With --resume,
// a bot that holds a token (logged in, its view or not) comes back with it when its server dropped it
// (no goodbye, or shutting_down); once resuming it tries every target in turn, whatever ended its
// last try, until its login timeout, unless its player went on elsewhere (replaced). One that may
// not come back lost its player: an error with its reason, never a silent close.
void worker::lost(bot& b, const std::string& reason) {
  if (b.at == bot::stage::leaving) return close(b, "bye");
  if (b.goodbye == "server_busy" && !b.resuming && b.at == bot::stage::logging_in) return refused_busy(b);
  const std::string why = b.goodbye.empty() ? reason : b.goodbye;
  const bool dropped = b.goodbye.empty() || b.goodbye == "shutting_down";
  const bool may_resume = shared_.opt.resume && !b.token.empty() && !stopping_ &&
                          (b.resuming ? why != "replaced" : dropped) &&
                          (b.at == bot::stage::playing || b.at == bot::stage::logging_in || b.resuming);
  if (!may_resume) {
    if (shared_.opt.resume && !stopping_ && b.pid != 0) {
      error(b, fmt::format("bot {} (player {}): lost its player: the server closed it ({})", b.index, b.pid,
                           b.goodbye_said.empty() ? why : b.goodbye_said));
      ++stats_.failed_resumes[fmt::format("closed by the server ({})", why)];
    }
    return close(b, why);
  }
  ++stats_.disconnects[why];
  b.last_loss = why;
  if (b.at == bot::stage::playing) shared_.online.fetch_sub(1, std::memory_order_relaxed);
  if (!b.resuming) {
    b.resuming = true;
    b.dropped_at = clock::now();
    b.resume_by = b.dropped_at + shared_.opt.login_timeout;
  }
  reconnect(b, clock::now());
}

// Off the connection it had, on to the next target (a moment later: the server may be restarting).
void worker::reconnect(bot& b, clock::time_point now) {
  boost::system::error_code ignored;
  if (b.sock) b.sock->close(ignored);
  ++b.connection;
  ++b.shift;
  b.at = bot::stage::reconnecting;
  b.next_try = now + std::chrono::milliseconds(100);
  b.goodbye.clear();
  b.goodbye_said.clear();
  b.retry_after_ms = 0;
  b.reader = net::frame_reader{1u << 20};
  b.unframer = {};
  b.upgrade.clear(), b.pongs.clear(), b.out.clear(), b.sending.clear();
  b.writing = false;
  b.view.clear();
  b.views = 0;  // the new connection counts its 202s from the start
  b.pending.reset();
  b.has_position = b.own_appeared_due = false;
}

// The server admits no new player now: the bot connects again once the retry-after passed, unless
// that is past its login timeout (counted from its first connect): then it gives up, counted apart
// (the server refusing newcomers past its line is what it is meant to do, not a fault).
void worker::refused_busy(bot& b) {
  ++stats_.server_busy;
  const auto now = clock::now();
  const auto wait = std::chrono::milliseconds(std::max<std::uint32_t>(b.retry_after_ms, 100));
  if (now + wait - b.login_started > shared_.opt.login_timeout) {
    ++stats_.busy_gave_up;
    return close(b, "server_busy");
  }
  reconnect(b, now);
  --b.shift;  // the same target: its refusal said when to come back
  b.busy_retry = true;
  b.next_try = now + wait;
}

void worker::close(bot& b, const std::string& reason) {
  if (b.at == bot::stage::done) return;
  if (b.at == bot::stage::playing || b.at == bot::stage::leaving)
    shared_.online.fetch_sub(1, std::memory_order_relaxed);
  b.at = bot::stage::done;
  ++stats_.disconnects[reason];
  boost::system::error_code ignored;
  if (b.sock) {
    b.sock->shutdown(tcp::socket::shutdown_both, ignored);
    b.sock->close(ignored);
  }
  if (b.pid != 0) shared_.pid_of[b.index].store(0, std::memory_order_relaxed);
}

void worker::error(bot& b, const std::string& what) {
  (void)b;
  ++stats_.errors;
  shared_.errors.fetch_add(1, std::memory_order_relaxed);
  if (stats_.error_examples.size() < max_examples) stats_.error_examples.push_back(what);
}

// ---- what the server says -----------------------------------------------------------------------

void worker::send(bot& b, const net::client_message& m) {
  if (b.at == bot::stage::done) return;
  const std::size_t before = b.out.size();
  net::append_frame(b.out, m);
  auto& w = wire_of(stats_, net::id_of(m));
  ++w.frames_out;
  w.bytes_out += b.out.size() - before;
  shared_.frames_out.fetch_add(1, std::memory_order_relaxed);
  if (!b.writing && !b.dirty) {
    b.dirty = true;
    dirty_.push_back(&b);
  }
}

void worker::flush() {
  for (bot* b : dirty_) {
    b->dirty = false;
    if (b->at != bot::stage::done && !b->writing && (!b->out.empty() || !b->pongs.empty())) write(*b);
  }
  dirty_.clear();
}

// WebSocket: the frames go as one masked message (the server's reader takes frames across messages).
void worker::write(bot& b) {
  b.writing = true;
  b.sending.clear();
  if (b.ws) {
    b.sending.swap(b.pongs);
    if (!b.out.empty()) ws_append_masked(b.sending, b.out, static_cast<std::uint32_t>(masks_()));
    b.out.clear();
  } else {
    std::swap(b.out, b.sending);
  }
  asio::async_write(*b.sock, asio::buffer(b.sending),
                    [this, &b, c = b.connection](boost::system::error_code ec, std::size_t) {
                      if (b.connection != c) return;
                      b.writing = false;
                      if (b.at == bot::stage::done) return;
                      if (ec) return lost(b, ec.message());
                      if (!b.out.empty() || !b.pongs.empty()) write(b);
                    });
}

}  // namespace scenert::bots
