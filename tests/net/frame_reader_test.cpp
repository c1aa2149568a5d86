#include <scenert/net/frame.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using scenert::net::append_header;
using scenert::net::frame_reader;
using scenert::net::header_size;
using scenert::net::wire_errc;

struct frame {
  std::uint32_t id = 0;
  std::string payload;
  friend bool operator==(const frame&, const frame&) = default;
};

std::string encode(const std::vector<frame>& frames) {
  std::string out;
  for (const auto& f : frames) {
    append_header(out, f.id, static_cast<std::uint32_t>(f.payload.size()));
    out += f.payload;
  }
  return out;
}

// Feeds `stream` cut at `cuts` (sorted offsets) and collects the frames.
std::vector<frame> read(frame_reader& reader, const std::string& stream,
                        const std::vector<std::size_t>& cuts) {
  std::vector<frame> got;
  std::size_t at = 0;
  auto take = [&](std::size_t end) {
    auto r =
        reader.feed(std::string_view(stream).substr(at, end - at), [&](std::uint32_t id, std::string_view p) {
          got.push_back({id, std::string(p)});
        });
    EXPECT_TRUE(r.has_value());
    at = end;
  };
  for (std::size_t c : cuts) take(c);
  take(stream.size());
  return got;
}

TEST(FrameReader, TheHeaderIsLittleEndianLengthThenId) {
  std::string out;
  append_header(out, 202, 0x01020304);
  EXPECT_EQ(out, std::string("\x04\x03\x02\x01\xca\x00\x00\x00", 8));
}

// The oracle: any cut of a stream of random frames reads back the same frames, in order.
TEST(FrameReader, AnyCutOfAStreamReadsTheSameFrames) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<frame> frames(1 + rng() % 6);
    for (auto& f : frames) {
      f.id = rng() % 3 == 0 ? 3 : static_cast<std::uint32_t>(rng());
      f.payload.resize(rng() % 4 == 0 ? 0 : rng() % 300);
      for (auto& c : f.payload) c = static_cast<char>(rng());
    }
    const std::string stream = encode(frames);
    std::vector<std::size_t> cuts;
    for (std::size_t i = 0; i < 1 + rng() % 8; ++i) cuts.push_back(rng() % (stream.size() + 1));
    std::sort(cuts.begin(), cuts.end());
    frame_reader reader;
    EXPECT_EQ(read(reader, stream, cuts), frames) << "round " << round;
    EXPECT_FALSE(reader.mid_frame());
  }
}

TEST(FrameReader, EveryByteAloneReadsTheSameFrames) {
  const std::vector<frame> frames{{2, "hello"}, {3, ""}, {200, std::string(40, 'x')}};
  const std::string stream = encode(frames);
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < stream.size(); ++i) cuts.push_back(i);
  frame_reader reader;
  EXPECT_EQ(read(reader, stream, cuts), frames);
}

TEST(FrameReader, AFrameOverTheCapStopsTheStreamBeforeItsPayloadIsHeld) {
  frame_reader reader(100);
  std::string stream = encode({{2, std::string(100, 'a')}});  // exactly the cap: fine
  std::string big;
  append_header(big, 2, 101);
  int frames = 0;
  auto count = [&](std::uint32_t, std::string_view) { ++frames; };
  ASSERT_TRUE(reader.feed(stream, count).has_value());
  EXPECT_EQ(frames, 1);
  // The header alone, split: refused as soon as its length is known, nothing buffered.
  ASSERT_TRUE(reader.feed(std::string_view(big).substr(0, 3), count).has_value());
  auto r = reader.feed(std::string_view(big).substr(3), count);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.code(), wire_errc::oversize);
  EXPECT_NE(r.error().message.find("101 bytes"), std::string::npos) << r.error().message;
  EXPECT_FALSE(reader.mid_frame());
  EXPECT_FALSE(reader.feed(stream, count).has_value());  // the stream is lost for good
  EXPECT_EQ(frames, 1);
}

// A length with its top bit set (the seed's decoder read it as a negative int) is just too big.
TEST(FrameReader, AHugeLengthIsOversizeNotNegative) {
  frame_reader reader;
  std::string h;
  append_header(h, 3, 0xffffff00U);
  auto r = reader.feed(h, [](std::uint32_t, std::string_view) { FAIL() << "no frame expected"; });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.code(), wire_errc::oversize);
}

TEST(FrameReader, APartialFrameIsHeldUntilItsRest) {
  frame_reader reader;
  const std::string stream = encode({{3, "abcdef"}});
  int frames = 0;
  ASSERT_TRUE(
      reader.feed(stream.substr(0, 10), [&](std::uint32_t, std::string_view) { ++frames; }).has_value());
  EXPECT_TRUE(reader.mid_frame());
  EXPECT_EQ(frames, 0);
  ASSERT_TRUE(reader
                  .feed(stream.substr(10),
                        [&](std::uint32_t id, std::string_view p) {
                          ++frames;
                          EXPECT_EQ(id, 3U);
                          EXPECT_EQ(p, "abcdef");
                        })
                  .has_value());
  EXPECT_EQ(frames, 1);
  EXPECT_FALSE(reader.mid_frame());
}

}  // namespace
