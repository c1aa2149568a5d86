// Micro benches of the network front: one move fanned out through the view mirror to 10, 100 and
// 1,000 viewers (the frame encoded once, its bytes appended to each viewer's outgoing buffer), beside
// encoding the frame for each viewer (the naive way); the frame reader over a stream of moves; and the
// loopback floor: move frames through a bare pair of TCP sockets, one thread writing, this one reading.
#include <scenert/net/messages.hpp>
#include <scenert/net/view_mirror.hpp>

#include <benchmark/benchmark.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace {

using scenert::line_event;
using scenert::player_id;
using namespace scenert::net;

std::shared_ptr<const scenert::grid::map_data> one_view_map() {
  scenert::grid::map_spec spec;
  spec.width = 300;
  spec.height = 300;
  spec.area_width = 10;
  spec.area_height = 10;
  return scenert::grid::map_data::create(spec).value();
}

// Viewers 1..n stand around cell (150, 150); the mover, player 0, walks inside its area.
struct fan_out {
  std::vector<std::string>& out;
  const std::string& frame;
  void view(player_id, std::span<const player_id>) {}
  void appeared(player_id, player_id) {}
  void vanished(player_id, player_id) {}
  void moved(player_id to, player_id) { out[to].append(frame); }
  void monster_view(player_id, std::span<const player_id>) {}
  void monster_at(player_id, player_id) {}
  void monster_gone(player_id, player_id) {}
};

void BM_MirrorMoveFanOut(benchmark::State& state) {
  const auto n = static_cast<player_id>(state.range(0));
  view_mirror mirror(one_view_map());
  std::vector<std::string> outgoing(n + 1);
  std::string frame;
  append_frame(frame,
               server_message{broadcast{0, broadcast_type::moved, "mover", "", {150, 0, 150, 0, 0}, 0}});
  fan_out sink{outgoing, frame};
  for (player_id p = 1; p <= n; ++p)
    (void)mirror.apply({line_event::kind::entered, p, {140 + static_cast<std::uint32_t>(p % 30), 145}}, sink);
  (void)mirror.apply({line_event::kind::entered, 0, {150, 150}}, sink);
  std::uint32_t x = 150;
  std::int64_t frames = 0;
  for (auto _ : state) {
    x = x == 150 ? 151 : 150;
    (void)mirror.apply({line_event::kind::moved, 0, {x, 150}}, sink);
    frames += static_cast<std::int64_t>(n);
    for (auto& o : outgoing) o.clear();  // the writes went out: capacity kept
  }
  state.SetItemsProcessed(frames);
  state.counters["viewers"] = static_cast<double>(n);
}
BENCHMARK(BM_MirrorMoveFanOut)->Arg(10)->Arg(100)->Arg(1000);

// The naive way: encode the frame again for each viewer.
void BM_EncodePerViewer(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<std::string> outgoing(n);
  std::int64_t frames = 0;
  for (auto _ : state) {
    for (auto& o : outgoing)
      append_frame(o,
                   server_message{broadcast{0, broadcast_type::moved, "mover", "", {150, 0, 151, 0, 0}, 0}});
    frames += static_cast<std::int64_t>(n);
    for (auto& o : outgoing) o.clear();
  }
  state.SetItemsProcessed(frames);
}
BENCHMARK(BM_EncodePerViewer)->Arg(10)->Arg(100)->Arg(1000);

void BM_FrameReaderMoves(benchmark::State& state) {
  std::string stream;
  for (int i = 0; i < 1000; ++i) {
    const auto f = static_cast<float>(i);
    append_frame(stream, client_message{move_to{{f, 0, 2 * f, 0, 0}}});
  }
  std::int64_t frames = 0;
  for (auto _ : state) {
    frame_reader reader;
    (void)reader.feed(stream, [&](std::uint32_t id, std::string_view payload) {
      auto m = decode_client(id, payload);
      benchmark::DoNotOptimize(m);
      ++frames;
    });
  }
  state.SetItemsProcessed(frames);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(stream.size()));
}
BENCHMARK(BM_FrameReaderMoves);

// The loopback floor: 64 KiB writes of move frames (as a front's gathered writes) through a TCP
// connection on 127.0.0.1, read in 64 KiB reads; frames per second is what the kernel moves from one
// socket to another on this machine, without a server's work.
void BM_LoopbackFloor(benchmark::State& state) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof at;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 ||
      ::listen(listener, 1) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&at), &size) != 0) {
    state.SkipWithError("no loopback listener");
    return;
  }
  const int writer = ::socket(AF_INET, SOCK_STREAM, 0);
  if (::connect(writer, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) {
    state.SkipWithError("no loopback connection");
    return;
  }
  const int reader = ::accept(listener, nullptr, nullptr);
  std::string frame;
  append_frame(frame,
               server_message{broadcast{7, broadcast_type::moved, "bot-7", "", {18.5F, 0, 18.5F, 0, 0}, 0}});
  std::string chunk;
  while (chunk.size() + frame.size() <= 64 * 1024) chunk += frame;
  std::atomic<bool> done{false};
  std::thread feed([&] {
    while (!done.load(std::memory_order_relaxed))
      if (::send(writer, chunk.data(), chunk.size(), MSG_NOSIGNAL) <= 0) break;
  });
  std::vector<char> buf(64 * 1024);
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    const ssize_t got = ::recv(reader, buf.data(), buf.size(), 0);
    if (got <= 0) break;
    bytes += static_cast<std::uint64_t>(got);
  }
  done = true;
  ::shutdown(writer, SHUT_RDWR);  // wakes a send blocked on a full socket
  ::shutdown(reader, SHUT_RDWR);
  feed.join();
  for (int fd : {reader, writer, listener}) ::close(fd);
  state.SetItemsProcessed(static_cast<std::int64_t>(bytes / frame.size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_LoopbackFloor)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
