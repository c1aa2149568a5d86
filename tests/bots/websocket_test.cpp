#include <scenert/bots/websocket.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

namespace scenert::bots {
namespace {

// A server's frame (never masked), as RFC 6455 5.2 lays it out.
std::string server_frame(std::uint8_t opcode, std::string_view payload, bool fin = true) {
  std::string f;
  f += static_cast<char>((fin ? 0x80 : 0) | opcode);
  const std::uint64_t n = payload.size();
  if (n < 126) {
    f += static_cast<char>(n);
  } else if (n <= 0xFFFF) {
    f += static_cast<char>(126);
    f += static_cast<char>(n >> 8), f += static_cast<char>(n & 0xFF);
  } else {
    f += static_cast<char>(127);
    for (int k = 56; k >= 0; k -= 8) f += static_cast<char>((n >> k) & 0xFF);
  }
  return f + std::string(payload);
}

// What the server reads from a client's frame: its opcode and its unmasked payload.
std::pair<int, std::string> read_client_frame(std::string_view f) {
  EXPECT_EQ(static_cast<std::uint8_t>(f[1]) & 0x80, 0x80) << "a client's frame must be masked";
  std::uint64_t n = static_cast<std::uint8_t>(f[1]) & 0x7F;
  std::size_t at = 2;
  if (n >= 126) {
    const int bytes = n == 126 ? 2 : 8;
    n = 0;
    for (int i = 0; i < bytes; ++i) n = (n << 8) | static_cast<std::uint8_t>(f[at++]);
  }
  const std::string_view key = f.substr(at, 4);
  at += 4;
  EXPECT_EQ(f.size(), at + n);
  std::string payload(f.substr(at));
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(payload[i] ^ key[i % 4]);
  return {static_cast<std::uint8_t>(f[0]) & 0x0F, payload};
}

std::string bytes_of(std::size_t n, std::mt19937& rng) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(BotsWebSocket, TheKeyIsSixteenBytesInBase64) {
  // RFC 6455 4.1's example: the nonce "the sample nonce".
  EXPECT_EQ(ws_key(0x7468652073616d70ull, 0x6c65206e6f6e6365ull), "dGhlIHNhbXBsZSBub25jZQ==");
  EXPECT_EQ(ws_key(0, 0), "AAAAAAAAAAAAAAAAAAAAAA==");
}

TEST(BotsWebSocket, TheUpgradeRequestAsksForTheSubprotocolOnlyWhenNamed) {
  const auto with = ws_upgrade_request("127.0.0.1:9", "/", "scenert", "k==");
  EXPECT_TRUE(with.starts_with("GET / HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"));
  EXPECT_NE(with.find("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: k==\r\n"),
            std::string::npos);
  EXPECT_NE(with.find("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: scenert\r\n\r\n"),
            std::string::npos);
  EXPECT_TRUE(with.ends_with("\r\n\r\n"));
  EXPECT_EQ(ws_upgrade_request("h", "/", "", "k==").find("Sec-WebSocket-Protocol"), std::string::npos);
}

TEST(BotsWebSocket, TheAnswerIsWholeOnlyAfterItsBlankLine) {
  const std::string answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n";
  for (std::size_t cut = 0; cut < answer.size(); ++cut) {
    auto partial = ws_upgrade_answer(std::string_view(answer).substr(0, cut));
    ASSERT_TRUE(partial) << cut;
    EXPECT_EQ(*partial, 0u) << cut;
  }
  auto whole = ws_upgrade_answer(answer + "\x82\x01x");
  ASSERT_TRUE(whole);
  EXPECT_EQ(*whole, answer.size());  // the first message starts right after it
}

TEST(BotsWebSocket, ARefusedOrEndlessAnswerIsAnError) {
  auto refused = ws_upgrade_answer("HTTP/1.1 426 Upgrade Required\r\nContent-Length: 0\r\n\r\n");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.code(), ws_errc::refused);
  EXPECT_NE(refused.error().message.find("426 Upgrade Required"), std::string::npos)
      << refused.error().message;
  auto endless = ws_upgrade_answer("HTTP/1.1 101 Switching Protocols\r\n" + std::string(9000, 'x'));
  ASSERT_FALSE(endless);
  EXPECT_EQ(endless.code(), ws_errc::refused);
}

TEST(BotsWebSocket, AMaskedFrameCarriesItsPayloadAtEveryLengthForm) {
  std::mt19937 rng(7);
  for (std::size_t n : {0u, 1u, 125u, 126u, 127u, 65535u, 65536u, 70000u}) {
    const std::string payload = bytes_of(n, rng);
    std::string out = "before";
    ws_append_masked(out, payload, 0xA1B2C3D4u);
    ASSERT_TRUE(out.starts_with("before"));
    const auto [opcode, got] = read_client_frame(std::string_view(out).substr(6));
    EXPECT_EQ(opcode, 2) << n;
    EXPECT_EQ(got, payload) << n;
  }
  std::string pong;
  ws_append_masked(pong, "ping data", 1, ws_unframer::pong);
  EXPECT_EQ(read_client_frame(pong), std::make_pair(int{ws_unframer::pong}, std::string("ping data")));
}

// Random streams of the server's messages (every length form, fragmented messages with pings
// between their fragments), cut at random: the data is the payloads in order, the control frames
// come whole and in their place.
TEST(BotsWebSocket, TheUnframerGivesBackEveryMessageWhateverTheCuts) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    std::string stream, want_data;
    std::vector<std::pair<std::uint8_t, std::string>> want_controls;
    std::vector<std::size_t> data_before_control;  // how much data came before each control frame
    const int messages = 1 + static_cast<int>(rng() % 6);
    for (int m = 0; m < messages; ++m) {
      const int pieces = 1 + static_cast<int>(rng() % 3);
      for (int p = 0; p < pieces; ++p) {
        const std::size_t sizes[] = {0, 5, 125, 126, 300, 65536 + 3};
        const std::string payload = bytes_of(sizes[rng() % 6], rng);
        stream += server_frame(p == 0 ? 2 : 0, payload, p == pieces - 1);
        want_data += payload;
        if (rng() % 3 == 0) {
          std::string ping = bytes_of(rng() % 126, rng);
          stream += server_frame(ws_unframer::ping, ping);
          want_controls.emplace_back(ws_unframer::ping, ping);
          data_before_control.push_back(want_data.size());
        }
      }
    }
    ws_unframer u;
    std::string got_data;
    std::vector<std::pair<std::uint8_t, std::string>> got_controls;
    std::vector<std::size_t> got_before;
    for (std::size_t at = 0; at < stream.size();) {
      const std::size_t cut = std::min(stream.size() - at, std::size_t{1} + rng() % 200);
      auto fed = u.feed(
          std::string_view(stream).substr(at, cut), [&](std::string_view d) { got_data += d; },
          [&](std::uint8_t op, std::string_view payload) {
            got_controls.emplace_back(op, std::string(payload));
            got_before.push_back(got_data.size());
          });
      ASSERT_TRUE(fed) << fed.error().message;
      at += cut;
    }
    ASSERT_EQ(got_data, want_data) << "trial " << trial;
    ASSERT_EQ(got_controls, want_controls) << "trial " << trial;
    ASSERT_EQ(got_before, data_before_control) << "trial " << trial;
  }
}

TEST(BotsWebSocket, TheUnframerRefusesWhatAServerMustNotSend) {
  std::string masked;
  ws_append_masked(masked, "x", 5);
  const std::pair<std::string, std::string> cases[] = {
      {masked, "masked"},
      {server_frame(1, "text"), "text"},
      {server_frame(0, "x"), "continuation outside"},
      {server_frame(2, "a", false) + server_frame(2, "b"), "inside a fragmented"},
      {server_frame(ws_unframer::ping, std::string(126, 'p')), "over 125"},
      {server_frame(ws_unframer::ping, "p", false), "fragmented"},
      {server_frame(0x42, "x"), "reserved bits"},
      {server_frame(3, "x"), "unknown data opcode 3"},
      {server_frame(0xB, "x"), "unknown control opcode 11"},
  };
  for (const auto& [bytes, reason] : cases) {
    ws_unframer u;
    auto fed = u.feed(
        bytes, [](std::string_view) {}, [](std::uint8_t, std::string_view) {});
    ASSERT_FALSE(fed) << reason;
    EXPECT_EQ(fed.code(), ws_errc::bad_frame);
    EXPECT_NE(fed.error().message.find(reason), std::string::npos) << fed.error().message;
  }
}

}  // namespace
}  // namespace scenert::bots
