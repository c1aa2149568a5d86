// The front read inside: in one drain of line batches, a player's moves before its last one are
// marked superseded (not sent), whatever lines and batches they sit in; a WebSocket write frames each
// of its frames as a message of its own.
#include "../../net/src/front_impl.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace scenert::net {
namespace {

line_event moved(player_id p) { return {line_event::kind::moved, p, {1, 1}}; }
line_event entered(player_id p) { return {line_event::kind::entered, p, {1, 1}}; }

TEST(FrontWhitebox, OnlyEachPlayersLastMoveInADrainIsSent) {
  drained_batches f;
  f.batches.push_back({{1, 1, 1}, 0, {moved(7), entered(8), moved(8), moved(7)}, {}});
  f.batches.push_back({{1, 2, 1}, 0, {moved(9)}, {}});
  f.batches.push_back({{1, 1, 1}, 3, {moved(8), moved(7)}, {}});  // a phase of line 1
  f.mark_superseded_moves();
  // The drain's moves in order: 7, 8, 7, 9, 8, 7.
  EXPECT_EQ(f.superseded, (std::vector<bool>{true, true, true, false, false, false}));
}

// Against the obvious rule on random drains: a move is superseded when the same player moves later.
TEST(FrontWhitebox, SupersededMovesMatchTheRuleOnRandomDrains) {
  drained_batches f;
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    f.batches.clear();
    std::vector<player_id> movers;
    const int batches = 1 + static_cast<int>(rng() % 4);
    for (int b = 0; b < batches; ++b) {
      line_batch batch{
          {1, static_cast<std::uint32_t>(1 + rng() % 3), 1}, static_cast<phase_id>(rng() % 2), {}, {}};
      for (int e = static_cast<int>(rng() % 8); e > 0; --e) {
        const auto p = static_cast<player_id>(1 + rng() % 5);
        batch.events.push_back(rng() % 4 == 0 ? entered(p) : moved(p));
        if (batch.events.back().what == line_event::kind::moved) movers.push_back(p);
      }
      f.batches.push_back(std::move(batch));
    }
    f.mark_superseded_moves();
    ASSERT_EQ(f.superseded.size(), movers.size());
    for (std::size_t i = 0; i < movers.size(); ++i) {
      const bool later =
          std::find(movers.begin() + static_cast<long>(i) + 1, movers.end(), movers[i]) != movers.end();
      EXPECT_EQ(f.superseded[i], later) << "round " << round << ", move " << i;
    }
  }
}

// Each frame becomes one unmasked binary message whose length takes 7, 16 or 64 bits (RFC 6455 5.2),
// read back here by the RFC's rules, at each length's edges.
TEST(FrontWhitebox, AWebSocketWriteIsOneMessagePerFrame) {
  const std::size_t payloads[] = {0, 117, 118, 65527, 65528, 70000};  // frames of 8 + payload bytes
  std::string frames;
  std::vector<std::string> sent;
  for (std::size_t i = 0; i < std::size(payloads); ++i) {
    std::string one;
    append_header(one, 200, static_cast<std::uint32_t>(payloads[i]));
    one.append(payloads[i], static_cast<char>('a' + i));
    frames += one;
    sent.push_back(one);
  }
  std::string scratch;
  frame_as_messages(frames, scratch);
  std::size_t at = 0;
  for (const auto& want : sent) {
    ASSERT_LT(at + 2, frames.size());
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(frames[at + k]); };
    EXPECT_EQ(byte(0), 0x82u) << "FIN and binary";
    EXPECT_EQ(byte(1) & 0x80u, 0u) << "a server's messages are not masked";
    std::uint64_t length = byte(1) & 0x7Fu;
    std::size_t head = 2;
    if (length == 126) {
      length = std::uint64_t{byte(2)} << 8 | byte(3);
      head = 4;
      EXPECT_GE(length, 126u);
    } else if (length == 127) {
      length = 0;
      for (std::size_t k = 0; k < 8; ++k) length = length << 8 | byte(2 + k);
      head = 10;
      EXPECT_GT(length, 0xFFFFu);
    }
    ASSERT_EQ(length, want.size());
    EXPECT_EQ(frames.compare(at + head, want.size(), want), 0);
    at += head + want.size();
  }
  EXPECT_EQ(at, frames.size());
}

// The flood cut on a manual clock: a client may go over its rate by the flooding bucket's burst at
// once, and by its refill for ever; the drop that finds the bucket empty cuts it.
TEST(FrontWhitebox, AClientThatKeepsFloodingIsCutAndOneJustOverItsRateIsNot) {
  using std::chrono::milliseconds;
  const front_options::rate chat{2, 5}, flooding{10, 200};
  const clock::time_point t0 = clock::now();
  bucket chats, floods;
  int allowed = 0, dropped = 0;
  metered last = metered::allowed;
  for (int i = 0; i < 1000 && last != metered::cut; ++i) {  // all at once
    last = meter(chats, chat, floods, flooding, t0);
    allowed += last == metered::allowed;
    dropped += last == metered::dropped;
  }
  EXPECT_EQ(last, metered::cut);
  EXPECT_EQ(allowed, 5);  // the chat burst
  EXPECT_EQ(dropped, 200);

  // 11 chats a second (9 over the rate, under the flood refill of 10) for ten minutes: never cut.
  bucket steady_chats, steady_floods;
  for (int i = 0; i < 11 * 600; ++i)
    ASSERT_NE(meter(steady_chats, chat, steady_floods, flooding, t0 + milliseconds(i * 1000 / 11)),
              metered::cut)
        << "message " << i;
  // 32 a second (30 over: 20 a second past the refill) is cut once the burst of 200 is spent, ~10 s in.
  bucket fast_chats, fast_floods;
  int n = 0;
  while (meter(fast_chats, chat, fast_floods, flooding, t0 + milliseconds(n * 1000 / 32)) != metered::cut)
    ++n;
  EXPECT_NEAR(n / 32.0, 10.0, 0.5);
  // Burst 0: never cut.
  bucket free_chats, free_floods;
  for (int i = 0; i < 10'000; ++i) ASSERT_NE(meter(free_chats, chat, free_floods, {0, 0}, t0), metered::cut);
}

}  // namespace
}  // namespace scenert::net
