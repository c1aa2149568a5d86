// A map's blocks as row runs against the bitset they stand for, and the map's digest.
#include <scenert/net/map_blocks.hpp>

#include <gtest/gtest.h>

#include <filesystem>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <scenert/nav/movingai.hpp>

namespace scenert::net {
namespace {

struct test_map {
  std::uint32_t width = 0, height = 0;
  block_bits bits;
  test_map(std::uint32_t w, std::uint32_t h)
      : width(w), height(h), bits((std::uint64_t{w} * h + 7) / 8, '\0') {}
  void block(std::uint32_t x, std::uint32_t y) {
    const std::uint64_t i = std::uint64_t{y} * width + x;
    bits[i / 8] = static_cast<char>(static_cast<unsigned char>(bits[i / 8]) | (1U << (i % 8)));
  }
  [[nodiscard]] bool blocked(std::uint32_t x, std::uint32_t y) const {
    const std::uint64_t i = std::uint64_t{y} * width + x;
    return (static_cast<unsigned char>(bits[i / 8]) >> (i % 8) & 1U) != 0;
  }
  void rect(std::uint32_t x, std::uint32_t y, std::uint32_t w, std::uint32_t h) {
    for (std::uint32_t yy = y; yy < y + h; ++yy)
      for (std::uint32_t xx = x; xx < x + w; ++xx) block(xx, yy);
  }
};

// Encodes, decodes, and expects the very bits back.
std::vector<std::uint32_t> round_trip(const test_map& m) {
  auto rows = encode_block_rows(m.width, m.height, m.bits);
  auto back = decode_block_rows(m.width, m.height, rows);
  EXPECT_TRUE(back.has_value()) << back.error().message;
  if (back) {
    EXPECT_EQ(*back, m.bits) << m.width << " x " << m.height;
  }
  return rows;
}

// Noise smoothed as cave generators do, drawn `scale` cells to a noise cell: irregular blocks as in
// Moving AI's game maps (scale 4), or fine-grained ones (scale 1).
test_map cave(std::uint32_t w, std::uint32_t h, std::uint32_t scale, std::mt19937& rng) {
  const std::uint32_t cw = w / scale, ch = h / scale;
  std::bernoulli_distribution wall(0.45);
  std::vector<std::uint8_t> cells(std::size_t{cw} * ch);
  for (auto& c : cells) c = wall(rng) ? 1 : 0;
  for (int pass = 0; pass < 4; ++pass) {
    auto next = cells;
    for (std::uint32_t y = 0; y < ch; ++y)
      for (std::uint32_t x = 0; x < cw; ++x) {
        int walls = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const auto nx = static_cast<std::int64_t>(x) + dx, ny = static_cast<std::int64_t>(y) + dy;
            walls +=
                nx < 0 || ny < 0 || nx >= cw || ny >= ch ? 1 : cells[static_cast<std::size_t>(ny * cw + nx)];
          }
        next[std::size_t{y} * cw + x] = walls >= 5 ? 1 : 0;
      }
    cells.swap(next);
  }
  test_map m(w, h);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x)
      if (cells[std::size_t{y / scale} * cw + x / scale] != 0) m.block(x, y);
  return m;
}

// Each cell blocked with probability `p`: Moving AI's random maps.
test_map noise(std::uint32_t w, std::uint32_t h, double p, std::mt19937& rng) {
  test_map m(w, h);
  std::bernoulli_distribution blocked(p);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x)
      if (blocked(rng)) m.block(x, y);
  return m;
}

// The form 1006 carries, decoded back to the very bits; its size on the wire.
std::size_t wire_round_trip(const test_map& m) {
  const auto form = shorter_form(m.width, m.height, m.bits, encode_block_rows(m.width, m.height, m.bits));
  EXPECT_TRUE(form.rows.empty() || form.bits.empty());
  auto back = decode_blocks(m.width, m.height, form.rows, form.bits);
  EXPECT_TRUE(back.has_value()) << back.error().message;
  if (back) {
    EXPECT_EQ(*back, m.bits);
  }
  return form.bits.empty() ? packed_size(form.rows) : form.bits.size();
}

TEST(MapBlocks, ARectangleIsAFewGroups) {
  test_map m(8, 4);
  m.rect(2, 1, 3, 2);
  // One free row, two rows of 2 free then 3 blocked, one free row.
  EXPECT_EQ(round_trip(m), (std::vector<std::uint32_t>{1, 0, 2, 2, 2, 3, 1, 0}));
  test_map corner(4, 2);
  corner.rect(0, 0, 1, 1);
  corner.rect(3, 1, 1, 1);
  EXPECT_EQ(round_trip(corner), (std::vector<std::uint32_t>{1, 2, 0, 1, 1, 2, 3, 1}));
  EXPECT_EQ(round_trip(test_map(5, 7)), (std::vector<std::uint32_t>{7, 0}));  // no blocks: one group
}

TEST(MapBlocks, RandomBlockSetsComeBackBitForBit) {
  std::mt19937 rng(20261127);
  for (int trial = 0; trial < 300; ++trial) {
    const auto w = std::uniform_int_distribution<std::uint32_t>(1, 70)(rng);
    const auto h = std::uniform_int_distribution<std::uint32_t>(1, 70)(rng);
    test_map m(w, h);
    const double density = std::uniform_real_distribution<double>(0, 1)(rng);
    std::bernoulli_distribution blocked(density);
    if (trial % 3 == 0) {  // rectangles, as the tables' maps hold
      for (int r = std::uniform_int_distribution<int>(0, 4)(rng); r > 0; --r) {
        const auto x = std::uniform_int_distribution<std::uint32_t>(0, w - 1)(rng);
        const auto y = std::uniform_int_distribution<std::uint32_t>(0, h - 1)(rng);
        m.rect(x, y, std::uniform_int_distribution<std::uint32_t>(1, w - x)(rng),
               std::uniform_int_distribution<std::uint32_t>(1, h - y)(rng));
      }
    } else {
      for (std::uint32_t y = 0; y < h; ++y)
        for (std::uint32_t x = 0; x < w; ++x)
          if (blocked(rng)) m.block(x, y);
    }
    round_trip(m);
  }
}

TEST(MapBlocks, TheWireFormStaysSmallForRectanglesAndIrregularMaps) {
  test_map big(1024, 1024);  // 128 KiB as a bitset
  big.rect(100, 100, 200, 50), big.rect(600, 700, 30, 300), big.rect(0, 1000, 1024, 24);
  EXPECT_LE(round_trip(big).size(), 40U);
  EXPECT_LE(wire_round_trip(big), 80U);
  std::mt19937 rng(7);
  const test_map caves = cave(512, 512, 4, rng);  // 32 KiB as a bitset
  round_trip(caves);
  EXPECT_LT(wire_round_trip(caves), caves.bits.size() / 4);
  // Fine-grained blocks and noise take about a byte per run: the bitset goes instead.
  for (const test_map& m : {cave(512, 512, 1, rng), noise(512, 512, 0.4, rng)}) {
    round_trip(m);
    EXPECT_EQ(wire_round_trip(m), m.bits.size());
  }
}

TEST(MapBlocks, EitherFormIsCheckedAgainstTheMapsSize) {
  auto bad = decode_blocks(4, 4, {}, std::string(3, '\0'));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "blocked bits: 3 bytes (and 0 row runs) for a map of 4 x 4 cells");
  const std::vector<std::uint32_t> rows{4, 0};
  EXPECT_FALSE(decode_blocks(4, 4, rows, std::string(2, '\0')).has_value());  // both forms: which one?
  EXPECT_EQ(*decode_blocks(4, 4, {}, std::string("\x01\x80", 2)), std::string("\x01\x80", 2));
  EXPECT_EQ(*decode_blocks(4, 4, rows, ""), std::string(2, '\0'));
}

TEST(MapBlocks, AMovingAiMapComesBackBitForBit) {
  // A path, not std::string's operator+: g++ 12 sees a false out-of-bounds copy in that one here.
  const auto file = std::filesystem::path(SCENERT_SOURCE_DIR) / "tests/data/movingai/arena.map";
  auto arena = nav::load_movingai_map(file.string());
  ASSERT_TRUE(arena.has_value()) << arena.error().message;
  test_map m(arena->width, arena->height);
  for (std::uint32_t y = 0; y < m.height; ++y)
    for (std::uint32_t x = 0; x < m.width; ++x)
      if (arena->blocked[std::size_t{y} * m.width + x] != 0) m.block(x, y);
  round_trip(m);
  EXPECT_LE(wire_round_trip(m), m.bits.size());
}

TEST(MapBlocks, MalformedRowsAreRefusedWithTheReason) {
  auto problem = [](std::uint32_t w, std::uint32_t h, std::vector<std::uint32_t> rows) {
    auto r = decode_block_rows(w, h, rows);
    EXPECT_FALSE(r.has_value());
    return r ? std::string("decoded") : r.error().message;
  };
  EXPECT_EQ(problem(4, 2, {1, 3, 0, 1}), "block rows: the group at value 0 is cut short");
  EXPECT_EQ(problem(4, 2, {2}), "block rows: the group at value 0 is cut short");
  EXPECT_EQ(problem(4, 2, {0, 0, 2, 0}), "block rows: value 0: 0 rows from row 0 of 2");
  EXPECT_EQ(problem(4, 2, {1, 0, 2, 0}), "block rows: value 2: 2 rows from row 1 of 2");
  EXPECT_EQ(problem(4, 2, {2, 2, 3, 2}), "block rows: value 3: the row's runs reach x = 5, past the width 4");
  EXPECT_EQ(problem(4, 2, {2, 3, 1, 0, 1}), "block rows: value 3: an empty run after the first of its row");
  EXPECT_EQ(problem(4, 2, {1, 0}), "block rows: cover 1 rows of 2");
  EXPECT_EQ(problem(4, 2, {}), "block rows: cover 0 rows of 2");
  EXPECT_EQ(problem(0, 2, {2, 0}), "block rows: a map of 0 x 2 cells (1 to 1073741824 allowed)");
  EXPECT_EQ(problem(65536, 65536, {65536, 0}),
            "block rows: a map of 65536 x 65536 cells (1 to 1073741824 allowed)");
  EXPECT_EQ(problem(4, 2, {1, 0xffffffffU, 1}), "block rows: the group at value 0 is cut short");
  EXPECT_EQ(problem(4, 2, {0xffffffffU, 0}), "block rows: value 0: 4294967295 rows from row 0 of 2");
}

TEST(MapBlocks, AnyRowsDecodeOrFailNeverCrash) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<std::uint32_t> rows(std::uniform_int_distribution<std::size_t>(0, 12)(rng));
    for (auto& v : rows)
      v = trial % 2 == 0 ? std::uniform_int_distribution<std::uint32_t>(0, 6)(rng)
                         : static_cast<std::uint32_t>(rng());
    (void)decode_block_rows(std::uniform_int_distribution<std::uint32_t>(1, 6)(rng),
                            std::uniform_int_distribution<std::uint32_t>(1, 6)(rng), rows);
  }
}

TEST(MapBlocks, TheDigestIsStableAndCoversEveryStaticValue) {
  test_map m(32, 32);
  m.rect(0, 0, 2, 2);
  const auto rows = encode_block_rows(m.width, m.height, m.bits);
  const map_shape shape{32, 32, 8, 8, 1, 1};
  // The same on every build and machine: clients keep maps under it across releases.
  EXPECT_EQ(map_digest(shape, rows), 0xd11db2bed8cd9489ULL) << std::hex << map_digest(shape, rows);
  EXPECT_EQ(map_digest(shape, rows), map_digest(shape, encode_block_rows(m.width, m.height, m.bits)));
  const std::uint64_t d = map_digest(shape, rows);
  for (map_shape other :
       {map_shape{33, 32, 8, 8, 1, 1}, map_shape{32, 33, 8, 8, 1, 1}, map_shape{32, 32, 4, 8, 1, 1},
        map_shape{32, 32, 8, 4, 1, 1}, map_shape{32, 32, 8, 8, 2, 1}, map_shape{32, 32, 8, 8, 1, 2}})
    EXPECT_NE(map_digest(other, rows), d);
  m.block(31, 31);
  EXPECT_NE(map_digest(shape, encode_block_rows(m.width, m.height, m.bits)), d);
}

TEST(MapBlocks, DigestsTravelAsEightBytesMostSignificantFirst) {
  EXPECT_EQ(digest_bytes(0x0102030405060708ULL), std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  EXPECT_EQ(*digest_of_bytes(digest_bytes(0xfedcba9876543210ULL)), 0xfedcba9876543210ULL);
  auto bad = digest_of_bytes("1234567");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "a map digest of 7 bytes: 8 expected");
}

}  // namespace
}  // namespace scenert::net
