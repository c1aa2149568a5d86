// A map's blocks go once per connection (1006), and not at all to a client that announced the map's
// digest at login: end to end over real loopback sockets.
#include <scenert/net/client.hpp>
#include <scenert/net/front.hpp>
#include <scenert/net/map_blocks.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "front_fixture.hpp"

namespace scenert::net {
namespace {

using namespace test;

// The field stands on a map of its own (2), with one block at (5, 5)-(7, 7).
void field_on_its_own_map(scene_table& t) {
  t.maps.push_back(map_def{2, "field map", 32, 32, 8, 8, 1, 1, {cell_rect{5, 5, 3, 3}}});
  for (auto& d : t.scenes)
    if (d.id == field_id) d.map = 2;
}

scene_info info_of(client& c, scene_id scene) {
  return wait_for<scene_info>(c, [&](const scene_info& i) { return i.scene == scene; });
}

scene_info travel(client& c, std::uint32_t request_id, scene_id to) {
  EXPECT_TRUE(c.send(request{request_id, request_kind::transfer, to, 0, 0, 0}));
  EXPECT_EQ(wait_for<answer>(c, [&](const answer& a) { return a.request_id == request_id; }).code, "ok");
  return info_of(c, to);
}

bool blocked(const scene_info& i, std::uint32_t x, std::uint32_t y) {
  auto bits = decode_blocks(static_cast<std::uint32_t>(i.width), static_cast<std::uint32_t>(i.height),
                            i.block_rows, i.blocked);
  EXPECT_TRUE(bits.has_value()) << bits.error().message;
  const std::uint32_t bit = y * static_cast<std::uint32_t>(i.width) + x;
  return bits && (static_cast<unsigned char>((*bits)[bit / 8]) >> (bit % 8) & 1U) != 0;
}

std::size_t frame_bytes(const scene_info& i) {
  std::string out;
  append_frame(out, server_message{i});
  return out.size();
}

TEST(FrontMaps, ASecondVisitToAMapCarriesNoBlocksAndANewMapDoes) {
  server s({}, field_on_its_own_map);
  auto c = s.connect();
  ASSERT_TRUE(c->send(login{"ann", "", {}}));
  const scene_info town = info_of(*c, town_id);
  EXPECT_FALSE(town.blocks_omitted);
  EXPECT_NE(town.map_digest, 0U);
  EXPECT_TRUE(blocked(town, 0, 0));
  EXPECT_FALSE(blocked(town, 5, 5));

  const scene_info field = travel(*c, 1, field_id);  // a map it has not been sent: its blocks come
  EXPECT_FALSE(field.blocks_omitted);
  EXPECT_NE(field.map_digest, town.map_digest);
  EXPECT_TRUE(blocked(field, 5, 5));
  EXPECT_FALSE(blocked(field, 0, 0));

  const scene_info back = travel(*c, 2, town_id);  // sent on this connection: everything but the blocks
  EXPECT_TRUE(back.blocks_omitted);
  EXPECT_TRUE(back.block_rows.empty());
  EXPECT_TRUE(back.blocked.empty());
  EXPECT_EQ(back.map_digest, town.map_digest);
  EXPECT_EQ(back.width, 32);
  EXPECT_EQ(back.height, 32);
  EXPECT_EQ(back.area_size, 8);
  EXPECT_EQ(back.kind, "town");
  EXPECT_LE(frame_bytes(back), 1024U);
  EXPECT_TRUE(travel(*c, 3, field_id).blocks_omitted);
}

TEST(FrontMaps, AClientThatAnnouncesADigestIsNotSentThatMap) {
  server s({}, field_on_its_own_map);
  auto first = s.connect();
  ASSERT_TRUE(first->send(login{"ann", "", {}}));
  const std::uint64_t town_map = info_of(*first, town_id).map_digest;
  // A later connection (the same browser, say) holds the town's map and names it, among others.
  auto later = s.connect();
  ASSERT_TRUE(later->send(login{"ann-again", "", {42, town_map, ~std::uint64_t{0}}}));
  const scene_info town = info_of(*later, town_id);
  EXPECT_TRUE(town.blocks_omitted);
  EXPECT_EQ(town.map_digest, town_map);
  EXPECT_FALSE(travel(*later, 1, field_id).blocks_omitted);  // not announced: sent
}

TEST(FrontMaps, AnyDigestListIsSafe) {
  server s({}, field_on_its_own_map);
  {  // as many digests as allowed, none of them the town's: the town's blocks come
    auto c = s.connect();
    std::vector<std::uint64_t> digests(max_known_maps);
    for (std::size_t i = 0; i < digests.size(); ++i) digests[i] = i * 0x9e3779b97f4a7c15ULL;
    ASSERT_TRUE(c->send(login{"bob", "", digests}));
    EXPECT_FALSE(info_of(*c, town_id).blocks_omitted);
  }
  {  // one too many: a bad frame, then a good login still works
    auto c = s.connect();
    ASSERT_TRUE(c->send(login{"eve", "", std::vector<std::uint64_t>(max_known_maps + 1, 1)}));
    ASSERT_TRUE(c->send(login{"eve", "", {}}));
    EXPECT_FALSE(info_of(*c, town_id).blocks_omitted);
    EXPECT_GE(s.door->stats().bad_frames, 1U);
  }
}

}  // namespace
}  // namespace scenert::net
